'''The rule API: every hook a rule's code may define, in one place.

A rule's code is a Starlark module (Python-like, deterministic, no I/O, no ``load``).
The engine calls the functions it defines by name. Every function receives plain data
and returns plain data; nothing a rule returns can touch the server except through the
effects listed in :data:`EFFECTS`, which the kernel validates.

Rules are asked in **precedence order**: by default their ids in natural order ("101"
before "1023", "G.2" before "G.10"), which a rule may change with the
``transform_rule_order`` hook. For declarations the first rule to declare a name wins.

The ``game`` argument
=====================
Every hook except the declarations receives ``game``, a read-only picture of the state
(its values are frozen: copy a part with ``dict()`` or ``list()`` to change it)::

    game = {
      "now": "2026-03-01T12:00:00Z", "now_ts": 1772366400,   # the event's time
      "seq": 42,                        # sequence number of the last event
      "random": 187512312,              # deterministic: from the game seed and seq
      "settings": {...},                # ruleset.toml [settings] + the game's settings
      "vars": {"turn": "Anna"},         # per-game variables
      "players": {"Anna": {"status": "active", "joined": ISO, "vars": {"points": 3}}},
      "player_order": ["Anna", "Bea"],  # order of joining
      "active_players": ["Anna", "Bea"],
      "offices": {"King": "Anna"},
      "rules": [{"id": "101", "title": "...", "attributes": {"mutable": False},
                 "revision": 0, "has_code": True,
                 "text": "...", "history": [{"change": "amend", "date": "2026-02-01",
                                             "cause": {"kind": "proposal", "proposal": 7,
                                                       "author": "Anna"}}]}],
                                        # in precedence order; text and history are left
                                        # out, except in queries, when the ruleset's
                                        # setting view_rule_text is false
      "repealed_rules": [{"id": "206", "title": "...", "attributes": {...},
                          "last_change": {...history entry...}}],
      "proposals": {"3": {"number": 3, "label": "p3", "author": "Anna", "status": "open",
                          "submitted": ISO, "votes": {"Bea": {"choice": "for", "time": ISO}},
                          "changes": [...], "data": {...}, "title": "", "text": ""}},
      "timers": [{"id": "t3", "name": "end_of_turn", "at": ISO, "data": {}, "rule": "106"}],
      "assets": {"gladiator": {"Spartaco": {"owner": "Anna", "data": {"magic": "12345"}}}},
      "cases": {"3": {...a case, see "Cases"...}},
      "winners": [], "ended": False,
      "this_rule": "109",               # the rule whose code is running
    }

Proposals' statuses are "open" or whatever outcome a rule resolved them with ("adopted",
"rejected", ...). Resolved proposals carry their ``tally``; only the most recent 60
resolved proposals are in the view, open ones always are.

Built-in functions available to rule code besides Starlark's own: ``round(x)`` (half away
from zero), ``floor(x)``, ``ceil(x)``, ``transform(name, value, context)`` which passes
``value`` through every rule's ``transform_<name>`` in precedence order, and ``std``, the
standard library (:data:`STD`, below).

The names a rule's code may define
==================================
Checked when code is proposed or a game is created (a misspelt hook would silently never
be called): the declarations ``actions``, ``variables``, ``offices``, ``notices``,
``reacts_to``; ``check`` and ``check_<action>``; ``due``; ``invariants``;
``on_<event type>`` for a type in :data:`EVENTS` and ``on_action_<action>``;
``transform_<name>``; ``query_<name>``. ``<action>`` may be any action's name (actions are
declared by rules, and play may add some).
Every other top-level function is a helper and its name starts with ``_``. An unknown name
is refused with the nearest known one ("on_vote_casted: there is no event type
'vote_casted' to react to (did you mean on_vote_cast?)").

Proposal outcomes
=================
One vocabulary for every ruleset (``std.OUTCOMES``): a resolved proposal's ``status`` is

- ``adopted`` — it passed (its changes apply unless resolved with ``apply`` False);
- ``rejected`` — it did not pass: the votes, a veto, a rule that forbids it;
- ``failed_quorum`` — too few voted for the vote to count at all (where a ruleset
  distinguishes this from a rejection, as Agora does);
- ``withdrawn`` — it left the vote without being decided: its author left or lost the turn,
  or it was replaced by a new wording;
- ``void`` — it was decided but the decision does not stand: annulled by a judge, or it
  lapsed because the rule it changes was changed first.

Why is in its own field, ``reason`` (``std.REASONS``: ``vote``, ``veto``, ``quorum``,
``deferral``, ``expired``, ``author``, ``ruling``, ``tie``, or a ruleset's own word such
as ``reworded``, ``superseded``, ``lapsed``, ``turn_ended``, ``author_left``). Resolve
with ``std.resolve(number, "rejected", reason="veto", tally=...)``, which refuses an
outcome outside the vocabulary where it is called. The view shows ``status`` and
``reason`` for every resolved proposal.

Cases
=====
The docket of disputes, a noun of the game like proposals: ``game["cases"]`` (number as
text → case; ``std.cases(game, statuses=None)``, ``std.case(game, number)``; the cases
not closed are always there, of the closed ones the last 60)::

    {"number": 3, "question": "Is a hat a lawful rule-change?",
     "concerns": [{"kind": "rule", "id": "212"}],   # rule | proposal | player | event
     "parties": ["Anna", "Bruno"], "opened_by": "Carla",   # None: a rule opened it
     "opened": ISO, "status": "open",               # open | judged | appealed | closed
     "judge": "Bruno",                              # None until a rule assigns one
     "judgment": {"judgment": "VERO", "meaning": "true", "reasons": "...",
                  "rules": [{"rule": "212", "revision": 2}], "by": "Bruno", "at": ISO},
     "earlier": [{...a judgment..., "superseded": "appealed", "when": ISO}],
     "steps": [{"step": "opened", "by": "Carla", "at": ISO}, {"step": "assigned",
                "by": None, "rule": "212", "judge": "Bruno", "at": ISO}, ...],
     "data": {}}                                    # the rules' own keys (update_case)

The kernel keeps the record and numbers the cases; the rules decide everything else. A
player opens a case with an action of kind ``case`` (``question``; its parameters of type
``rule``, ``proposal``, ``player``, ``event`` are what it concerns, a ``list`` named
``parties`` its parties, the rest its data) or a rule with ``std.open_case``. A rule gives
it a judge (``std.assign_judge``: rotating judges with ``std.next_in_order`` /
``std.before_in_order``). The judge judges with an action of kind ``judge`` (``case``,
``judgment``, ``reasons?``, ``rules?``): refused unless the case is open and, when it has
a judge, the actor is that judge; the word is matched against the action's ``choices``
like a vote's and recorded as the ruleset's word, with its ``meaning``; the rules named
are stamped with their revision. A decree is ``std.judge_case``. Anyone the action admits
appeals a judged case (kind ``appeal``); the rules react (``on_case_appealed``): reopen
it (``std.reopen_case``: its judgment goes to ``earlier``), give it to another judge, or
close it (``std.close_case``: the judgment stands). What a judgment does beyond its holding
(a fine, an annulled proposal, a correction of the record) is the rules' reaction to
``case_judged`` or ``case_closed``.

Notices between rules
=====================
A rule that emits ``notice`` effects with a ``kind`` declares those kinds::

    def notices():
        return ["round_end", "round_start"]

A notice of an undeclared kind aborts the rule's call (``rule_code_aborted``). A notice
without a kind is a plain message to the players.

Event schema versions
=====================
Every event type has a schema version in :mod:`scriba.kernel.registry`; an event records
it in its payload as ``"v"`` when above 1 (no ``"v"`` means version 1, as in every log
written so far). When a payload's shape changes, the type's version goes up and
:mod:`scriba.kernel.upgrade` gains the step from the old version, applied when old events
are read: a game that runs for years keeps replaying.

Limits (:mod:`scriba.kernel.limits`; who pays for what: :mod:`scriba.rulecode.cost`):
each call may run 2,000 steps — a step is about a thousand loop iterations or function
calls, or a call of a helper (``std.*``, ``transform``, ``round``, ``floor``, ``ceil``),
plus a step per ten values and per 4,096 characters the helper is given or gives back,
and as much for what the call returns — and 2 s; in all its calls of one command a rule
may spend a fifth of the command's budget (20,000 steps, 2 s), and it is owed an even
part of it whatever the other rules spend. A call may add 512 MiB to its worker's memory
(a rule's top-level code 32 MiB) and return at most 16 MiB of data. An aborted call is
recorded in the game log as ``rule_code_aborted`` with the rule and the reason; the game
goes on as if that rule had returned nothing (a ``transform`` goes on without it).
'''

from __future__ import annotations

from typing import Any

from scriba.kernel.effect_schema import EFFECTS as EFFECT_TABLE
from scriba.kernel.effect_schema import reference, std_signature
from scriba.kernel.registry import EVENT_TYPES

# --- declarations (no arguments; called once per version of the code) ----------------


def actions() -> list[dict[str, Any]]:
    """Actions this rule adds to the game.

    Each action: ``name``; ``kind`` — ``"propose"`` (creates a proposal from ``changes``,
    with optional ``label``, ``title``, ``text``), ``"vote"`` (a vote on ``proposal`` with
    ``choice``), ``"join"``, ``"leave"``, ``"case"``, ``"judge"``, ``"appeal"`` (see
    "Cases") or ``"plain"`` (the default: only recorded, rules
    react to it); ``params`` — extra parameters, name → type (``str``, ``int``,
    ``number``, ``bool``, ``player``, ``proposal``, ``changes`` (rule changes, checked
    like a proposal's: known rules, code that compiles), ``list``, ``dict``, ``any``,
    ``case`` (an existing case's number), ``rule`` (a rule's id, in force or not),
    ``event`` (the number of an event of the game's record),
    ``asset:KIND`` (the key of one of the game's assets of that kind, e.g.
    ``asset:judgment``: a page offers the ones that exist and your checks accept); a
    trailing ``?`` makes it optional); ``who`` — ``"player"`` (default), ``"anyone"``,
    ``"office:NAME"``, or a list of these; for votes, ``choices`` maps the ruleset's own
    words to ``for`` / ``against`` / ``abstain`` (or other outcomes a rule understands),
    for judgments the ruleset's words to their meanings (``{"VERO": "true"}``);
    ``help`` — a line for players; ``label`` — the action's name for players and
    ``param_labels`` — its parameters' (each a text, or language → text), for an action
    the ruleset's own labels do not name; ``sealed`` — ``True`` for a move given to the
    referee alone (a number bid, a secret ballot): the command and every event it causes
    (``event["sealed"]`` tells your reactions so) are shown only to its player and the
    officer — in letters, digests, the chronicle, the feed, pages and the API — until a
    rule returns ``std.reveal(action, proposal=None)`` (event ``moves_revealed``), which
    shows everyone that action's sealed moves made so far (on that proposal only, if
    given). The state and the log keep everything; only what readers see waits.

    Example::

        def actions():
            return [
                {"name": "propose", "kind": "propose"},
                {"name": "vote", "kind": "vote",
                 "choices": {"favorevole": "for", "contrario": "against"}},
                {"name": "pass", "help": "Declare you have no proposal this turn"},
                {"name": "decree", "who": "office:King", "params": {"text": "str"}},
            ]
    """
    return []


def variables() -> list[dict[str, Any]]:
    """Variables this rule keeps: ``name``, ``scope`` ("player" or "game"), ``initial``.

    New players get every declared player variable at its initial value; a rule enacted
    later adds its variables to everyone. Optional ``label`` maps a language to a name;
    ``"private": True`` shows a player's value only to that player and the officer (a
    game variable's only to the officer) on pages, in the API and in the chronicle; rule
    code reads it as any other.

    Example::

        def variables():
            return [{"name": "points", "scope": "player", "initial": 0,
                     "label": {"it": "punti"}},
                    {"name": "turn", "scope": "game", "initial": None}]
    """
    return []


def offices() -> list[dict[str, Any]]:
    """Offices this rule creates: ``name`` and an optional ``label`` per language.

    Example::

        def offices():
            return [{"name": "King", "label": {"it": "Re"}}]
    """
    return []


def notices() -> list[str]:
    """The ``kind`` of every notice this rule emits; rules react to them in ``on_notice``.

    A notice of a kind its rule does not declare aborts the call. Several rules may
    declare the same kind.

    Example::

        def notices():
            return ["round_end"]

        def on_timer_fired(game, event):
            return [std.notice("round_end", "The round is over.", round=3)]
    """
    return []


def reacts_to() -> dict[str, dict[str, list[Any]]]:
    """The events this rule's ``on_<event>`` hooks are asked about, and the commands its
    ``check`` hooks are asked about, when not all of them.

    For each event type named, the rule is asked only about events whose every listed
    field (looked for in the event's payload, then among ``actor``, ``time``...) has one
    of the values listed, or is a number within the bounds given (``above``,
    ``at_least``, ``below``, ``at_most``); event types not named are all asked about. A
    rule that cares about one variable, or one kind of notice, or a score past a mark,
    says so, and the kernel does not ask it about the others (every call costs: a long
    reaction chain makes many). A ``var_set`` by an amount carries the resulting
    ``value`` too.

    Example::

        def reacts_to():
            return {"var_set": {"name": ["points"], "value": {"above": 100}},
                    "notice": {"kind": ["round_end"]}}

        def on_var_set(game, event):   # only when someone's points go over 100
            ...

    The entry ``"command"`` does the same for ``check`` and ``check_<action>``: its
    fields are the command's ``kind``, ``action`` and ``actor``. A rule about proposals
    says so, instead of opening its check with ``if command["kind"] != "propose"``, and
    is not asked about every vote, nor about every choice a player is offered::

        def reacts_to():
            return {"command": {"kind": ["propose"]}}

        def check(game, command):   # only for commands that propose
            ...
    """
    return {}


# --- checks ---------------------------------------------------------------------------


def check(game: dict[str, Any], command: dict[str, Any]) -> str | None:
    """May this command happen? Return None to allow, or a message that refuses it.

    ``command`` is ``{"actor", "action", "kind", "args"}`` with arguments already checked
    against the declaration (a vote's ``choice`` is canonical, ``proposal`` a number).
    The message is shown to the player as written: write it in the ruleset's language.

    When the command came with others in one letter (an e-mail, a form's submission),
    ``command["letter"]`` is ``{"id", "commands"}``: a stable key of the letter and its
    commands as ``[{"action", "args"}]`` in the order written (their short arguments
    only: no proposal's text). ``std.letter_commands(command, action)`` reads it (a
    command that came alone is a letter of itself). The command's event carries the same
    key as ``event["letter"]``, so a reaction can tell which proposals came in one letter::

        def check_vote(game, command):
            voted = [c["args"].get("proposal") for c in std.letter_commands(command, "vote")]
            ...

    Checks are also asked **before** a player chooses the arguments, to show them what
    they may do now: then ``command["probe"]`` is true and ``command["args"]`` holds only
    what is chosen so far — nothing, or one listed parameter (a proposal, a player, a
    vote's choice), asked once for each value it may take. An unset argument means "not
    chosen yet": refuse only what is already known to be refused (not your turn, already
    voted on this proposal), and read arguments with ``std.arg(command, name)``, which
    gives None (or a default) for an unset one. A refusal hides the action, or that
    value, from the player; a check that fails while probing hides nothing (the command
    is checked in full when it is sent). Probing applies nothing.

    Example::

        def check(game, command):
            if command["kind"] == "propose" and game["vars"]["turn"] != command["actor"]:
                return "Non è il tuo turno."
            return None

    ``check_<action>(game, command)`` is the same for the commands of one action only:
    a rule is asked about a command when it defines ``check`` or that action's
    ``check_<action>``; defining both, ``check`` is asked first and its refusal wins,
    then ``check_<action>``. Instead of ``if command["action"] == "roll": ...``::

        def check_roll(game, command):
            if game["vars"]["rolled"]:
                return "Hai già tirato il dado."
            return None
    """
    return None


def due(game: dict[str, Any]) -> list[dict[str, Any]]:
    """The moves players owe now: a list of ``std.due(action, player, until=None,
    why="")`` — the action, who must take it, by when (an ISO time, e.g. a timer's
    ``at``) and why, in the ruleset's language. Asked when a player's page, ``scriba
    actions`` or the API lists what they may do: an owed action they may take comes
    first, with its deadline and the sentence. Owing is shown, never enforced: what
    happens to a player who does not move is the rules' own doing (a timer, a penalty).

    Example (rule 202 of Suber: the mover rolls once the vote is over)::

        def due(game):
            if game["vars"].get("turn_phase") == "roll":
                return [std.due("roll", game["vars"]["turn"],
                                why = "The vote is over: roll the die.")]
            return []
    """
    return []


# --- reactions ------------------------------------------------------------------------


def on_EVENT(game: dict[str, Any], event: dict[str, Any]) -> list[dict[str, Any]]:  # noqa: N802
    """React to an event by returning effects. Define ``on_<event type>`` for each type.

    ``event`` is ``{"type", "seq", "time", "time_ts", "actor", ...payload}``. The game
    view already includes the event. The event types and their payloads are listed in
    :data:`EVENTS` (from :mod:`scriba.kernel.registry`, the one list the kernel and the
    sandbox use too); a function ``on_<name>`` for a name not there is refused when the
    code is proposed. ``proposal_resolved``: the rule changes of an applied proposal follow
    as ``rule_changed`` events after the reactions to this one.

    Example (a turn ends when everybody has voted)::

        def on_vote_cast(game, event):
            p = game["proposals"][str(event["proposal"])]
            if len(p["votes"]) < len(game["active_players"]):
                return []
            ayes = len([v for v in p["votes"].values() if v["choice"] == "for"])
            adopted = ayes * 2 > len(game["active_players"])
            return [{"effect": "resolve_proposal", "proposal": p["number"],
                     "outcome": "adopted" if adopted else "rejected",
                     "tally": {"for": ayes}}]

    ``on_action_<action>(game, event)`` reacts to the ``action_taken`` event of one
    action only (the one event type a command's action is recorded in; a vote, a
    proposal, joining and leaving make their own events). A rule is asked about an
    ``action_taken`` when it defines ``on_action_taken`` or that action's hook, less what
    its ``reacts_to()`` leaves out, at its place in the rules' order; defining both, the
    effects of ``on_action_taken`` come first, then those of ``on_action_<action>``. An
    action named ``taken`` is reached through ``on_action_taken`` alone. Instead of
    ``if event["action"] == "roll": ...``::

        def on_action_roll(game, event):
            return [std.set_var("rolled", True), std.add_var("points", 1,
                                                             player=event["actor"])]
    """
    return []


# --- transforms -----------------------------------------------------------------------


def transform_NAME(game: dict[str, Any], value: Any, context: Any) -> Any:  # noqa: N802
    """Pass a value through every rule in precedence order; return the new value.

    The rule asked last (the lowest in precedence) sees what every other rule made of
    the value: a transform should adjust the value it is given (double it, add to it)
    rather than replace it outright, or it overrides rules that take precedence.

    The kernel asks three: ``proposal_number`` (default: last number + 1, or the
    ``first_proposal`` setting; context {author, args}), ``rule_number`` (the id of a rule
    a proposal enacts without naming one; default: highest numeric id + 1; context
    {proposal, change, taken}) and ``rule_order`` (the precedence order: a list of every
    rule id in force; it is cached per version of the rules, so it may depend only on the
    rules in force, their attributes and code — record a ruling about precedence as a rule
    attribute with ``set_attribute``). Rules may define and ask any others with the built-in
    ``transform(name, value, context)``, e.g. a vote's weight.

    Example (the King's vote counts twice)::

        def transform_vote_weight(game, value, context):
            if game["offices"].get("King") == context["player"]:
                return value * 2
            return value
    """
    return value


# --- queries --------------------------------------------------------------------------


def query_NAME(game: dict[str, Any], args: dict[str, Any]) -> Any:  # noqa: N802
    """Answer a question about the game; the first rule that answers (not None) wins.

    Interfaces ask ``query_status`` for a one-line summary to show players (whose turn,
    which period, deadlines); rulesets may add more, asked by name from the CLI.

    Example::

        def query_status(game, args):
            return "Turno di " + game["vars"]["turn"]
    """
    return None


# --- invariants -----------------------------------------------------------------------


def invariants(game: dict[str, Any]) -> list[str]:
    """What the ruleset says must always hold and does not hold now: a list of
    statements in the game's language (an empty list: all holds). Never enforced during
    play (a rule that must hold is the rules' own doing, a check or a reaction): the
    proposal lab (``scriba simulate``, "Test this proposal") asks every rule defining it
    after every turn its bots play and reports each statement once, with the turn it
    first showed — a proposal that would break one is found before the vote. A hook that
    fails or answers something else than a list of texts says nothing.

    Example (DecameroNomic, rule 2300: the Crown's treasury is zero or positive)::

        def invariants(game):
            if game["vars"].get("crown_treasury", 0) < 0:
                return ["Il Tesoro della Corona non è mai negativo."]
            return []
    """
    return []


# --- effects (generated from the kernel's table, kernel/effect_schema.py) ------------
# Each: its fields ("?": may be left out), the event it becomes, what it does.

EFFECTS: dict[str, str] = {name: reference(effect) for name, effect in EFFECT_TABLE.items()}

# --- rule changes (in proposals' "changes" and in change_rules) -----------------------

CHANGES: dict[str, str] = {
    "enact": '{"enact": {"title": "...", "text": "...", "code": "...", "attributes": {...},'
             ' "rule": "optional id"}}  (without an id the rule_number transform decides)',
    "repeal": '{"repeal": {"rule": "206"}}',
    "amend": '{"amend": {"rule": "203", "text": "...", "code": "...", "title": "..."}}'
             "  (omitted parts stay; code \"\" removes the code)",
    "amend_paragraph": '{"amend_paragraph": {"rule": "100", "paragraph": "b", "text": "..."}}'
                       '  (text None deletes the paragraph; "add": True inserts after it;'
                       ' an optional "code" replaces the rule\'s code in the same amendment)',
    "transmute": '{"transmute": {"rule": "109", "mutable": True}}  (sets attributes)',
    "set_attribute": '{"set_attribute": {"rule": "2400", "name": "owner", "value": "Anna"}}',
    "retitle": '{"retitle": {"rule": "201", "title": "..."}}',
    "renumber": '{"renumber": {"rule": "201", "to": "301"}}',
    "reenact": '{"reenact": {"rule": "206", "text": "optional new text"}}',
}

# --- event types (generated from the kernel's registry) --------------------------------

EVENTS: dict[str, str] = {
    name: "{" + t.fields + "}" + (f" — {t.doc}" if t.doc else "")
    + ("" if t.dispatched else " (not dispatched: no on_ hook)")
    for name, t in EVENT_TYPES.items()
}

# --- std: the standard library (rulecode/std), predeclared as ``std`` ----------------
# A game keeps the std version it was created with (settings["std"]); the helpers check
# their arguments where they are called: a wrong argument aborts the call with
# "std.<name>: ..." and the rule's line, e.g.
#     error: StdError: std.add_var: amount must be number, got 'two'
#      --> rule.star:8:12
# Most are native (charged a step and more by the size of what they handle); the lookups
# in the game's big structures (rule, proposal, open_proposals) are Starlark, charged in
# steps like the rule's own code: a lookup by number costs the same in any game. Every
# helper returns a copy the rule may change.

STD: dict[str, str] = {
    # finding rules, players and proposals
    "find": "std.find(items, value, key=\"number\") -> the first dict of items whose key"
            " equals value, or None:  std.find(game[\"vars\"][\"decrees\"], 3)",
    "replace": "std.replace(items, value, changes, key=\"number\") -> items with that dict"
               " updated:  std.replace(decrees, 3, {\"status\": \"revoked\"})",
    "rule": "std.rule(game[\"rules\"], \"101\") -> the rule in force, or None",
    "proposal": "std.proposal(game[\"proposals\"], ref) -> by number or label, or None",
    "open_proposals": "std.open_proposals(game[\"proposals\"]) -> open ones, by number",
    # turn order
    "next_player": "std.next_player(order, current, eligible=None, skip=None) -> [player,"
                   " wrapped]:  std.next_player(transform(\"turn_order\","
                   " game[\"player_order\"], {}), game[\"vars\"][\"turn\"],"
                   " game[\"active_players\"])",
    "reorder": "std.reorder(items, ordered) -> items with the places of ordered's members"
               " refilled in ordered's order (a rule ordering its own class of rules)",
    "next_in_order": "std.next_in_order(order, after, skip=[]) -> the player after `after`"
                     " in order (cyclically) not in skip, or None:  a rotating judge,"
                     "  std.next_in_order(game[\"player_order\"], last_judge, [mover])",
    "before_in_order": "std.before_in_order(order, before, skip=[]) -> the player before"
                       " `before` in order (cyclically) not in skip, or None:  Suber 212's"
                       " judge,  std.before_in_order(game[\"player_order\"], mover)",
    # cases
    "cases": "std.cases(game, statuses=None) -> the cases, oldest first (only those whose"
             " status is in statuses):  std.cases(game, [\"open\", \"appealed\"])",
    "case": "std.case(game, number) -> the case with this number (int or text), or None",
    # votes and tallies
    "vote_word": "std.vote_word(word, {\"sì\": \"for\", \"no\": \"against\"}) -> the"
                 " choice, or None (case and spaces ignored)",
    "tally": "std.tally(votes, weights=None, voters=None, default=1) -> {\"for\", \"against\","
             " \"abstain\", \"voters\", \"weight\"}:  std.tally(p[\"votes\"],"
             " weights={\"Anna\": 2})",
    "passes": "std.passes(tally, ratio=0.5, strict=True, quorum=0, abstain_counts=False)"
              " -> bool:  std.passes(t, ratio=2/3, strict=False, quorum=3)",
    # rule changes
    "changes": "std.changes(raw) -> changes as {\"type\": ...} whether written so or as"
               " {TYPE: {...}}; malformed ones left out",
    "touched": "std.touched(raw) -> ids of the existing rules the changes touch",
    "enact": "std.enact(text, title=\"\", code=None, rule=None, attributes=None) -> a change",
    "repeal": "std.repeal(rule) -> a change",
    "amend": "std.amend(rule, text=None, title=None, code=None) -> a change",
    # what a player may do now
    "arg": "std.arg(command, name, default=None) -> a check's argument, or default while it"
           " is not chosen yet:  std.arg(command, \"proposal\")",
    "due": "std.due(action, player, until=None, why=\"\") -> a move owed, for due(game):"
           "  std.due(\"roll\", mover, why=\"The vote is over: roll the die.\")",
    "letter_commands": "std.letter_commands(command, action=None) -> the commands of the"
                       " letter this one came in, [{\"action\", \"args\"}] in order:"
                       "  std.letter_commands(command, \"vote\")",
    # constants
    "VERSION": "std.VERSION — the std version of this module's definitions",
    "OUTCOMES": "std.OUTCOMES — the proposal outcomes (see \"Proposal outcomes\")",
    "REASONS": "std.REASONS — the common reasons",
    "CHOICES": "std.CHOICES — [\"for\", \"against\", \"abstain\"]",
}


# effects: checked constructors of the dicts in EFFECTS (same names and fields; required
# fields positional, the rest by keyword; None leaves an optional field out)
STD.update({name: std_signature(effect, name) for effect in EFFECT_TABLE.values()
            for name in (effect.name, *effect.std_names)})

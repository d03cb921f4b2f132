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
Every hook except the declarations receives ``game``, a read-only copy of the state::

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
      "winners": [], "ended": False,
      "this_rule": "109",               # the rule whose code is running
    }

Proposals' statuses are "open" or whatever outcome a rule resolved them with ("adopted",
"rejected", ...). Resolved proposals carry their ``tally``; only the most recent 60
resolved proposals are in the view, open ones always are.

Built-in functions available to rule code besides Starlark's own: ``round(x)`` (half away
from zero), ``floor(x)``, ``ceil(x)``, and ``transform(name, value, context)`` which
passes ``value`` through every rule's ``transform_<name>`` in precedence order.

Limits: each call may run a bounded number of steps (a deterministic step budget, a few
tenths of a second of work), use a bounded amount of memory (1 GiB of address space),
return at most 16 MiB of data, and is killed after a wall-clock limit (10 s). An aborted call is
recorded in the game log as ``rule_code_aborted`` with the rule and the reason; the game
goes on as if that rule had returned nothing.
'''

from __future__ import annotations

from typing import Any

# --- declarations (no arguments; called once per version of the code) ----------------


def actions() -> list[dict[str, Any]]:
    """Actions this rule adds to the game.

    Each action: ``name``; ``kind`` — ``"propose"`` (creates a proposal from ``changes``,
    with optional ``label``, ``title``, ``text``), ``"vote"`` (a vote on ``proposal`` with
    ``choice``), ``"join"``, ``"leave"`` or ``"plain"`` (the default: only recorded, rules
    react to it); ``params`` — extra parameters, name → type (``str``, ``int``,
    ``number``, ``bool``, ``player``, ``proposal``, ``changes`` (rule changes, checked
    like a proposal's: known rules, code that compiles), ``list``, ``dict``, ``any``; a
    trailing ``?`` makes it optional); ``who`` — ``"player"`` (default), ``"anyone"``,
    ``"office:NAME"``, or a list of these; for votes, ``choices`` maps the ruleset's own
    words to ``for`` / ``against`` / ``abstain`` (or other outcomes a rule understands);
    ``help`` — a line for players.

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
    later adds its variables to everyone. Optional ``label`` maps a language to a name.

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


# --- checks ---------------------------------------------------------------------------


def check(game: dict[str, Any], command: dict[str, Any]) -> str | None:
    """May this command happen? Return None to allow, or a message that refuses it.

    ``command`` is ``{"actor", "action", "kind", "args"}`` with arguments already checked
    against the declaration (a vote's ``choice`` is canonical, ``proposal`` a number).
    The message is shown to the player as written: write it in the ruleset's language.

    Example::

        def check(game, command):
            if command["kind"] == "propose" and game["vars"]["turn"] != command["actor"]:
                return "Non è il tuo turno."
            return None
    """
    return None


# --- reactions ------------------------------------------------------------------------


def on_EVENT(game: dict[str, Any], event: dict[str, Any]) -> list[dict[str, Any]]:  # noqa: N802
    """React to an event by returning effects. Define ``on_<event type>`` for each type.

    ``event`` is ``{"type", "seq", "time", "time_ts", "actor", ...payload}``. The game
    view already includes the event. Event types and their payloads:

    - ``game_started`` — after the rules, variables, players and offices are in place.
    - ``player_joined`` {player, vars}; ``player_status`` {player, status}.
    - ``action_taken`` {action, args} — a ``plain`` action; check ``event["action"]``.
    - ``proposal_submitted`` {number, label, author, title, text, changes, data}.
    - ``vote_cast`` {proposal, player, choice, data}.
    - ``vote_withdrawn`` {proposal, player}; ``proposal_updated`` {proposal, key, value}.
    - ``proposal_resolved`` {proposal, outcome, tally, apply}: rule changes of an applied
      proposal follow as ``rule_changed`` events after the reactions to this one.
    - ``rule_changed`` {change, cause}.
    - ``var_set`` {player, name, value, delta?}; ``office_set`` {office, holder}.
    - ``timer_set`` / ``timer_fired`` {id, name, at, data, rule}; ``timer_cancelled``.
    - ``asset_set`` {kind, id, owner, data}; ``asset_destroyed`` {kind, id}.
    - ``notice`` {text, ...}; ``winner_declared`` {players, reason}; ``game_ended``.
    - ``clock_advanced`` {to}.

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


# --- effects --------------------------------------------------------------------------

EFFECTS: dict[str, str] = {
    "set_var": '{"effect": "set_var", "player": "Anna" or None, "name": "points", "value": 5}',
    "add_var": '{"effect": "add_var", "player": "Anna" or None, "name": "points", "amount": -2}'
               "  (additions returned together all count: the sum is taken when applied)",
    "transfer": '{"effect": "transfer", "name": "nomica", "amount": 100, "from": "A", "to": "B"}'
                " (None on a side: the money comes from or goes to nowhere)",
    "set_office": '{"effect": "set_office", "office": "King", "holder": "Anna" or None}',
    "resolve_proposal": '{"effect": "resolve_proposal", "proposal": 3, "outcome": "adopted",'
                        ' "tally": {...}, "apply": True}  (apply defaults to outcome=="adopted")',
    "apply_changes": '{"effect": "apply_changes", "proposal": 3}  (changes of a proposal '
                     "resolved with apply False, e.g. at the end of a round)",
    "change_rules": '{"effect": "change_rules", "changes": [...], "cause": {"kind": "decree",'
                    ' "by": "GM"}}  (officer powers such as an emergency decree)',
    "update_proposal": '{"effect": "update_proposal", "proposal": 3, "key": "vetoed",'
                       ' "value": True}',
    "set_vote": '{"effect": "set_vote", "proposal": 3, "player": "Bea", "choice": "for"}',
    "withdraw_vote": '{"effect": "withdraw_vote", "proposal": 3, "player": "Bea"}',
    "set_timer": '{"effect": "set_timer", "name": "end_of_period", "after": 1209600,'
                 ' "data": {}}  (or "at": ISO time or a timestamp)',
    "cancel_timer": '{"effect": "cancel_timer", "name": "end_of_period"} (or "id")',
    "create_asset": '{"effect": "create_asset", "kind": "gladiator", "id": "Spartaco",'
                    ' "owner": "Anna", "data": {"magic": "12345"}}',
    "update_asset": '{"effect": "update_asset", "kind": "gladiator", "id": "Spartaco",'
                    ' "owner": "Bea", "data": {"magic": "12355"}}  (data is merged)',
    "destroy_asset": '{"effect": "destroy_asset", "kind": "gladiator", "id": "Spartaco"}',
    "set_status": '{"effect": "set_status", "player": "Anna", "status": "left"}',
    "add_player": '{"effect": "add_player", "player": "Carla", "vars": {"points": 10}}',
    "notice": '{"effect": "notice", "text": "La Giornata III comincia", "kind": "decree"}',
    "declare_winner": '{"effect": "declare_winner", "players": ["Anna"], "reason": "...",'
                      ' "end": True}',
    "end_game": '{"effect": "end_game", "reason": "no King can be chosen"}',
    "refuse": '{"effect": "refuse", "message": "..."}  (while reacting to a command: the whole'
              " command is refused and nothing it did is kept)",
}

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

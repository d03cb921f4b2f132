"""The effects rule code may return, written once.

Each entry names an effect, its fields with their types, the event it becomes and what
it does. From this table the kernel checks every effect a rule returns (before giving it
its meaning in :mod:`scriba.kernel.effects`), ``std`` makes its effect constructors
(:mod:`scriba.rulecode.std`) and the rule API reference lists the effects
(:mod:`scriba.rulecode.api`). A new effect is an entry here, its meaning in
``effects.py`` and, for a new event, its sentence in ``service/narrate.py``.

A field is required unless ``optional``. A field whose ``none`` is set takes None as a
value of its own ("nobody", "the game") and may be left out, meaning None; an optional
field given None is left out. In ``std`` the required fields are the positional
arguments, in the table's order, and the optional ones keywords defaulting to None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# A field's type: how it is described to rule authors, and what it accepts.
TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "str": ("str", lambda v: isinstance(v, str)),
    "int": ("int", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "number": ("number", _number),
    "bool": ("bool", lambda v: isinstance(v, bool)),
    "dict": ("dict", lambda v: isinstance(v, dict)),
    "list": ("list", lambda v: isinstance(v, list)),
    "player": ("player", lambda v: isinstance(v, str) and v != ""),
    # The kernel knows no game's words: the outcomes' vocabulary is std's (std.OUTCOMES),
    # checked by its constructor; the kernel records whatever text a rule resolves with.
    "outcome": ("a proposal outcome (text)", lambda v: isinstance(v, str)),
    "time": ("a time (ISO text or a timestamp)", lambda v: isinstance(v, str) or _number(v)),
    "case": ("a case number (int)", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "any": ("anything", lambda v: True),
}


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # a key of TYPES
    optional: bool = False
    none: bool = False  # None is a value of its own; the field may be left out
    arg: str = ""  # the std argument's name, where the field's is a reserved word

    def described(self) -> str:
        return TYPES[self.type][0] + (" or None" if self.none else "")

    def may_be_left_out(self) -> bool:
        return self.optional or self.none or self.type == "any"

    def problem(self, value: Any) -> str | None:
        if value is None and (self.none or self.type == "any"):
            return None
        if TYPES[self.type][1](value):
            return None
        return f"{self.name} must be {self.described()}, got {repr(value)[:200]}"


@dataclass(frozen=True)
class Effect:
    name: str
    event: str | None  # the event it becomes (None: it refuses the command instead)
    doc: str
    fields: tuple[Field, ...]
    example: dict[str, Any]  # valid fields, as the reference shows them
    open: bool = False  # takes any other field too (a notice's own data)
    std_names: tuple[str, ...] = ()  # further names of its std constructor

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def problem(self, effect: dict[str, Any]) -> str | None:
        """Why the kernel refuses these fields of the effect, or None."""
        for key, value in effect.items():
            field = self.field(key)
            if key != "effect" and field is None and not self.open:
                return f"unknown field {str(key)[:100]!r} (known: " \
                    + ", ".join(f.name for f in self.fields) + ")"
            problem = field.problem(value) if field else None
            if problem:
                return problem
        for field in self.fields:
            if field.name not in effect and not field.may_be_left_out():
                return f"missing {field.name}"
        return None


def _f(name: str, type_: str, **options: Any) -> Field:
    return Field(name, type_, **options)


def _opt(name: str, type_: str, **options: Any) -> Field:
    return Field(name, type_, optional=True, **options)


_PLAYER_SCOPE = _opt("player", "player", none=True)  # None (or left out): the game's

_TABLE = [
    Effect("set_var", "var_set", "set a variable of a player, or of the game without one",
           (_f("name", "str"), _f("value", "any"), _PLAYER_SCOPE),
           {"name": "points", "value": 5, "player": "Anna"}),
    Effect("add_var", "var_set", "add to a number variable (additions returned together all "
           "count: the sum is taken when applied)",
           (_f("name", "str"), _f("amount", "number"), _PLAYER_SCOPE),
           {"name": "points", "amount": -2, "player": "Anna"}),
    Effect("transfer", "var_set", "move an amount of a variable from a player to another "
           "(None on a side: from or to nowhere; in std the payer is `source`)",
           (_f("name", "str"), _f("amount", "number"),
            _f("from", "player", none=True, arg="source"), _f("to", "player", none=True)),
           {"name": "nomica", "amount": 100, "from": "Anna", "to": "Bea"}),
    Effect("set_office", "office_set", "give an office to a player, or leave it vacant (None)",
           (_f("office", "str"), _f("holder", "player", none=True)),
           {"office": "King", "holder": "Anna"}),
    Effect("resolve_proposal", "proposal_resolved", "resolve an open proposal; apply defaults "
           "to outcome == \"adopted\" (outcomes and reasons: see \"Proposal outcomes\")",
           (_f("proposal", "int"), _f("outcome", "outcome"), _opt("reason", "str"),
            _opt("tally", "dict"), _opt("apply", "bool")),
           {"proposal": 3, "outcome": "adopted", "reason": "vote", "tally": {"for": 2},
            "apply": True}, std_names=("resolve",)),
    Effect("apply_changes", "changes_due", "apply the changes of a proposal resolved with "
           "apply False (e.g. at the end of a round)",
           (_f("proposal", "int"),), {"proposal": 3}),
    Effect("change_rules", "changes_due", "change the rules without a proposal (officer "
           "powers such as an emergency decree)",
           (_f("changes", "list"), _opt("cause", "dict")),
           {"changes": [{"repeal": {"rule": "101"}}], "cause": {"kind": "decree", "by": "GM"}}),
    Effect("update_proposal", "proposal_updated", "set a key of a proposal's data",
           (_f("proposal", "int"), _f("key", "str"), _f("value", "any")),
           {"proposal": 3, "key": "vetoed", "value": True}),
    Effect("set_vote", "vote_cast", "cast or change a player's vote",
           (_f("proposal", "int"), _f("player", "str"), _f("choice", "str"),
            _opt("data", "dict")),
           {"proposal": 3, "player": "Bea", "choice": "for"}),
    Effect("withdraw_vote", "vote_withdrawn", "take back a player's vote",
           (_f("proposal", "int"), _f("player", "str")), {"proposal": 3, "player": "Bea"}),
    Effect("set_timer", "timer_set", "set a deadline, `after` seconds or `at` a time; rules "
           "react to it with on_timer_fired",
           (_f("name", "str"), _opt("after", "number"), _opt("at", "time"),
            _opt("data", "dict")),
           {"name": "end_of_period", "after": 1209600, "data": {}}),
    Effect("cancel_timer", "timer_cancelled", "cancel every deadline of this name",
           (_f("name", "str"),), {"name": "end_of_period"}),
    Effect("create_asset", "asset_set", "create an asset of a kind",
           (_f("kind", "str"), _f("id", "str"), _opt("owner", "player", none=True),
            _opt("data", "dict")),
           {"kind": "gladiator", "id": "Crixus", "owner": "Anna", "data": {"magic": "12345"}}),
    Effect("update_asset", "asset_set", "change an asset's owner (None: nobody's) or data "
           "(merged)",
           (_f("kind", "str"), _f("id", "str"), _opt("owner", "player", none=True),
            _opt("data", "dict")),
           {"kind": "gladiator", "id": "Spartaco", "owner": "Bea", "data": {"magic": "12355"}}),
    Effect("destroy_asset", "asset_destroyed", "destroy an asset",
           (_f("kind", "str"), _f("id", "str")), {"kind": "gladiator", "id": "Spartaco"}),
    Effect("set_status", "player_status", "set a player's status (\"left\", \"active\", ...)",
           (_f("player", "str"), _f("status", "str")), {"player": "Anna", "status": "left"}),
    Effect("add_player", "player_joined", "add a player, with variables of their own",
           (_f("player", "str"), _opt("vars", "dict")),
           {"player": "Carla", "vars": {"points": 10}}),
    Effect("notice", "notice", "a message to the players or, with a kind declared in the "
           "rule's notices(), to other rules; any other fields go with it",
           (_f("kind", "str", none=True), _f("text", "str")),
           {"kind": "decree", "text": "La Giornata III comincia", "day": 3}, open=True),
    Effect("reveal", "moves_revealed", "show everyone the sealed moves of an action made so "
           "far (only those on one proposal, if given): until then only their player and the "
           "officer see them",
           (_f("action", "str"), _opt("proposal", "int")), {"action": "vote", "proposal": 3}),
    Effect("declare_winner", "winner_declared", "declare winners; the game ends unless end "
           "is False",
           (_f("players", "list"), _opt("reason", "str"), _opt("end", "bool")),
           {"players": ["Anna"], "reason": "100 points", "end": True}),
    Effect("end_game", "game_ended", "end the game",
           (_opt("reason", "str"),), {"reason": "no King can be chosen"}),
    # Cases (kernel/cases.py): the kernel numbers them and stamps a judgment's rules.
    Effect("open_case", "case_opened", "open a case: its question, what it concerns "
           "([{kind: rule|proposal|player|event, id}]), its parties (players), the rules' "
           "own data; the kernel gives it the next number",
           (_f("question", "str"), _opt("concerns", "list"), _opt("parties", "list"),
            _opt("data", "dict")),
           {"question": "Was Bea's vote lawful?", "concerns": [{"kind": "player", "id": "Bea"}],
            "parties": ["Anna", "Bea"], "data": {"deadline_days": 7}}),
    Effect("assign_judge", "case_assigned", "give a case to a judge (a player), or leave it "
           "unassigned (None)",
           (_f("case", "case"), _f("judge", "player", none=True)), {"case": 1, "judge": "Bea"}),
    Effect("judge_case", "case_judged", "judge a case not closed (a decree, a panel's "
           "verdict): the judgment in the ruleset's words, the reasons, the ids of the rules "
           "it interprets (stamped with their revision now)",
           (_f("case", "case"), _f("judgment", "str"), _opt("reasons", "str"),
            _opt("rules", "list"), _opt("data", "dict")),
           {"case": 1, "judgment": "TRUE", "reasons": "Rule 7 says so.", "rules": ["7"],
            "data": {"remedy": "none"}}),
    Effect("appeal_case", "case_appealed", "appeal a judged case",
           (_f("case", "case"), _opt("reasons", "str")),
           {"case": 2, "reasons": "The judge misread rule 7."}),
    Effect("reopen_case", "case_reopened", "reopen a case: its judgment (if any) goes to its "
           "earlier judgments, it is open again; its judge stays until another is assigned",
           (_f("case", "case"), _opt("reason", "str")), {"case": 2, "reason": "overruled"}),
    Effect("close_case", "case_closed", "close a case: its judgment, if any, is final",
           (_f("case", "case"), _opt("reason", "str")), {"case": 1, "reason": "judged"}),
    Effect("update_case", "case_updated", "set a key of a case's data",
           (_f("case", "case"), _f("key", "str"), _f("value", "any")),
           {"case": 1, "key": "panel", "value": ["Anna", "Bea"]}),
    Effect("order_correction", "correction_ordered", "order a correction of the record "
           "(annul a player's command, add a lost one, set what should have been true at a "
           "time): after the command, the game is recomputed from that point and the "
           "difference announced",
           (_f("correction", "dict"), _opt("reason", "str")),
           {"correction": {"kind": "annul", "event": 57}, "reason": "Case 3: the vote was "
            "cast after the deadline."}),
    Effect("refuse", None, "while reacting to a command: the whole command is refused with "
           "this message and nothing it did is kept",
           (_f("message", "str"),), {"message": "Non è il tuo turno."}),
]

EFFECTS: dict[str, Effect] = {e.name: e for e in _TABLE}


def reference(effect: Effect) -> str:
    """An effect as the rule API reference shows it: its fields, its event, what it does."""
    fields = ", ".join(f'"{f.name}"{"?" if f.may_be_left_out() else ""}: {f.described()}'
                       for f in effect.fields) + (", ..." if effect.open else "")
    becomes = f"-> {effect.event}" if effect.event else "-> no event"
    example = {"effect": effect.name, **effect.example}
    return f'{{"effect": "{effect.name}", {fields}}} {becomes}: {effect.doc}; ' \
        f"e.g. {example!r}".replace(", }", "}")


def std_signature(effect: Effect, name: str) -> str:
    """The effect's std constructor as rule authors call it (``name``: it or an alias)."""
    args = [(f.arg or f.name) + ("=None" if f.optional else "") for f in effect.fields]
    args += ["**fields"] if effect.open else []
    return f"std.{name}({', '.join(args)})  -> {{\"effect\": \"{effect.name}\", ...}}"

"""The one registry of event types and of the names rule code may define.

The kernel (what rules may react to, what changes no state), the sandbox (which
top-level names a rule's code may define), :mod:`scriba.rulecode.api` and the docs all
read these tables; a test checks that they agree with the event handlers and effects.

Every event type has a schema ``version``. An event records its version in its payload
as ``"v"`` only when that version is above 1: events written without one are version 1,
so every log written so far is read unchanged, and :mod:`scriba.kernel.upgrade` brings an
older event to the current shape when it is read.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EventType:
    name: str
    fields: str  # the payload, as documented to rule authors
    doc: str = ""
    dispatched: bool = True  # rules may react to it with on_<name>
    record_only: bool = False  # it changes nothing but the sequence number and the time
    version: int = 1  # the current schema version of its payload


_TYPES = [
    EventType("game_created", "game_id, name, ruleset, language, seed, clock, settings, vars, "
              "rules, proposals", "the first event of every game"),
    EventType("game_started", "", "after the rules, variables, players and offices are in place",
              record_only=True),
    EventType("player_joined", "player, vars"),
    EventType("player_status", "player, status"),
    EventType("action_taken", "action, args, letter?",
              "a plain action; check event['action']", record_only=True),
    EventType("proposal_submitted", "number, label, author, title, text, changes, data, "
              "letter?", "letter: the id of the letter it came in, when it came in one"),
    EventType("vote_cast", "proposal, player, choice, data, letter?"),
    EventType("vote_withdrawn", "proposal, player"),
    EventType("proposal_updated", "proposal, key, value"),
    EventType("proposal_resolved", "proposal, outcome, reason?, tally, apply",
              "the rule changes of an applied proposal follow as rule_changed events, "
              "after the reactions to this one"),
    EventType("rule_changed", "change, cause"),
    EventType("var_set", "player, name, value, delta?"),
    EventType("office_set", "office, holder"),
    EventType("timer_set", "id, name, at, data, rule"),
    EventType("timer_fired", "id, name, at, data, rule"),
    EventType("timer_cancelled", "id"),
    EventType("asset_set", "kind, id, owner, data"),
    EventType("asset_destroyed", "kind, id"),
    EventType("notice", "text, kind?, ...", "a message between rules or to the players"),
    EventType("moves_revealed", "action, proposal?",
              "the sealed moves of that action made so far (on that proposal) are shown to "
              "everyone from now on", record_only=True),
    EventType("winner_declared", "players, reason, end"),
    EventType("game_ended", "reason"),
    EventType("clock_advanced", "to", record_only=True),
    # Cases: the docket of disputes (rulecode/api.py, "Cases"). Each adds a step to its case.
    EventType("case_opened", "number, question, concerns, parties, data, action?, letter?",
              "a case is opened (by a player's action of kind case, or a rule's open_case)"),
    EventType("case_assigned", "case, judge", "judge: a player, or None (unassigned)"),
    EventType("case_judged", "case, judgment, reasons, rules, data, meaning?, action?, letter?",
              "rules: [{rule, revision}] the judgment interprets, at their revision then; "
              "meaning: what the ruleset's word stands for in the action's choices"),
    EventType("case_appealed", "case, reasons, action?, letter?",
              "action: the action of a player's command that made it (also of the others)"),
    EventType("case_reopened", "case, reason",
              "the judgment goes to the case's earlier judgments; the judge stays"),
    EventType("case_closed", "case, reason", "the judgment, if any, is final"),
    EventType("case_updated", "case, key, value", "a key of the case's data"),
    # Recorded for the record; rules are not asked about them.
    EventType("command_refused", "actor, action, args, reason, message, rule?", dispatched=False,
              record_only=True),
    EventType("rule_code_aborted", "rule, hook, reason", dispatched=False, record_only=True),
    EventType("rule_change_failed", "change, cause, reason, details", dispatched=False,
              record_only=True),
    EventType("changes_due", "proposal | changes, cause", dispatched=False, record_only=True),
    # Corrections of the record (service/corrections.py): the game recomputed after a
    # point; the fold applies the patch from the state the log made to the recomputed one.
    EventType("record_corrected", "number, correction, reason, by, case?, point, through, "
              "difference, patch, refused_now, accepted_now", dispatched=False),
    EventType("correction_ordered", "correction, reason?",
              "a rule ordered a correction; the service applies it after the command",
              dispatched=False, record_only=True),
]

EVENT_TYPES: dict[str, EventType] = {t.name: t for t in _TYPES}
NOT_DISPATCHED = frozenset(t.name for t in _TYPES if not t.dispatched)
RECORD_ONLY = frozenset(t.name for t in _TYPES if t.record_only)
DISPATCHED = tuple(t.name for t in _TYPES if t.dispatched)

# --- the names a rule's code may define at top level ---------------------------------

DECLARATIONS = ("actions", "variables", "offices", "notices", "reacts_to")
FIXED_HOOKS = ("check", "due", "invariants")  # due(game): the moves players owe (std.due);
# invariants(game): what the ruleset says must always hold and does not (the proposal lab)
PREFIXES = ("on_", "transform_", "query_")  # on_<event type>, transform_<name>, query_<name>
# Hooks for one action (actions are declared by rules, so any name): check_<action> is
# asked with ``check`` about that action's commands, on_action_<action> with
# ``on_action_taken`` about the event such a command makes (see action_hook).
ACTION_PREFIXES = {"check": "check_", "on_action_taken": "on_action_"}


def action_hook(hook: str, action: object) -> str | None:
    """The hook for one action that is asked together with ``hook`` (``check`` or
    ``on_action_taken``), or None. An action called "taken" has no hook of its own: its
    ``on_action_taken`` is the general one."""
    prefix = ACTION_PREFIXES.get(hook)
    if prefix is None or not isinstance(action, str) or not action:
        return None
    name = prefix + action
    return None if name in ACTION_PREFIXES else name


def version_of(event_type: str) -> int:
    known = EVENT_TYPES.get(event_type)
    return known.version if known else 1


def hook_name_error(name: str) -> str | None:
    """Why a top-level function of rule code may not have this name, or None if it may.

    Helpers start with ``_``. A misspelt hook would be silently never called, so it is
    refused, with the nearest name the kernel knows.
    """
    if name.startswith("_") or name in DECLARATIONS or name in FIXED_HOOKS:
        return None
    if any(name.startswith(p) and len(name) > len(p) for p in ACTION_PREFIXES.values()):
        return None  # check_<action>, on_action_<action>
    if name.startswith("on_"):
        if name[3:] in EVENT_TYPES and name[3:] not in NOT_DISPATCHED:
            return None
        guess = _nearest(name, [f"on_{t}" for t in DISPATCHED])
        return (f"{name}: there is no event type {name[3:]!r} to react to"
                + (f" (did you mean {guess}?)" if guess else ""))
    if any(name.startswith(p) and len(name) > len(p) for p in PREFIXES):
        return None
    candidates = [*DECLARATIONS, *FIXED_HOOKS, *(f"on_{t}" for t in DISPATCHED)]
    guess = _nearest(name, candidates)
    hint = f"did you mean {guess}? " if guess else ""
    return (f"{name}: not a hook the kernel calls ({hint}a helper's name starts with _; "
            "hooks are actions, variables, offices, notices, reacts_to, check, check_<action>, "
            "due, invariants, "
            "on_<event>, on_action_<action>, transform_<name>, query_<name>)")


def _nearest(name: str, candidates: list[str]) -> str | None:
    found = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if not found:  # e.g. tranform_x: compare the prefix alone
        head, _, rest = name.partition("_")
        for prefix in PREFIXES:
            if difflib.SequenceMatcher(None, head + "_", prefix).ratio() >= 0.75 and rest:
                return prefix + rest
    return found[0] if found else None


# How a reacts_to() field may bound a number instead of listing values.
BOUNDS: dict[str, Callable[[float, float], bool]] = {
    "above": lambda value, bound: value > bound,
    "at_least": lambda value, bound: value >= bound,
    "below": lambda value, bound: value < bound,
    "at_most": lambda value, bound: value <= bound,
}


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The reacts_to() entry that bounds the commands a rule's checks are asked about (the
# fields of the command its check hooks get: kind, action, actor), beside event types.
COMMANDS = "command"
COMMAND_FIELDS = ("kind", "action", "actor")


def reacts_to_error(filters: object) -> str | None:
    """Why a ``reacts_to()`` declaration is malformed, or None: a dict of event type (or
    :data:`COMMANDS`) to a dict of field to the list of values that field must have for
    the rule to be asked, or to bounds of a number (``{"above": 100}``, see
    :data:`BOUNDS`)."""
    if filters is None:
        return None
    if not isinstance(filters, dict):
        return "reacts_to() must return a dict of event type to fields, not " + \
            type(filters).__name__
    for event_type, fields in filters.items():
        if event_type not in DISPATCHED and event_type != COMMANDS:
            guess = _nearest(str(event_type), [*DISPATCHED, COMMANDS])
            return (f"reacts_to(): there is no event type {event_type!r} to react to"
                    + (f" (did you mean {guess}?)" if guess else ""))
        if not isinstance(fields, dict) or not fields:
            return f"reacts_to(): {event_type} must map fields to lists of values"
        for name, values in fields.items():
            if event_type == COMMANDS and name not in COMMAND_FIELDS:
                return (f"reacts_to(): a command is told apart by {', '.join(COMMAND_FIELDS)}, "
                        f"not {name!r}")
            if isinstance(values, dict):
                if not values or not all(k in BOUNDS and _number(v) for k, v in values.items()):
                    return (f"reacts_to(): {event_type}.{name} bounds a number with "
                            f"{', '.join(BOUNDS)} and numbers, e.g. {{'above': 100}}")
            elif not isinstance(values, list) or not values or not all(
                    v is None or isinstance(v, str | int | float | bool) for v in values):
                return (f"reacts_to(): {event_type}.{name} must be a non-empty list of "
                        "texts, numbers, booleans or None, or bounds of a number")
    return None


def reacts(filters: dict[str, dict[str, Any]] | None, event: dict) -> bool:
    """Whether a rule with these ``reacts_to()`` filters is asked about this event: the
    event's type is not filtered, or each field named has one of the values listed, or
    is a number within the bounds given (a field is looked for in the payload, then
    among the event's own keys). A command to check is ``{"type": COMMANDS, "payload":
    the command}``."""
    fields = (filters or {}).get(event["type"])
    if not fields:
        return True
    payload = event["payload"]
    for name, wanted in fields.items():
        value = payload[name] if name in payload else event.get(name)
        if isinstance(wanted, dict):
            if not _number(value) or not all(BOUNDS[bound](value, limit)
                                             for bound, limit in wanted.items()):
                return False
        elif value not in wanted:
            return False
    return True


def undeclared_notice(effect: object, declared: object) -> str | None:
    """Why a rule may not emit this notice: its ``kind`` is not among the kinds it declares
    with ``notices()`` (rules signal each other through kinds, so each has one owner)."""
    if not isinstance(effect, dict) or effect.get("effect") != "notice":
        return None
    kind = effect.get("kind")
    if kind is None:
        return None  # a plain message to the players
    kinds = declared if isinstance(declared, list) else []
    if kind in kinds:
        return None
    return (f"notice kind {kind!r} is not declared by this rule "
            f"(add it to notices(); declared: {', '.join(map(str, kinds)) or 'none'})")

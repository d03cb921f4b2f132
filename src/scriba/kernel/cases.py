"""Cases: the docket of a game's disputes, a noun of the kernel like proposals.

A case is opened (by a player's action of kind ``case`` or a rule's ``open_case``), given
a judge, judged, appealed, reopened, closed; each step is an event, folded here into
``GameState.cases`` (case number as text -> case, in the shape documented in
:mod:`scriba.rulecode.api`). What a ruleset decides — who opens, who judges, which words
a judgment takes, what a judgment does — is its rules' business; the kernel keeps the
record, numbers the cases and stamps the rules a judgment interprets with their revision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriba.kernel.changes import revision
from scriba.kernel.errors import InvalidEffect
from scriba.kernel.state import GameState, touch

Event = dict[str, Any]
CONCERN_KINDS = ("rule", "proposal", "player", "event")
# Why a judgment left the case for its earlier ones, when nobody said.
REPLACED = {"appealed": "appealed", "judged": "judged again"}


def case_key(number: Any) -> str:
    return str(number)


def next_case_number(state: GameState) -> int:
    """The number of the next case: one above the highest given (first 1). Reserved as it
    is given (journaled, so undone with a trial), so that two cases opened by the effects
    of one reaction, numbered before either is applied, differ."""
    numbers = [int(n) for n in state.cases if n.lstrip("-").isdigit()]
    number = max([0, *numbers, state.__dict__.get("_case_reserved", 0)]) + 1
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(state.__dict__, "_case_reserved")
    state.__dict__["_case_reserved"] = number
    return number


def stamped_rules(state: GameState, ids: list[Any]) -> list[dict[str, Any]]:
    """The rules a judgment interprets, each with its revision now; raises KeyError with
    the first id that names no rule (in force or not)."""
    stamped = []
    for rule_id in ids:
        rule = state.rules.get(str(rule_id))
        if rule is None:
            raise KeyError(str(rule_id))
        entry = {"rule": rule["id"], "revision": revision(rule)}
        if entry not in stamped:
            stamped.append(entry)
    return stamped


# --- the fold -------------------------------------------------------------------------


def _step(event: Event, step: str, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"step": step, "by": event.get("actor"), "at": event["time"]}
    if event["payload"].get("by_rule"):
        entry["rule"] = event["payload"]["by_rule"]
    entry.update({k: v for k, v in extra.items() if v is not None})
    return entry


def _writable(state: GameState, number: Any) -> dict[str, Any]:
    """A fresh copy of the case put in its place (the old one is kept by a trial's
    journal): a case is small, and copying it on write keeps undoing trivial."""
    key = case_key(number)
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(state.cases, key)
    touch(state, "cases")
    case = state.cases[key]
    case = {**case, "steps": list(case["steps"]), "earlier": list(case["earlier"]),
            "data": dict(case["data"])}
    state.cases[key] = case
    return case


def _opened(state: GameState, p: dict[str, Any], event: Event) -> None:
    key = case_key(p["number"])
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(state.cases, key)
    touch(state, "cases")
    state.cases[key] = {
        "number": p["number"],
        "question": p.get("question", ""),
        "concerns": [dict(c) for c in p.get("concerns") or []],
        "parties": list(p.get("parties") or []),
        "opened_by": event.get("actor"),
        "opened": event["time"],
        "status": "open",
        "judge": None,
        "judgment": None,
        "earlier": [],
        "steps": [_step(event, "opened")],
        "data": dict(p.get("data") or {}),
    }


def _supersede(case: dict[str, Any], reason: str, event: Event) -> None:
    if case["judgment"] is not None:
        case["earlier"].append({**case["judgment"], "superseded": reason,
                                "when": event["time"]})
        case["judgment"] = None


def _assigned(state: GameState, p: dict[str, Any], event: Event) -> None:
    case = _writable(state, p["case"])
    case["judge"] = p.get("judge")
    case["steps"].append(_step(event, "assigned", judge=p.get("judge")))


def _judged(state: GameState, p: dict[str, Any], event: Event) -> None:
    case = _writable(state, p["case"])
    _supersede(case, REPLACED.get(case["status"], "judged again"), event)
    judgment = {"judgment": p["judgment"], "reasons": p.get("reasons") or "",
                "rules": [dict(r) for r in p.get("rules") or []],
                "by": event.get("actor") or case["judge"], "at": event["time"]}
    if p.get("meaning") is not None:  # what the ruleset's word stands for
        judgment["meaning"] = p["meaning"]
    case["judgment"] = judgment
    case["status"] = "judged"
    case["data"].update(p.get("data") or {})
    case["steps"].append(_step(event, "judged", note=p.get("reasons") or None))


def _appealed(state: GameState, p: dict[str, Any], event: Event) -> None:
    case = _writable(state, p["case"])
    case["status"] = "appealed"
    case["steps"].append(_step(event, "appealed", note=p.get("reasons") or None))


def _reopened(state: GameState, p: dict[str, Any], event: Event) -> None:
    case = _writable(state, p["case"])
    _supersede(case, p.get("reason") or "reopened", event)
    case["status"] = "open"
    case["steps"].append(_step(event, "reopened", note=p.get("reason") or None))


def _closed(state: GameState, p: dict[str, Any], event: Event) -> None:
    case = _writable(state, p["case"])
    case["status"] = "closed"
    case["steps"].append(_step(event, "closed", note=p.get("reason") or None))


def _updated(state: GameState, p: dict[str, Any], event: Event) -> None:
    case = _writable(state, p["case"])
    case["data"][p["key"]] = p.get("value")


HANDLERS: dict[str, Callable[[GameState, dict[str, Any], Event], None]] = {
    "case_opened": _opened,
    "case_assigned": _assigned,
    "case_judged": _judged,
    "case_appealed": _appealed,
    "case_reopened": _reopened,
    "case_closed": _closed,
    "case_updated": _updated,
}


# --- what the case effects mean (kernel/effect_schema.py has their fields) -----------


def concerns_of(raw: Any) -> list[dict[str, str]]:
    """What a case concerns, as ``[{"kind", "id"}]`` with the id as text; raises ValueError
    saying what is wrong."""
    out: list[dict[str, str]] = []
    for item in raw or []:
        if not isinstance(item, dict) or item.get("kind") not in CONCERN_KINDS \
                or item.get("id") is None or isinstance(item.get("id"), dict | list):
            raise ValueError(f"a concern is {{kind: {'|'.join(CONCERN_KINDS)}, id}}, "
                             f"not {repr(item)[:100]}")
        entry = {"kind": str(item["kind"]), "id": str(item["id"])}
        if entry not in out:
            out.append(entry)
    return out


def _case(state: GameState, number: Any) -> dict[str, Any]:
    case = state.cases.get(case_key(number))
    if case is None:
        raise InvalidEffect(f"no case {number!r}")
    return case


def _players(state: GameState, names: Any) -> list[str]:
    out: list[str] = []
    for name in names or []:
        if name not in state.players:
            raise InvalidEffect(f"no player named {str(name)[:100]!r}")
        if name not in out:
            out.append(str(name))
    return out


def _open_case(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    try:
        concerns = concerns_of(e.get("concerns"))
    except ValueError as bad:
        raise InvalidEffect(f"effect 'open_case': {bad}") from None
    return [ctx.event("case_opened", number=next_case_number(state), question=e["question"],
                      concerns=concerns, parties=_players(state, e.get("parties")),
                      data=dict(e.get("data") or {}))]


def _assign_judge(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    case = _case(state, e["case"])
    if case["status"] == "closed":
        raise InvalidEffect(f"case {case['number']} is closed")
    judge = e.get("judge")
    # A judge is a player or an office's holder (a game master who does not play).
    if judge is not None and judge not in state.players and \
            judge not in state.offices.values():
        raise InvalidEffect(f"no player or office holder named {judge!r}")
    return [ctx.event("case_assigned", case=case["number"], judge=judge)]


def _judge_case(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    case = _case(state, e["case"])
    if case["status"] == "closed":
        raise InvalidEffect(f"case {case['number']} is closed")
    try:
        rules = stamped_rules(state, e.get("rules") or [])
    except KeyError as unknown:
        raise InvalidEffect(f"effect 'judge_case': no rule {unknown.args[0]!r}") from None
    return [ctx.event("case_judged", case=case["number"], judgment=e["judgment"],
                      reasons=e.get("reasons") or "", rules=rules,
                      data=dict(e.get("data") or {}))]


def _appeal_case(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    case = _case(state, e["case"])
    if case["status"] != "judged":
        raise InvalidEffect(f"case {case['number']} is {case['status']}: only a judged case "
                            "is appealed")
    return [ctx.event("case_appealed", case=case["number"], reasons=e.get("reasons") or "")]


def _reopen_case(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    case = _case(state, e["case"])
    if case["status"] == "open":
        raise InvalidEffect(f"case {case['number']} is already open")
    return [ctx.event("case_reopened", case=case["number"], reason=e.get("reason") or "")]


def _close_case(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    case = _case(state, e["case"])
    if case["status"] == "closed":
        raise InvalidEffect(f"case {case['number']} is already closed")
    return [ctx.event("case_closed", case=case["number"], reason=e.get("reason") or "")]


def _update_case(state: GameState, e: dict[str, Any], ctx: Any) -> list[Event]:
    case = _case(state, e["case"])
    return [ctx.event("case_updated", case=case["number"], key=e["key"], value=e.get("value"))]


MEANINGS: dict[str, Callable[[GameState, dict[str, Any], Any], list[Event]]] = {
    "open_case": _open_case,
    "assign_judge": _assign_judge,
    "judge_case": _judge_case,
    "appeal_case": _appeal_case,
    "reopen_case": _reopen_case,
    "close_case": _close_case,
    "update_case": _update_case,
}


# --- a player's command about a case (its arguments checked by kernel/checking.py) ----


def case_command(state: GameState, kind: str, name: str, action: dict[str, Any],
                 args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The event (type, payload) of a command of kind ``case``, ``judge`` or ``appeal`` of
    the action ``name`` (recorded, so that the chronicle tells it in the ruleset's words)."""
    if kind == "judge":
        extra = {k: v for k, v in args.items()
                 if k not in ("case", "judgment", "reasons", "rules")}
        meaning = (action.get("choices") or {}).get(args["judgment"])
        return "case_judged", {
            "case": args["case"], "judgment": args["judgment"],
            "reasons": args.get("reasons") or "",
            "rules": stamped_rules(state, args.get("rules") or []), "data": extra,
            **({"meaning": meaning} if meaning is not None else {}), "action": name}
    if kind == "appeal":
        return "case_appealed", {"case": args["case"], "reasons": args.get("reasons") or "",
                                 "action": name}
    params = action.get("params") or {}
    has_parties = str(params.get("parties", "")).rstrip("?") == "list"
    concerns, data = [], {}
    for param, value in args.items():
        type_ = str(params.get(param, "")).rstrip("?")
        if type_ in CONCERN_KINDS:
            concerns.append({"kind": type_, "id": str(value)})
        elif param != "question" and not (param == "parties" and has_parties):
            data[param] = value
    return "case_opened", {
        "number": next_case_number(state), "question": str(args["question"]).strip(),
        "concerns": concerns, "parties": list(args.get("parties") or []) if has_parties
        else [], "data": data, "action": name}

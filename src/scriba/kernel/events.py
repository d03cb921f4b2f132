"""Events and the fold that derives a game's state from them.

An event is ``{"seq", "type", "time", "actor", "payload"}``. :func:`apply_event` is the
only place state changes; it runs no rule code, so replaying a log is pure and fast, and
a replay of the stored log always equals the live state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from scriba.kernel import patch
from scriba.kernel.cases import HANDLERS as CASE_HANDLERS
from scriba.kernel.changes import apply_change
from scriba.kernel.registry import RECORD_ONLY
from scriba.kernel.state import (
    ACTIVE,
    GameState,
    forget_derived,
    note_proposal_change,
    touch,
    touch_all,
)
from scriba.kernel.upgrade import stamp, upgrade

Event = dict[str, Any]


def make_event(type_: str, time: str, actor: str | None = None, **payload: Any) -> Event:
    return stamp({"seq": 0, "type": type_, "time": time, "actor": actor, "payload": payload})


def fold(events: Iterable[Event], state: GameState | None = None) -> GameState:
    state = state or GameState()
    for event in events:
        apply_event(state, event)
    return state


def apply_event(state: GameState, event: Event) -> None:
    """Apply one event in place; inside :func:`scriba.kernel.journal.trial` every change is
    noted on the state's journal first, so that it can be undone. Each handler also gives
    the parts it changes a new id (:func:`scriba.kernel.state.touch`): the view's parts
    are cached by those ids."""
    event = upgrade(event)  # an event of an older schema, as the handlers know it now
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.attrs(state)
    state.seq = event["seq"]
    state.time = max(state.time, event["time"])
    handler = _HANDLERS.get(event["type"])
    if handler is not None:
        handler(state, event["payload"], event)
    elif event["type"] not in RECORD_ONLY:
        raise ValueError(f"unknown event type {event['type']!r}")


def _game_created(state: GameState, p: dict[str, Any], event: Event) -> None:
    journal = state.__dict__.get("_journal")
    if journal is not None:
        for name in ("game_id", "name", "ruleset", "language", "seed", "clock", "settings",
                     "vars"):
            journal.attr(state, name)
        journal.contents(state.rules)
        journal.contents(state.proposals)
        journal.contents(state.cases)
    forget_derived(state)
    touch_all(state)
    state.game_id = p["game_id"]
    state.name = p.get("name", p["game_id"])
    state.ruleset = p["ruleset"]
    state.language = p.get("language", "en")
    state.seed = p["seed"]
    state.clock = p.get("clock", "simulated")
    state.settings = dict(p.get("settings") or {})
    state.vars = dict(p.get("vars") or {})
    for rule in p["rules"]:
        state.rules[str(rule["id"])] = {
            "id": str(rule["id"]),
            "title": rule.get("title", ""),
            "text": rule.get("text", ""),
            "code": rule.get("code") or None,
            "attributes": dict(rule.get("attributes") or {}),
            "history": list(rule.get("history") or [
                {"change": "initial", "date": event["time"][:10], "at": event["time"],
                 "cause": {"kind": "initial"}}]),
            "in_force": rule.get("in_force", True),
        }
    for proposal in p.get("proposals") or []:
        state.proposals[str(proposal["number"])] = dict(proposal)
    # Cases a game starts with (an import's precedents), whole as cases.py keeps them.
    for case in p.get("cases") or []:
        state.cases[str(case["number"])] = dict(case)


def _player_joined(state: GameState, p: dict[str, Any], event: Event) -> None:
    previous = state.players.get(p["player"], {})
    touch(state, "players")
    _note(state, state.players, p["player"])
    state.players[p["player"]] = {
        "status": ACTIVE,
        "joined": event["time"],
        "vars": {**previous.get("vars", {}), **p.get("vars", {})},
    }


def _player_status(state: GameState, p: dict[str, Any], event: Event) -> None:
    player = state.players[p["player"]]
    touch(state, "players")
    _note(state, player, "status")
    player["status"] = p["status"]


def _var_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    holder = state.vars if p.get("player") is None else state.players[p["player"]]["vars"]
    touch(state, "vars" if p.get("player") is None else "players")
    _note(state, holder, p["name"])
    if "value" in p:
        holder[p["name"]] = p["value"]
    else:  # an addition: the value is recorded on the event once it has been applied
        holder[p["name"]] = holder.get(p["name"], p.get("initial", 0)) + p["delta"]


def _office_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    touch(state, "offices")
    _note(state, state.offices, p["office"])
    state.offices[p["office"]] = p.get("holder")


def _proposal_submitted(state: GameState, p: dict[str, Any], event: Event) -> None:
    _touch_proposal(state, p["number"], status=True)
    _note(state, state.proposals, str(p["number"]))
    _index_open(state, str(p["number"]), True)
    state.proposals[str(p["number"])] = {
        "number": p["number"],
        "label": p.get("label"),
        "author": p["author"],
        "title": p.get("title", ""),
        "text": p.get("text", ""),
        "changes": p["changes"],
        "status": "open",
        "submitted": event["time"],
        "votes": {},
        "data": dict(p.get("data") or {}),
    }


def _vote_cast(state: GameState, p: dict[str, Any], event: Event) -> None:
    proposal = state.proposals[str(p["proposal"])]
    _touch_proposal(state, p["proposal"])
    _note(state, proposal["votes"], p["player"])
    proposal["votes"][p["player"]] = {"choice": p["choice"], "time": event["time"],
                                      **(p.get("data") or {})}


def _vote_withdrawn(state: GameState, p: dict[str, Any], event: Event) -> None:
    votes = state.proposals[str(p["proposal"])]["votes"]
    _touch_proposal(state, p["proposal"])
    _note_contents(state, votes)
    votes.pop(p["player"], None)


def _proposal_updated(state: GameState, p: dict[str, Any], event: Event) -> None:
    data = state.proposals[str(p["proposal"])]["data"]
    _touch_proposal(state, p["proposal"])
    _note(state, data, p["key"])
    data[p["key"]] = p["value"]


def _proposal_resolved(state: GameState, p: dict[str, Any], event: Event) -> None:
    proposal = state.proposals[str(p["proposal"])]
    _touch_proposal(state, p["proposal"], status=True)
    _note_contents(state, proposal)
    _index_open(state, str(p["proposal"]), p["outcome"] == "open")
    proposal["status"] = p["outcome"]
    proposal["resolved"] = event["time"]
    proposal["tally"] = p.get("tally") or {}
    if p.get("reason") is not None:  # why: veto, quorum, deferral, ... (rulecode/api.py)
        proposal["reason"] = p["reason"]


def _rule_changed(state: GameState, p: dict[str, Any], event: Event) -> None:
    journal = state.__dict__.get("_journal")
    if journal is not None:
        # A change touches its rule (and a renumbering the target's place): those rules'
        # fields and the order of the rules are kept; histories only ever grow.
        journal.contents(state.rules)
        for rule_id in (p["change"].get("rule"), p["change"].get("to")):
            rule = state.rules.get(str(rule_id)) if rule_id is not None else None
            if rule is not None:
                journal.contents(rule)
                journal.contents(rule["history"])
                journal.contents(rule["attributes"])
    forget_derived(state)
    apply_change(state.rules, p["change"], p.get("cause") or {}, event["time"])


def _timer_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    touch(state, "timers")
    _note(state, state.timers, p["id"])
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.attr(state, "next_timer")
    state.timers[p["id"]] = {k: p.get(k) for k in ("id", "name", "at", "data", "rule")}
    state.next_timer = max(state.next_timer, int(p["id"].lstrip("t")) + 1)


def _timer_gone(state: GameState, p: dict[str, Any], event: Event) -> None:
    touch(state, "timers")
    _note_contents(state, state.timers)
    state.timers.pop(p["id"], None)


def _asset_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    touch(state, "assets")
    if p["kind"] not in state.assets:
        _note(state, state.assets, p["kind"])
    kind = state.assets.setdefault(p["kind"], {})
    _note(state, kind, p["id"])
    kind[p["id"]] = {"owner": p.get("owner"), "data": dict(p.get("data") or {})}


def _asset_destroyed(state: GameState, p: dict[str, Any], event: Event) -> None:
    kind = state.assets.get(p["kind"], {})
    touch(state, "assets")
    _note_contents(state, kind)
    kind.pop(p["id"], None)


def _notice(state: GameState, p: dict[str, Any], event: Event) -> None:
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.length(state.notices)
    state.notices.append({"time": event["time"], "seq": event["seq"], **p})


def _winner_declared(state: GameState, p: dict[str, Any], event: Event) -> None:
    _note_contents(state, state.winners)
    for player in p["players"]:
        if player not in state.winners:
            state.winners.append(player)
    if p.get("end", True):
        state.ended = True


def _game_ended(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.ended = True


def _record_corrected(state: GameState, p: dict[str, Any], event: Event) -> None:
    """The game as recomputed by a correction: its patch applied to every part it names
    (seq and time stay the log's). Each part is replaced whole, not changed in place, so
    that an undo log restores it; what is derived from the state is forgotten."""
    journal = state.__dict__.get("_journal")
    changed: dict[str, list[dict[str, Any]]] = {}
    for op in p["patch"]:
        changed.setdefault(op["path"][0], []).append({**op, "path": op["path"][1:]})
    for name, ops in changed.items():
        if name in ("seq", "time") or not hasattr(state, name):
            continue
        if journal is not None:
            journal.attr(state, name)
        setattr(state, name, patch.apply(getattr(state, name), ops))
    for key in ("_open", "_proposal_log", "_proposal_log_start"):
        if journal is not None:
            journal.key(state.__dict__, key)
        state.__dict__.pop(key, None)
    forget_derived(state)
    touch_all(state)


def _touch_proposal(state: GameState, number: Any, status: bool = False) -> None:
    touch(state, ("proposal", str(number)))
    touch(state, "proposal_contents")  # some proposal changed
    note_proposal_change(state, str(number))
    if status:  # a proposal made or resolved: which ones the view holds may change
        touch(state, "proposal_statuses")


def _note(state: GameState, container: dict[str, Any], key: str) -> None:
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(container, key)


def _note_contents(state: GameState, container: dict[str, Any] | list[Any]) -> None:
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.contents(container)


def _index_open(state: GameState, number: str, is_open: bool) -> None:
    """Keep the index of open proposals (when one has been built) in step."""
    index = state.__dict__.get("_open")
    if index is None:
        return
    _note_contents(state, index)
    if is_open:
        index[number] = None
    else:
        index.pop(number, None)


_HANDLERS: dict[str, Callable[[GameState, dict[str, Any], Event], None]] = {
    "game_created": _game_created,
    "player_joined": _player_joined,
    "player_status": _player_status,
    "var_set": _var_set,
    "office_set": _office_set,
    "proposal_submitted": _proposal_submitted,
    "vote_cast": _vote_cast,
    "vote_withdrawn": _vote_withdrawn,
    "proposal_updated": _proposal_updated,
    "proposal_resolved": _proposal_resolved,
    "rule_changed": _rule_changed,
    "timer_set": _timer_set,
    "timer_fired": _timer_gone,
    "timer_cancelled": _timer_gone,
    "asset_set": _asset_set,
    "asset_destroyed": _asset_destroyed,
    "notice": _notice,
    "winner_declared": _winner_declared,
    "game_ended": _game_ended,
    "record_corrected": _record_corrected,
    **CASE_HANDLERS,
}

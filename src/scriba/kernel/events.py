"""Events and the fold that derives a game's state from them.

An event is ``{"seq", "type", "time", "actor", "payload"}``. :func:`apply_event` is the
only place state changes; it runs no rule code, so replaying a log is pure and fast, and
a replay of the stored log always equals the live state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from scriba.kernel.changes import apply_change
from scriba.kernel.registry import RECORD_ONLY
from scriba.kernel.state import ACTIVE, GameState
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
    event = upgrade(event)  # an event of an older schema, as the handlers know it now
    state.seq = event["seq"]
    state.time = max(state.time, event["time"])
    handler = _HANDLERS.get(event["type"])
    if handler is not None:
        handler(state, event["payload"], event)
    elif event["type"] not in RECORD_ONLY:
        raise ValueError(f"unknown event type {event['type']!r}")


def _game_created(state: GameState, p: dict[str, Any], event: Event) -> None:
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


def _player_joined(state: GameState, p: dict[str, Any], event: Event) -> None:
    previous = state.players.get(p["player"], {})
    state.players[p["player"]] = {
        "status": ACTIVE,
        "joined": event["time"],
        "vars": {**previous.get("vars", {}), **p.get("vars", {})},
    }


def _player_status(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.players[p["player"]]["status"] = p["status"]


def _var_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    holder = state.vars if p.get("player") is None else state.players[p["player"]]["vars"]
    if "value" in p:
        holder[p["name"]] = p["value"]
    else:  # an addition: the value is recorded on the event once it has been applied
        holder[p["name"]] = holder.get(p["name"], p.get("initial", 0)) + p["delta"]


def _office_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.offices[p["office"]] = p.get("holder")


def _proposal_submitted(state: GameState, p: dict[str, Any], event: Event) -> None:
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
    proposal["votes"][p["player"]] = {"choice": p["choice"], "time": event["time"],
                                      **(p.get("data") or {})}


def _vote_withdrawn(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.proposals[str(p["proposal"])]["votes"].pop(p["player"], None)


def _proposal_updated(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.proposals[str(p["proposal"])]["data"][p["key"]] = p["value"]


def _proposal_resolved(state: GameState, p: dict[str, Any], event: Event) -> None:
    proposal = state.proposals[str(p["proposal"])]
    proposal["status"] = p["outcome"]
    proposal["resolved"] = event["time"]
    proposal["tally"] = p.get("tally") or {}
    if p.get("reason") is not None:  # why: veto, quorum, deferral, ... (rulecode/api.py)
        proposal["reason"] = p["reason"]


def _rule_changed(state: GameState, p: dict[str, Any], event: Event) -> None:
    apply_change(state.rules, p["change"], p.get("cause") or {}, event["time"])


def _timer_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.timers[p["id"]] = {k: p.get(k) for k in ("id", "name", "at", "data", "rule")}
    state.next_timer = max(state.next_timer, int(p["id"].lstrip("t")) + 1)


def _timer_gone(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.timers.pop(p["id"], None)


def _asset_set(state: GameState, p: dict[str, Any], event: Event) -> None:
    kind = state.assets.setdefault(p["kind"], {})
    kind[p["id"]] = {"owner": p.get("owner"), "data": dict(p.get("data") or {})}


def _asset_destroyed(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.assets.get(p["kind"], {}).pop(p["id"], None)


def _notice(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.notices.append({"time": event["time"], "seq": event["seq"], **p})


def _winner_declared(state: GameState, p: dict[str, Any], event: Event) -> None:
    for player in p["players"]:
        if player not in state.winners:
            state.winners.append(player)
    if p.get("end", True):
        state.ended = True


def _game_ended(state: GameState, p: dict[str, Any], event: Event) -> None:
    state.ended = True


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
}

"""The read-only picture of a game that rule code receives as ``game``.

Plain data only (the sandbox copies it in), in the shape documented in
:mod:`scriba.rulecode.api`. Randomness enters here and only here: ``random`` is derived
from the game's seed and the sequence number, so every replay sees the same value.
"""

from __future__ import annotations

import hashlib
from typing import Any

from scriba.kernel.changes import REVISING
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import to_ts

# Resolved proposals beyond this many are left out of the view, to keep calls cheap in
# long games; open ones are always there.
RECENT_RESOLVED = 60


def deterministic_random(seed: int, seq: int) -> int:
    digest = hashlib.sha256(f"{seed}:{seq}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def build_view(state: GameState, order: list[str], now: str | None = None,
               with_text: bool | None = None) -> dict[str, Any]:
    """The view; rule texts and histories are in it for queries always, for other hooks
    unless the ruleset's setting ``view_rule_text`` is false (they make every call dearer)."""
    now = now or state.time
    if with_text is None:
        with_text = state.settings.get("view_rule_text", True)
    # A ruleset whose rules never read old proposals' texts leaves them out (they are
    # most of the view's weight in a game with long proposals).
    resolved_text = state.settings.get("view_proposal_text", True)
    proposals = {number: _proposal_view(state.proposals[number], resolved_text)
                 for number in _visible_proposals(state)}
    return {
        "game_id": state.game_id,
        "ruleset": state.ruleset,
        "now": now,
        "now_ts": to_ts(now) if now else 0,
        "seq": state.seq,
        "random": deterministic_random(state.seed, state.seq),
        "settings": state.settings,
        "vars": state.vars,
        "offices": state.offices,
        "players": state.players,
        "player_order": list(state.players),
        "active_players": state.active_players(),
        "rules": [_rule_view(state.rules[rid], with_text) for rid in order],
        "repealed_rules": [
            {"id": r["id"], "title": r["title"], "attributes": r["attributes"],
             "last_change": r["history"][-1] if r["history"] else None}
            for r in state.rules.values() if not r["in_force"]],
        "proposals": proposals,
        "timers": sorted(state.timers.values(), key=lambda t: (t["at"], t["id"])),
        "assets": state.assets,
        "winners": state.winners,
        "ended": state.ended,
    }


def _visible_proposals(state: GameState) -> list[str]:
    """Open proposals and the last RECENT_RESOLVED resolved ones, in submission order.

    Found from the newest backwards, so the cost does not grow with the game: the tail
    walked holds the recent resolved ones; open ones older than it come first."""
    tail: list[str] = []
    resolved = 0
    for number in reversed(state.proposals):
        if resolved >= RECENT_RESOLVED:
            break
        tail.append(number)
        if state.proposals[number]["status"] != "open":
            resolved += 1
    tail.reverse()
    in_tail = set(tail)
    return [n for n in state.open_proposals() if n not in in_tail] + tail


def _proposal_view(p: dict[str, Any], with_text: bool) -> dict[str, Any]:
    if p["status"] == "open":
        return p
    return {k: v for k, v in p.items() if k != "changes" and (with_text or k != "text")}


# id(history) -> (history, entries counted, revisions among them): a rule's history only
# grows (or, when a trial is undone, shrinks back), so its revision is counted once and
# then only for the entries added since, instead of on every view.
_REVISIONS: dict[int, tuple[list[Any], int, int]] = {}


def _revision(history: list[dict[str, Any]]) -> int:
    known = _REVISIONS.get(id(history))
    if known is None or known[0] is not history or known[1] > len(history):
        known = (history, 0, 0)
    count = known[2] + sum(1 for entry in history[known[1]:] if entry["change"] in REVISING)
    if len(_REVISIONS) > 20000:
        _REVISIONS.clear()
    _REVISIONS[id(history)] = (history, len(history), count)
    return count


def _rule_view(rule: dict[str, Any], with_text: bool) -> dict[str, Any]:
    view = {"id": rule["id"], "title": rule["title"], "attributes": rule["attributes"],
            "revision": _revision(rule["history"]), "has_code": bool(rule["code"])}
    if with_text:  # a ruleset with very long rule texts may leave them out to stay fast
        view["text"] = rule["text"]
        view["history"] = rule["history"]
    return view

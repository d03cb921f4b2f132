"""The read-only picture of a game that rule code receives as ``game``.

Plain data only (the sandbox copies it in), in the shape documented in
:mod:`scriba.rulecode.api`. Randomness enters here and only here: ``random`` is derived
from the game's seed and the sequence number, so every replay sees the same value.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scriba.kernel.caches import keep
from scriba.kernel.changes import REVISING
from scriba.kernel.state import GameState, part_stamp, rules_version
from scriba.kernel.timeutil import to_ts

# Resolved proposals beyond this many are left out of the view, to keep calls cheap in
# long games; open ones are always there.
RECENT_RESOLVED = 60


def deterministic_random(seed: int, seq: int) -> int:
    digest = hashlib.sha256(f"{seed}:{seq}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


# Resolved proposals travel in blocks of this many places, once all are resolved: a long
# game sends a few parts, not one per proposal, and a block never changes after.
PROPOSAL_BLOCK = 16


@dataclass(frozen=True)
class ViewPart:
    """Some of the view's entries, named by a key that changes whenever they do.

    ``key`` names the content in this process (it is made of :func:`part_stamp` ids):
    whoever holds the part under that key holds exactly what ``build()`` returns. Keys
    starting with ``"p:"`` hold proposals (number → proposal) for ``game["proposals"]``;
    the others top-level entries of the view."""

    key: str
    build: Callable[[], dict[str, Any]]
    json: bytes | None = None  # its JSON, when made as the view was built (sealed)


@dataclass(frozen=True)
class GameView:
    """The view of a game as it is when built (read it before the state changes again):
    a few small entries that change with every event (``inline``) and parts that are
    cached by whoever receives them (the sandbox's workers)."""

    inline: dict[str, Any]
    parts: list[ViewPart]
    # Names which proposals the parts hold and how they are grouped: two views with the
    # same layout differ only in the content of parts at the same places.
    layout: int | None = None

    @property
    def settings(self) -> dict[str, Any]:
        return self.inline.get("settings") or {}

    def to_dict(self) -> dict[str, Any]:
        """The whole view as one plain dict (the order of its keys is the order in which
        a worker assembles it)."""
        view = dict(self.inline)
        proposals: dict[str, Any] = {}
        for part in self.parts:
            (proposals if part.key.startswith("p:") else view).update(part.build())
        if proposals:
            view["proposals"] = proposals
        return view


def build_view(state: GameState, order: list[str], now: str | None = None,
               with_text: bool | None = None) -> GameView:
    """The view; rule texts and histories are in it for queries always, for other hooks
    unless the ruleset's setting ``view_rule_text`` is false (they make every call dearer)."""
    now = now or state.time
    if with_text is None:
        with_text = state.settings.get("view_rule_text", True)
    inline = {
        "game_id": state.game_id,
        "ruleset": state.ruleset,
        "now": now,
        "now_ts": to_ts(now) if now else 0,
        "seq": state.seq,
        "random": deterministic_random(state.seed, state.seq),
        "settings": state.settings,  # set when the game is created, and small
        "proposals": {},
        "winners": list(state.winners),
        "ended": state.ended,
    }
    rules_key = f"rules:{rules_version(state)}:{_order_id(order)}:{int(bool(with_text))}"
    parts = [
        _entries(state, "vars", lambda: {"vars": state.vars}),
        _entries(state, "offices", lambda: {"offices": state.offices}),
        _entries(state, "players", lambda: {
            "players": state.players, "player_order": list(state.players),
            "active_players": state.active_players()}),
        ViewPart(rules_key, lambda: {
            "rules": [_rule_view(state.rules[rid], with_text) for rid in order],
            "repealed_rules": [
                {"id": r["id"], "title": r["title"], "attributes": r["attributes"],
                 "last_change": r["history"][-1] if r["history"] else None}
                for r in state.rules.values() if not r["in_force"]]}),
        _entries(state, "timers", lambda: {
            "timers": sorted(state.timers.values(), key=lambda t: (t["at"], t["id"]))}),
        _entries(state, "assets", lambda: {"assets": state.assets}),
    ]
    return GameView(inline, parts + _proposal_parts(state),
                    part_stamp(state, "proposal_statuses"))


def _entries(state: GameState, part: str, build: Callable[[], dict[str, Any]]) -> ViewPart:
    return ViewPart(f"{part}:{part_stamp(state, part)}", build)


# Orders of rules seen, each with a small id (a view's key names its order by it).
_ORDERS: dict[tuple[str, ...], int] = {}


def _order_id(order: list[str]) -> int:
    key = tuple(order)
    found = _ORDERS.get(key)
    if found is None:
        if len(_ORDERS) > 4096:
            _ORDERS.clear()  # the ids stay unique: they come from a counter
        found = _ORDERS[key] = next(_ORDER_IDS)
    return found


_ORDER_IDS = itertools.count(1)


# (stamp of the proposals' statuses, with text) -> the numbers in each of their parts:
# the same until a proposal is made or resolved, whatever the votes.
_LAYOUTS: OrderedDict[tuple[int, bool], list[list[str]]] = OrderedDict()
# (layout, stamp of any proposal's content) -> the parts' keys: the same until a proposal
# changes, e.g. for every variable set in between.
_RUN_KEYS: OrderedDict[tuple[int, bool, int], list[str]] = OrderedDict()


def _proposal_parts(state: GameState) -> list[ViewPart]:
    with_text = bool(state.settings.get("view_proposal_text", True))
    layout_key = (part_stamp(state, "proposal_statuses"), with_text)
    runs = _LAYOUTS.get(layout_key)
    if runs is None:
        runs = keep(_LAYOUTS, layout_key, _proposal_runs(state), 256)
    keys_key = (*layout_key, part_stamp(state, "proposal_contents"))
    keys = _RUN_KEYS.get(keys_key)
    if keys is None:
        prefix = f"p:{int(with_text)}:"
        keys = keep(_RUN_KEYS, keys_key, [
            prefix + ",".join([str(part_stamp(state, ("proposal", n))) for n in run])
            for run in runs], 256)
    return [ViewPart(key, functools.partial(_proposals_view, state, run, with_text))
            for key, run in zip(keys, runs, strict=True)]


def _proposal_runs(state: GameState) -> list[list[str]]:
    """The visible proposals (:func:`_visible_proposals`), in view order, in parts: a
    block of PROPOSAL_BLOCK places all resolved and in view is one part (it no longer
    changes); any other proposal is a part of its own (votes change an open one; one just
    resolved, or at the window's edge, joins or leaves without the others being sent)."""
    visible = _visible_proposals(state)
    resolved_in_block = Counter(place // PROPOSAL_BLOCK for number, place in visible
                                if place is not None
                                and state.proposals[number]["status"] != "open")
    runs: list[list[str]] = []
    last_block = None
    for number, place in visible:
        block = None if place is None or state.proposals[number]["status"] == "open" \
            else place // PROPOSAL_BLOCK
        if block is None or resolved_in_block[block] < PROPOSAL_BLOCK:
            runs.append([number])
            last_block = None
        elif block == last_block:
            runs[-1].append(number)
        else:
            runs.append([number])
            last_block = block
    return runs


def _proposals_view(state: GameState, numbers: list[str], with_text: bool) -> dict[str, Any]:
    return {n: _proposal_view(state.proposals[n], with_text) for n in numbers}


def _visible_proposals(state: GameState) -> list[tuple[str, int | None]]:
    """Open proposals and the last RECENT_RESOLVED resolved ones, in submission order,
    each with its place among all proposals (None: an open one older than those).

    Found from the newest backwards, so the cost does not grow with the game: the tail
    walked holds the recent resolved ones; open ones older than it come first."""
    tail: list[tuple[str, int | None]] = []
    resolved = 0
    count = len(state.proposals)
    for back, number in enumerate(reversed(state.proposals)):
        if resolved >= RECENT_RESOLVED:
            break
        tail.append((number, count - 1 - back))
        if state.proposals[number]["status"] != "open":
            resolved += 1
    tail.reverse()
    in_tail = {number for number, _ in tail}
    return [(n, None) for n in state.open_proposals() if n not in in_tail] + tail


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

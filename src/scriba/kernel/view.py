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
from scriba.kernel.state import GameState, part_stamp, proposal_changes, rules_version
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
class ProposalParts:
    """The proposals' parts of a view: their keys in view order (a list never changed once
    made: the next view's is a copy with the few keys that changed) and how to build the
    part at a place. Not a list of :class:`ViewPart`: a view with 800 open proposals
    would make 800 of them on every vote."""

    keys: list[str]
    build: Callable[[int], dict[str, Any]]
    # The JSON of parts encoded when the view was sealed, by key (see rulecode.viewparts).
    json: dict[str, bytes] | None = None
    # An id of these keys (never reused in this process), and the keys they were made
    # from by changing the few at ``changed`` places (None: made afresh), so that whoever
    # holds those can be told only what changed.
    id: int = 0
    base: int | None = None
    changed: tuple[int, ...] = ()

    def part(self, index: int) -> ViewPart:
        key = self.keys[index]
        return ViewPart(key, functools.partial(self.build, index),
                        self.json.get(key) if self.json is not None else None)


_NO_PROPOSALS = ProposalParts([], lambda index: {})


@dataclass(frozen=True)
class GameView:
    """The view of a game as it is when built (read it before the state changes again):
    a few small entries that change with every event (``inline``) and parts that are
    cached by whoever receives them (the sandbox's workers): top-level ``entries`` and
    the ``proposals``' parts."""

    inline: dict[str, Any]
    entries: list[ViewPart]
    proposals: ProposalParts = _NO_PROPOSALS
    # Names which proposals the parts hold and how they are grouped: two views with the
    # same layout differ only in the content of parts at the same places.
    layout: int | None = None

    @property
    def settings(self) -> dict[str, Any]:
        return self.inline.get("settings") or {}

    @property
    def parts(self) -> list[ViewPart]:
        """Every part, entries first (tests, :meth:`to_dict`: it walks every proposal)."""
        return self.entries + [self.proposals.part(i) for i in range(len(self.proposals.keys))]

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
        _entries(state, "cases", lambda: {"cases": _cases_view(state)}),
    ]
    return GameView(inline, parts, _proposal_parts(state),
                    part_stamp(state, "proposal_statuses"))


def _cases_view(state: GameState) -> dict[str, Any]:
    """The cases not closed and the last RECENT_RESOLVED closed ones, in the docket's order:
    a game that imported thousands of old judgments (Agora's) does not send them all to
    every call whenever a case changes."""
    closed = [key for key, case in state.cases.items() if case["status"] == "closed"]
    if len(closed) <= RECENT_RESOLVED:
        return state.cases
    old = set(closed[:-RECENT_RESOLVED])
    return {key: case for key, case in state.cases.items() if key not in old}


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


@dataclass
class _Layout:
    """The visible proposals grouped in parts (:func:`_proposal_runs`), the same until a
    proposal is made or resolved, whatever the votes; and, by the stamp of the proposals'
    contents, the parts' keys for the latest contents seen, each with where it stands in
    the game's log of proposal changes (:func:`_Keys`)."""

    runs: list[list[str]]
    where: dict[str, int]  # number -> its part's place
    keys: OrderedDict[int, _Keys]


@dataclass(frozen=True)
class _Keys:
    keys: list[str]
    length: int  # of the log of proposal changes when they were made
    tail: list[tuple[int, str]]  # its last entries then
    id: int
    base: int | None  # the id of the keys these were made from
    changed: tuple[int, ...]  # the places changed since those


_KEYS_IDS = itertools.count(1)


# (stamp of the proposals' statuses, with text) -> its layout.
_LAYOUTS: OrderedDict[tuple[int, bool], _Layout] = OrderedDict()
_KEYS_KEPT = 8  # keys by contents, for each layout: trials branch off a recent one
_TAIL = 8  # entries of the log kept with keys: how far back a trial may have branched off
# How many changes since known keys are made again, at most, instead of all the keys.
_LOOK_BACK = 32


def _proposal_parts(state: GameState) -> ProposalParts:
    with_text = bool(state.settings.get("view_proposal_text", True))
    layout_key = (part_stamp(state, "proposal_statuses"), with_text)
    layout = _LAYOUTS.get(layout_key)
    if layout is None:
        runs = _proposal_runs(state)
        layout = keep(_LAYOUTS, layout_key, _Layout(
            runs, {n: i for i, run in enumerate(runs) for n in run}, OrderedDict()), 64)
    contents = part_stamp(state, "proposal_contents")
    found = layout.keys.get(contents)
    if found is None:
        start, log = proposal_changes(state)
        keys, base, changed = _proposal_keys(state, layout, start, log,
                                             f"p:{int(with_text)}:")
        found = keep(layout.keys, contents, _Keys(keys, start + len(log), log[-_TAIL:],
                                                  next(_KEYS_IDS), base, changed), _KEYS_KEPT)
    runs = layout.runs
    return ProposalParts(found.keys,
                         lambda index: _proposals_view(state, runs[index], with_text),
                         id=found.id, base=found.base, changed=found.changed)


def _proposal_keys(state: GameState, layout: _Layout, start: int,
                   log: list[tuple[int, str]], prefix: str
                   ) -> tuple[list[str], int | None, tuple[int, ...]]:
    """The parts' keys for the proposals as they are: a copy of keys known for contents
    a few changes away with the parts of those changes keyed again; all keyed afresh if
    none is known.

    The log of proposal changes says which changed: keys made when the log was another
    are right for this one but for the proposals changed, in either, after the last
    entry the two share (each entry names one change by a stamp never reused: a shared
    entry means a shared past). After a trial is undone the log has other entries past
    that point: the trial's changes, and the ones since, are keyed again."""
    end = start + len(log)  # places are counted among all the game's entries
    if log and log[-1][0] == part_stamp(state, "proposal_contents"):  # the log is of now
        for known in reversed(layout.keys.values()):
            tail_start = known.length - len(known.tail)  # the place of the known tail
            for shared in range(min(known.length, end), max(tail_start, start), -1):
                if log[shared - 1 - start] != known.tail[shared - 1 - tail_start]:
                    continue
                if end - shared > _LOOK_BACK:
                    break
                keys = list(known.keys)  # a copy of pointers: cheap beside a key's making
                changed = {n for _, n in known.tail[shared - tail_start:]} | \
                    {n for _, n in log[shared - start:]}
                places = tuple(sorted({layout.where[n] for n in changed if n in layout.where}))
                for place in places:
                    keys[place] = _run_key(state, prefix, layout.runs[place])
                return keys, known.id, places
    return [_run_key(state, prefix, run) for run in layout.runs], None, ()


def _run_key(state: GameState, prefix: str, run: list[str]) -> str:
    return prefix + ",".join([str(part_stamp(state, ("proposal", n))) for n in run])


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

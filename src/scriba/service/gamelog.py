"""A game's log as the reads keep it, with what the chronicle looks up in it indexed as the
log grows (issue 18: the cost of a page follows the page, not the game).

A page of the chronicle tells a hundred events; without an index it walked the whole log
to learn what they name (a timer's name, a proposal's title, a renumbered rule), who
joined when, what is sealed and what a correction decided again. Each index is extended
by the events appended since the last read, never rebuilt.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from scriba.kernel.events import Event
from scriba.kernel.sealing import REVEALED
from scriba.service.source import GameSource

MISSING = object()
NOTED = ("timer_set", "asset_set", "asset_destroyed", "proposal_submitted", "rule_changed")


class Copied:
    """A rule's title at a renumbering: the title its old number had just before."""

    __slots__ = ("rule", "seq")

    def __init__(self, rule: str, seq: int) -> None:
        self.rule, self.seq = rule, seq


class History:
    """Values of keys as events set them: the value a key had before any seq.

    Only appended to, in seq order: a reader of an older log (bounded by its own seqs)
    reads the same answers while a newer log extends it."""

    def __init__(self) -> None:
        self._by_key: dict[Any, tuple[list[int], list[Any]]] = {}

    def put(self, key: Any, seq: int, value: Any) -> None:
        seqs, values = self._by_key.setdefault(key, ([], []))
        values.append(value)  # the value first: a reader finding the seq finds its value
        seqs.append(seq)

    def before(self, key: Any, seq: int) -> Any:
        """The value last set before event ``seq``, else ``MISSING``."""
        found = self._by_key.get(key)
        if not found:
            return MISSING
        index = bisect_left(found[0], seq)
        return found[1][index - 1] if index else MISSING


class NarratorMemory:
    """What :meth:`.narrate.Narrator.note` remembers, as it stood before any event: the
    timers' names, the assets that exist, proposals' titles, rules' titles (raw, before
    a reader's words)."""

    def __init__(self) -> None:
        self.timers = History()
        self.assets = History()
        self.proposals = History()
        self.rule_titles = History()

    def note(self, event: Event) -> None:
        kind, seq = event["type"], event["seq"]
        p = event.get("payload") or {}
        if kind == "timer_set":
            self.timers.put(str(p.get("id")), seq, p.get("name", ""))
        elif kind in ("asset_set", "asset_destroyed"):
            self.assets.put((str(p.get("kind")), str(p.get("id"))), seq, kind == "asset_set")
        elif kind == "proposal_submitted":
            self.proposals.put(str(p.get("number")), seq, str(p.get("title") or ""))
        elif kind == "rule_changed":
            change = p.get("change") or {}
            rule = str(change.get("rule"))
            if change.get("type") in ("enact", "retitle", "amend", "reenact") \
                    and change.get("title"):
                self.rule_titles.put(rule, seq, str(change["title"]))
            elif change.get("type") == "renumber":
                self.rule_titles.put(str(change.get("to")), seq, Copied(rule, seq))


class GameLog:
    """The events of a game (oldest first) and their indexes."""

    def __init__(self, events: Sequence[Event] = (), base: GameLog | None = None) -> None:
        if base is None:
            self.events: list[Event] = []
            self.memory = NarratorMemory()
            self.renumbered: list[tuple[int, str, str]] = []  # (seq, from, to)
            self.corrections: list[tuple[int, int, int]] = []  # (first, last, number)
            self.sealing: list[Event] = []  # the sealed events and the reveals
            self.joined: dict[str, int] = {}  # player → the seq they first joined at
        else:  # the lists are new (a reader of ``base`` keeps its own); see History
            self.events = list(base.events)
            self.memory, self.joined = base.memory, base.joined
            self.renumbered, self.corrections = list(base.renumbered), list(base.corrections)
            self.sealing = list(base.sealing)
        for event in events:
            self._index(event)
        self.events.extend(events)

    def _index(self, event: Event) -> None:
        kind = event["type"]
        p = event.get("payload") or {}
        if kind in NOTED:
            self.memory.note(event)
        if kind == "rule_changed" and isinstance(p.get("change"), dict) \
                and p["change"].get("type") == "renumber":
            change = p["change"]
            self.renumbered.append((event["seq"], str(change.get("rule")),
                                    str(change.get("to"))))
        elif kind == "record_corrected":
            self.corrections.append((int(p["point"]), int(p["through"]), int(p["number"])))
        elif kind == "player_joined":
            self.joined.setdefault(str(p.get("player")), event["seq"])
        if kind == REVEALED or isinstance(p.get("sealed"), dict):
            self.sealing.append(event)

    def position(self, seq: int) -> int:
        """The index of the first event from ``seq`` on (``len`` if none)."""
        return bisect_left(self.events, seq, key=lambda event: event["seq"])

    def joined_before(self, player: str | None, seq: int) -> int | None:
        """The seq ``player`` first joined at, if before ``seq`` (this log's end)."""
        at = self.joined.get(str(player)) if player is not None else None
        return at if at is not None and at < seq else None


class LogCache:
    """Logs of recently read games, bounded in events; the least recently read go first.

    Events are never changed once stored, so a cached prefix stays true; callers must
    not change the events they get."""

    def __init__(self, max_events: int = 200_000) -> None:
        self.max_events = max_events
        self._logs: OrderedDict[str, GameLog] = OrderedDict()
        self._lock = threading.Lock()

    def events(self, source: GameSource, game_id: str) -> list[Event]:
        return self.log(source, game_id).events

    def log(self, source: GameSource, game_id: str) -> GameLog:
        with self._lock:
            cached = self._logs.pop(game_id, None)
        if cached is None:
            log = GameLog(source.events(game_id))
        else:
            after = cached.events[-1]["seq"] if cached.events else 0
            newer = source.events(game_id, after=after)
            log = GameLog(newer, base=cached) if newer else cached
        with self._lock:
            self._logs[game_id] = log
            total = sum(len(kept.events) for kept in self._logs.values())
            while total > self.max_events and len(self._logs) > 1:
                _, dropped = self._logs.popitem(last=False)
                total -= len(dropped.events)
        return log

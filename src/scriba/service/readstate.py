"""The reads' own states of the games, apart from the commands' (issue 18).

Each game's read state is folded from the stored log (from its latest snapshot) and caught
up at each read with one query for the events after its seq, so a read sees the last
committed version. It changes only under the game's *read* lock, which no command takes:
a read holds that lock while it uses the state (two reads of a game never see it move),
and a command never waits for a page. States unread for ``IDLE_STATE_S`` are let go.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from scriba.kernel.events import Event
from scriba.kernel.state import GameState
from scriba.service.states import GameLocks, LiveStates

IDLE_STATE_S = 600.0  # a game unread this long: its read state is let go
EVICT_EVERY_S = 60.0  # how often a read looks for idle states (cheap: a dict scan)


class ReadStates:
    """Per game: a read lock and a state caught up to the stored log at each read."""

    def __init__(self, snapshot: Callable[[str], tuple[int, dict[str, Any]] | None],
                 events_after: Callable[[str, int], list[Event]],
                 idle: float = IDLE_STATE_S) -> None:
        self._snapshot = snapshot
        self._events_after = events_after
        self._states = LiveStates()
        self._lock = GameLocks()
        self.idle = idle
        self._swept = time.monotonic()
        self._depth = threading.local()  # this thread's reads in progress, per game

    @contextmanager
    def holding(self, game_id: str) -> Iterator[GameState]:
        """The game's last committed state, held still for the block (re-entrant: a read
        inside a read of the same game sees the same state, not caught up again)."""
        self._sweep()
        depth: dict[str, int] = self._depth.__dict__.setdefault("games", {})
        with self._lock(game_id):
            state = self._states.get(game_id)
            if state is None or not depth.get(game_id):
                state = self._states.caught_up(
                    game_id, lambda: self._snapshot(game_id),
                    lambda seq: self._events_after(game_id, seq))
            depth[game_id] = depth.get(game_id, 0) + 1
            try:
                yield state
            finally:
                depth[game_id] -= 1

    def held(self, game_id: str) -> bool:
        """True inside a read of the game by this thread."""
        return bool(self._depth.__dict__.get("games", {}).get(game_id))

    def _sweep(self) -> None:
        """Every ``EVICT_EVERY_S``, the reads themselves let go of idle states: no
        scheduler needs to know about them."""
        now = time.monotonic()
        if now - self._swept < EVICT_EVERY_S:
            return
        self._swept = now
        self.evict_idle()

    def evict_idle(self, idle: float | None = None) -> int:
        """Let go of the states unread for ``idle`` seconds; how many went."""
        idle = self.idle if idle is None else idle
        gone = 0
        for game_id in [g for g in list(self._states) if self._states.unused_for(g) >= idle]:
            lock = self._lock(game_id)
            if self.held(game_id) or not lock.acquire(blocking=False):
                continue  # being read (the lock is re-entrant: this thread's read too)
            try:
                if game_id in self._states and self._states.unused_for(game_id) >= idle:
                    self._states.pop(game_id)
                    gone += 1
            finally:
                lock.release()
        return gone

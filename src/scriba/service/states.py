"""The live state of each game this process plays (the commands' cache), caught up from
the stored log. An entry changes only under its game's lock; setting one marks it used,
and a state unused for a while can be let go: read again from its snapshot when needed."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from scriba.kernel.events import Event, apply_event
from scriba.kernel.state import GameState


class LiveStates(dict[str, GameState]):
    def __init__(self) -> None:
        super().__init__()
        self.used: dict[str, float] = {}

    def __setitem__(self, game_id: str, state: GameState) -> None:
        super().__setitem__(game_id, state)
        self.used[game_id] = time.monotonic()

    def pop(self, game_id: str, default: Any = None) -> Any:  # type: ignore[override]
        self.used.pop(game_id, None)
        return super().pop(game_id, default)

    def clear(self) -> None:
        self.used.clear()
        super().clear()

    def caught_up(self, game_id: str, snapshot: Callable[[], tuple[int, dict[str, Any]] | None],
                  events_after: Callable[[int], list[Event]]) -> GameState:
        """The game's state brought up to the stored log (from ``snapshot`` if none is
        held), with the reads of the caller's choice (a transaction's, or the store's)."""
        state = self.get(game_id)
        if state is None:
            found = snapshot()
            state = GameState.from_dict(found[1]) if found else GameState()
        for event in events_after(state.seq):
            apply_event(state, event)
        self[game_id] = state
        return state

    def unused_for(self, game_id: str) -> float:
        """Seconds since the game's state was last set (0 for one not held)."""
        used = self.used.get(game_id)
        return 0.0 if used is None else time.monotonic() - used


class GameLocks:
    """A re-entrant lock per game, kept only while some thread holds or waits for it: a
    lock per text that ever reached an interface (a made-up game in a URL) would otherwise
    pile up for ever."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self._guard = threading.Lock()

    def __call__(self, game_id: str) -> Any:
        with self._guard:
            return self._locks.setdefault(game_id, threading.RLock())

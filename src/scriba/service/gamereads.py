"""One game as the reads see it (:class:`GameReads`, on which :class:`~.reads.Reads`
builds its views): the reads' own states, held still for a read (:func:`held_read`), the
log kept between reads, what stays secret from whom, and the game's own words.

Reads never append anything.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from scriba.kernel.events import Event, fold
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import normalize
from scriba.service import errors
from scriba.service.gamelog import GameLog, LogCache
from scriba.service.history import SmallCache
from scriba.service.messages import translate
from scriba.service.readstate import ReadStates
from scriba.service.secrets import Secrets, secrets_of
from scriba.service.source import GameSource
from scriba.service.words import Words, declared_words
from scriba.store.bulk import collector_paused

_T = TypeVar("_T")
# How long the rules' status of one state is reused: the letters and the reply of one
# command ask it within milliseconds; a clock-dependent status is asked anew after this.
STATUS_KEPT_S = 1.0


def held_read(method: Callable[..., _T]) -> Callable[..., _T]:
    """A read of one game (its id first): the game's read state held for the whole call."""
    @functools.wraps(method)
    def held(self: GameReads, game_id: str, *args: Any, **kwargs: Any) -> _T:
        with self._states.holding(game_id):
            return method(self, game_id, *args, **kwargs)
    return held


class GameReads:
    """A game's state and log for reading, from one source (the live states and their
    log); the views are :class:`~.reads.Reads`'."""

    def __init__(self, source: GameSource) -> None:
        self.source = source
        self.engine = source.engine
        # The reads' own states, apart from the commands' live ones (see readstate).
        self._states = ReadStates(source.latest_snapshot,
                                  lambda game_id, seq: source.events(game_id, after=seq))
        self._logs = LogCache()
        self._secrets = SmallCache(16)
        self._said_status = SmallCache(8)

    def load(self, game_id: str) -> GameState:
        """The game's last committed state, the reads' own (read it, never change it; it
        is caught up by the next read of the game: hold :meth:`reading` to use it at
        length)."""
        with self._states.holding(game_id) as state:
            return state

    def reading(self, game_id: str) -> AbstractContextManager[GameState]:
        """The game's last committed state, held still for the block: the game's read
        lock, which no command takes (a vote never waits for a page)."""
        return self._states.holding(game_id)

    def now(self, state: GameState) -> str:
        return self.source.now(state)

    def rules_status(self, state: GameState) -> Any:
        """What the rules' ``status`` query says of ``state`` now, None if it fails. One
        command's letters and its reply share one asking (a rule worker's round trip)."""
        key = (state.game_id, state.seq)
        kept = self._said_status.get(key)
        if kept is not None and kept[0] is state and time.monotonic() - kept[1] < STATUS_KEPT_S:
            return kept[2]
        try:
            value = self.engine.query(state, "status", {}, self.now(state))
        except Exception:  # noqa: BLE001 - a failing rule must not break a page or a letter
            value = None
        self._said_status.put(key, (state, time.monotonic(), value))
        return value

    def log(self, game_id: str) -> list[Event]:
        """The whole log, read anew from the store."""
        return self.source.events(game_id)

    def replay(self, game_id: str, upto_seq: int | None = None,
               upto_time: str | None = None) -> GameState:
        """The state rebuilt from the whole log, optionally as it stood at a past point."""
        with collector_paused():  # a bulk fold: see scriba.store.bulk
            events = self.source.events(game_id, upto=upto_seq)
            if upto_time is not None:
                limit = normalize(upto_time)
                events = [e for e in events if e["time"] <= limit]
            return fold(events)

    # --- the game -------------------------------------------------------------------
    def _game(self, game_id: str) -> GameState:
        state = self.load(game_id)  # an unknown game: errors.UnknownGame, from the store
        # (inside a @held_read method: the state its read holds, not caught up again)
        if not state.game_id:  # a snapshot-less miss: nothing was ever stored
            raise errors.UnknownGame(translate("There is no game {game}.", "en", game=game_id))
        return state

    def _log(self, game_id: str) -> list[Event]:
        """The whole log, for reading only: kept between calls (a log only grows), so a
        read fetches just the events appended since the last one."""
        return self._logs.events(self.source, game_id)

    def _game_log(self, game_id: str) -> GameLog:
        """The whole log as :meth:`_log` keeps it, with its indexes (see .gamelog)."""
        return self._logs.log(self.source, game_id)

    @held_read
    def secrets(self, game_id: str) -> Secrets:
        """What readers may not see yet (:mod:`.secrets`): sealed moves, private values."""
        state = self._game(game_id)
        key = (game_id, state.seq)
        found = self._secrets.get(key)
        if found is None:
            declared = self.engine.declarations(state)
            # No sealed action in force: nothing waits for a reveal (a page reads no log).
            sealing = any(a.get("sealed") for a in declared.actions.values())
            log = [e for e in self._log(game_id) if e["seq"] <= state.seq] if sealing else []
            found = secrets_of(log, declared)  # (a repealed sealed action's moves show)
            self._secrets.put(key, found)
        return found

    @held_read
    def words(self, game_id: str, language: str | None = None,
              state: GameState | None = None) -> Words:
        """The game's own words: labels of variables and offices, vote words, labels."""
        state = state or self._game(game_id)
        return declared_words(state, self.engine.declarations(state), language)


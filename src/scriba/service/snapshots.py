"""Snapshots of a game's state, written off the command path, in the game's quiet moments.

A snapshot only shortens the next load of a game (the state at an event, so that only the
later events are folded). Writing one means reading the last one and the events since,
folding and encoding the whole state, and a commit: tens of milliseconds in a long game,
all of it holding the interpreter. Done in a thread while the game is being played, it
lands in the middle of some player's command; so a snapshot that is due waits until its
game has had no command for ``QUIET_S``, or at most ``MAX_DELAY_S``, then is written.
"""

from __future__ import annotations

import contextlib
import threading
import time

from scriba.kernel.events import fold
from scriba.kernel.state import GameState
from scriba.store.eventstore import EventStore

QUIET_S = 0.5  # a game this long without a command is quiet
MAX_DELAY_S = 60.0  # a snapshot waits at most this long for a quiet moment


class SnapshotWriter:
    """Writes the snapshots asked for, each when its game is quiet, in a thread with its
    own connections. An in-memory database has a single connection: there they are
    written at once instead."""

    def __init__(self, store: EventStore, inline: bool) -> None:
        self.store = store
        self.inline = inline
        self._due: dict[str, float] = {}  # game -> when its snapshot was asked for
        self._last_command: dict[str, float] = {}
        self._wake = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None

    def played(self, game_id: str) -> None:
        """A command of the game was decided now (called for every one: a dict write)."""
        self._last_command[game_id] = time.monotonic()

    def request(self, game_id: str) -> None:
        if self.inline:
            self.write(game_id)
            return
        with self._wake:
            self._due.setdefault(game_id, time.monotonic())
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="scriba-snapshots",
                                                daemon=True)
                self._thread.start()
            self._wake.notify()

    def write(self, game_id: str) -> None:
        snapshot = self.store.latest_snapshot(game_id)
        state = GameState.from_dict(snapshot[1]) if snapshot else GameState()
        events = self.store.events(game_id, after=snapshot[0] if snapshot else 0)
        if events:
            fold(events, state)
            self.store.save_snapshot(game_id, state.seq, state.to_json())

    def _next(self) -> str | None:
        """The next game whose snapshot may be written, waiting for one; None when closed
        with nothing left to write."""
        with self._wake:
            while True:
                if not self._due:
                    if self._closing:
                        return None
                    self._wake.wait()
                    continue
                now = time.monotonic()
                waits = {game: 0.0 if self._closing else min(
                    QUIET_S - (now - self._last_command.get(game, 0.0)),
                    MAX_DELAY_S - (now - asked)) for game, asked in self._due.items()}
                game, wait = min(waits.items(), key=lambda item: item[1])
                if wait <= 0:
                    del self._due[game]
                    return game
                self._wake.wait(wait)

    def _run(self) -> None:
        while (game_id := self._next()) is not None:
            with contextlib.suppress(Exception):  # a snapshot is an optimisation only
                self.write(game_id)

    def close(self) -> None:
        """Write the snapshots still due, then stop."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._wake:
            self._closing = False  # a closed writer may be asked again (it starts anew)

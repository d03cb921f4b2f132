"""What the reads need of the games, as a typed interface: :class:`GameSource`.

:class:`~scriba.service.commands.Commands` is one (the live cached states, the store's
log); the reads depend on this Protocol, not on the write path, so they can be built on
anything that answers these few questions (a test's fixed log, say).
"""

from __future__ import annotations

from typing import Any, Protocol

from scriba.kernel.engine import Engine
from scriba.kernel.events import Event
from scriba.kernel.state import GameState


class GameSource(Protocol):
    """A game's current state, its log and latest snapshot, and the engine that answers
    about its rules."""

    @property
    def engine(self) -> Engine:
        """The kernel: the rules' declarations, queries and dry runs."""
        ...

    def load(self, game_id: str) -> GameState:
        """The current state (the live cached one: not to be changed by a reader). The
        reads keep their own states (from :meth:`latest_snapshot` and :meth:`events`)."""
        ...

    def events(self, game_id: str, after: int = 0,
               upto: int | None = None) -> list[Event]:
        """The stored events after ``after``, up to ``upto`` (a seq) when given."""
        ...

    def latest_snapshot(self, game_id: str) -> tuple[int, dict[str, Any]] | None:
        """The latest stored snapshot (its seq and the state as a dict), if any: where the
        reads' own state of the game starts (see :mod:`.readstate`)."""
        ...

    def now(self, state: GameState) -> str:
        """The game's present moment (its clock's time, or the real time for a real clock)."""
        ...

    def games(self, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """The games' rows in the order they were made (``limit`` from ``offset``, or
        all): ``id``, ``name``, ``ruleset``, ``events`` (how many), ``listing``."""
        ...

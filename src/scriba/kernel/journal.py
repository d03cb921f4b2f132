"""An undo log on a :class:`GameState`: apply a command's events, then drop them.

Deciding a command means applying its events one by one (the rules react to each) and
then handing back the events, leaving the state as it was. Copying the whole state for
that costs what the game weighs; the journal costs what the command touches. Every
in-place change :func:`scriba.kernel.events.apply_event` makes is noted here first, and
:func:`trial` undoes them in reverse order, exactly (dict key order included, since rules
see that order).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scriba.kernel.state import GameState

_MISSING = object()
_ATTRS = ("seq", "time", "ended", "next_timer")


class Journal:
    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []

    def mark(self) -> int:
        return len(self.entries)

    # --- noting a change before it is made ---------------------------------------------
    def key(self, container: dict[Any, Any], key: Any) -> None:
        """``container[key]`` is about to be set or removed."""
        self.entries.append(("key", container, key, container.get(key, _MISSING)))

    def contents(self, container: dict[Any, Any] | list[Any]) -> None:
        """The container is about to change in a way that moves its order (a removal)."""
        saved = dict(container) if isinstance(container, dict) else list(container)
        self.entries.append(("contents", container, saved))

    def length(self, items: list[Any]) -> None:
        """The list is about to grow at its end."""
        self.entries.append(("length", items, len(items)))

    def attrs(self, state: GameState) -> None:
        self.entries.append(("attrs", state, tuple(getattr(state, a) for a in _ATTRS)))

    def attr(self, obj: Any, name: str) -> None:
        self.entries.append(("attr", obj, name, getattr(obj, name)))

    # --- undoing ------------------------------------------------------------------------
    def rollback(self, mark: int = 0) -> None:
        while len(self.entries) > mark:
            entry = self.entries.pop()
            kind = entry[0]
            if kind == "key":
                _, container, key, old = entry
                if old is _MISSING:
                    container.pop(key, None)
                else:
                    container[key] = old
            elif kind == "contents":
                _, container, saved = entry
                if isinstance(container, dict):
                    container.clear()
                    container.update(saved)
                else:
                    container[:] = saved
            elif kind == "length":
                del entry[1][entry[2]:]
            elif kind == "attrs":
                for name, value in zip(_ATTRS, entry[2], strict=True):
                    setattr(entry[1], name, value)
            else:
                setattr(entry[1], entry[2], entry[3])


def journal_of(state: GameState) -> Journal | None:
    return state.__dict__.get("_journal")


@contextmanager
def trial(state: GameState) -> Iterator[GameState]:
    """Within the block, changes to ``state`` are noted; at its end they are all undone."""
    journal = journal_of(state)
    outermost = journal is None
    if outermost:
        # Indexes the fold keeps are built before any change, so that they describe the
        # state the trial returns to and outlive it.
        state.open_proposals()
        journal = Journal()
        state.__dict__["_journal"] = journal
    assert journal is not None
    mark = journal.mark()
    try:
        yield state
    finally:
        journal.rollback(mark)
        if outermost:
            del state.__dict__["_journal"]

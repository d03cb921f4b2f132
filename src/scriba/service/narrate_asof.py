"""A narrator that tells any event of a game's log without being told the events before
it: what they named (a timer, an asset, a proposal's or a rule's title) is looked up in
the log's index as it stood before the event (:class:`.gamelog.NarratorMemory`). Its
sentences are those of a :class:`.narrate.Narrator` that noted every earlier event, so a
page of the chronicle tells only the events it shows (issue 18)."""

from __future__ import annotations

import dataclasses
from typing import Any

from scriba.service.gamelog import MISSING, Copied, GameLog, History
from scriba.service.narrate import Event, Narrator
from scriba.service.words import Words


class _Before:
    """A mapping of the narrator's memory as it stood before the event being told."""

    def __init__(self, history: History, base: dict[Any, Any], narrator: NarratorAt,
                 shown: Any = None) -> None:
        self._history, self._base, self._narrator = history, base, narrator
        self._shown = shown  # a raw value → how the reader sees it

    def _at(self, key: Any, seq: int, default: Any) -> Any:
        value = self._history.before(key, seq)
        if value is MISSING:
            return self._base.get(key, default)
        if isinstance(value, Copied):  # a renumbered rule's title: its old number's then
            return self._at(value.rule, value.seq, "")
        return self._shown(value) if self._shown else value

    def get(self, key: Any, default: Any = None) -> Any:
        return self._at(key, self._narrator.seq, default)

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, MISSING)
        if value is MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key: Any) -> bool:
        return self.get(key, MISSING) not in (MISSING, False)  # assets: False once destroyed

    def __setitem__(self, key: Any, value: Any) -> None:
        """Noting is the index's job: nothing to remember here."""


class NarratorAt(Narrator):
    """Tells events of ``log`` in any order (see the module's docstring)."""

    def __init__(self, words: Words, log: GameLog) -> None:
        memory = log.memory
        self.seq = 0
        words = dataclasses.replace(words)  # the reader's words stay as they were
        words.proposals = _Before(memory.proposals, words.proposals, self)  # type: ignore
        words.rule_titles = _Before(memory.rule_titles, words.rule_titles, self)  # type: ignore
        super().__init__(words)
        self.timers = _Before(memory.timers, {}, self, words.timer)  # type: ignore
        self.assets = _Before(memory.assets, {}, self)  # type: ignore

    def tell(self, event: Event) -> str:
        self.seq = event["seq"]
        return super().tell(event)

    def note(self, event: Event) -> None:
        """The index noted it when the log was read."""

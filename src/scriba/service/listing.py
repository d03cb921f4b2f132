"""What a host knows of a game without reading it: its next deadline and its line in the
games' listing, kept in the game's row by every commit (``games.due_at``,
``games.listing``), so that ``/`` reads one row per game and the deadline loop asks the
database which games are due instead of loading every game each second."""

from __future__ import annotations

from typing import Any

from scriba.kernel.state import GameState
from scriba.service.periods import period_title
from scriba.service.words import Words, ruleset_words


def next_due(state: GameState) -> str | None:
    """When the game's next deadline falls, for a real-clock game still running."""
    if state.clock != "real" or state.ended or not state.timers:
        return None
    return min(timer["at"] for timer in state.timers.values())


def period_label(state: GameState, words: Words) -> str | None:
    """The period the game is in, in the ruleset's own words, if it has one."""
    name = words.period_variable(state.vars)
    if name is None or state.vars.get(name) is None:
        return None
    return period_title(words, name, state.vars[name])


def listing(state: GameState) -> dict[str, Any]:
    """The game's line in the games' listing, in its own language."""
    return {"name": state.name, "ruleset": state.ruleset, "language": state.language,
            "period": period_label(state, ruleset_words(state)), "ended": state.ended,
            "players": len(state.active_players())}

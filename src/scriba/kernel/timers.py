"""Time: timers that fall due fire once each, at their own time, in order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scriba.kernel.events import Event, apply_event, make_event
from scriba.kernel.journal import trial
from scriba.kernel.reactions import Run
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import normalize

if TYPE_CHECKING:
    from scriba.kernel.engine import Engine


def due_timers(state: GameState, now: str) -> list[dict[str, Any]]:
    now = normalize(now)
    return sorted((t for t in state.timers.values() if t["at"] <= now),
                  key=lambda t: (t["at"], int(t["id"].lstrip("t"))))


def fire_next_timer(engine: Engine, state: GameState, now: str) -> list[Event]:
    """Events of the earliest due timer firing at its own time, or [] if none is due."""
    due = due_timers(state, now)
    if not due or state.ended:
        return []
    timer = due[0]
    at = max(timer["at"], state.time)
    with engine.command(), trial(state):
        run = Run(engine, state, at)
        run.push([make_event("timer_fired", at, None, **timer)])
        run.settle()
        return run.events


def fire_due_timers(engine: Engine, state: GameState, now: str) -> list[Event]:
    """Events of every timer due by ``now``, each firing once at its own time, in order
    (timers that the reactions set and that are due by then fire too). The state is
    left as it was; with no timer due this costs one look at the timers."""
    if not due_timers(state, now) or state.ended:
        return []
    events: list[Event] = []
    with trial(state):
        while fired := fire_next_timer(engine, state, now):
            for event in fired:
                apply_event(state, event)
            events += fired
    return events


def advance(engine: Engine, state: GameState, now: str) -> list[Event]:
    """Events that move the clock to ``now``: due timers in order, then the move."""
    now = normalize(now)
    events = fire_due_timers(engine, state, now)
    with trial(state):
        for event in events:
            apply_event(state, event)
        if now <= state.time:
            return events
        with engine.command():
            run = Run(engine, state, now)
            run.push([make_event("clock_advanced", now, None, to=now)])
            run.settle()
            return events + run.events

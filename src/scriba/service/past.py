"""The game as it stood: its state at a time or after an event (folded from the log), a
reader's time made an ISO moment, and a rule as the reads hand it out."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from scriba.kernel import changes as rule_changes
from scriba.kernel.events import Event, fold
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import normalize
from scriba.service import errors
from scriba.service.messages import translate


def state_at(state: GameState, log: Callable[[], list[Event]], at: str | None,
             seq: int | None, since: bool = False) -> GameState:
    """The state at a time or event; ``since``: a bare date is the start of that day,
    and a time before the game's start is its start."""
    if at is None and seq is None:
        return state
    if seq is not None:
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise errors.InvalidInput(translate(
                "An event number is a whole number from 1.", state.language), field="seq")
        if seq >= state.seq and at is None:
            return state
    limit = None
    if at is not None:
        limit = time_arg(at, state.language, "at", end_of_day=not since)
        if limit is None:  # an empty value names no time
            raise errors.InvalidInput(translate(
                "Give a date (write e.g. 2026-03-04 or 2026-03-04T10:00:00Z).",
                state.language), field="since" if since else "at")
        start = log()[0]["time"]
        if since:
            limit = max(limit, start)
        if limit < start:
            raise errors.InvalidInput(translate(
                "The game started on {start}; there were no rules on {at}.",
                state.language, start=start, at=limit), field="at")
        if limit >= state.time and seq is None:
            return state
    # The fold reads the cached events and never changes them (as the service's
    # replay, without a second trip to the store).
    events = log()
    if seq is not None:
        events = [e for e in events[:seq] if e["seq"] <= seq]
    if limit is not None:
        events = [e for e in events if e["time"] <= limit]
    return fold(events)


def rule_dict(rule: dict[str, Any]) -> dict[str, Any]:
    return {"id": rule["id"], "title": rule["title"], "text": rule["text"],
            "code": rule["code"], "attributes": copy.deepcopy(rule["attributes"]),
            "revision": rule_changes.revision(rule), "in_force": rule["in_force"],
            "history": copy.deepcopy(rule["history"])}


def time_arg(value: Any, language: str, name: str, end_of_day: bool) -> Any:
    """An ISO time from a reader; a bare date means the start of that day, or its end
    where ``end_of_day`` (the rules as they stood that day, after its events)."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        moment = normalize(text)
    except (ValueError, TypeError, OverflowError):
        sentence = "{value} is not a date (write e.g. 2026-03-04 or 2026-03-04 10:00)."
        raise errors.with_sentence(errors.InvalidInput(translate(
            sentence, language, value=text[:80]), field=name), sentence,
            value=text[:80]) from None
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return moment[:10] + "T23:59:59Z"
    return moment

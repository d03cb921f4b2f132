"""A command's input and outcome: what the write path keeps of a command (its ``inbound``
row) and answers, and the bookkeeping of numbering its events and recognising a request
decided before. Pure helpers of :mod:`scriba.service.commands`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scriba.kernel.events import Event
from scriba.kernel.state import GameState


@dataclass
class Outcome:
    accepted: bool
    message: str = ""
    events: list[Event] = field(default_factory=list)
    state: GameState | None = None
    request_id: str | None = None
    inbound_id: int | None = None
    repeated: bool = False  # True: this request was decided before; nothing new recorded


@dataclass
class _Input:
    """A command as its ``inbound`` row keeps it: the structured command (as JSON), the
    raw text, and the request id its player (:func:`request_owner`) sent it under."""

    command: dict[str, Any]
    raw: str
    channel: str = "api"
    request_id: str | None = None
    row_id: int | None = None  # a row kept before and not decided (recovery)


def _same_request(row: dict[str, Any], command: dict[str, Any]) -> bool:
    """Whether a kept input asked for ``command`` (as kept: JSON): the same operation,
    actor, action and arguments, compared as canonical JSON (so ``true`` is not ``1``);
    the moment is when it was decided, not part of what was asked."""
    def asked(value: Any) -> str | None:
        if not isinstance(value, dict):
            return None
        return json.dumps({k: v for k, v in value.items() if k != "at"}, sort_keys=True,
                          ensure_ascii=False, default=str)
    return asked(row.get("command")) == asked(command)


def _recorded_outcome(row: dict[str, Any], state: GameState, fresh: list[Event],
                      by_seq: Callable[[list[int]], list[Event]]) -> Outcome:
    """The outcome recorded for an input decided before (``repeated``), its events picked
    from ``fresh`` (the events just read) or else read by ``by_seq``."""
    recorded = row["outcome"] or {}
    seqs = recorded.get("seqs", [])
    found = {event["seq"]: event for event in fresh}
    events = [found[seq] for seq in seqs] if all(seq in found for seq in seqs) else by_seq(seqs)
    return Outcome(bool(recorded.get("accepted", row["status"] == "accepted")),
                   recorded.get("message", row["result"] or ""), events, state,
                   row["request_id"], row["id"], repeated=True)


def _number(events: list[Event], after: int) -> list[Event]:
    return [{**event, "seq": after + i} for i, event in enumerate(events, start=1)]


def _renumbered(chosen: list[Event], events: list[Event], numbered: list[Event]) -> list[Event]:
    """The numbered copies of ``chosen`` (a sublist of ``events``, by identity)."""
    index = {id(event): i for i, event in enumerate(events)}
    return [numbered[index[id(e)]] if id(e) in index else e for e in chosen]

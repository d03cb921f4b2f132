"""Sealed moves: a command of an action declared ``"sealed": True`` (a number given to
the referee, a secret ballot) marks every event it makes — its own and its reactions' —
with ``payload["sealed"]``: whose move it is and of which action. The state is folded
from them as from any event (a replay is unchanged); only readers choose what to show:
the mark's player and the officer see the move, everyone else once a later
``moves_revealed`` event (the ``reveal`` effect) names its action (and its proposal).
"""

from __future__ import annotations

from typing import Any

from scriba.kernel.events import Event

REVEALED = "moves_revealed"


def seal(events: list[Event], first: Event, actor: str | None, action: str,
         args: dict[str, Any]) -> None:
    """Mark ``first`` (a sealed command's own event) and every event after it in
    ``events`` (what the rules did in reaction) as that move's, up to a reveal of it:
    what follows a reveal (a proposal adopted once the last secret vote closed it) is
    public. Marked before the reactions too, so that rules see ``event["sealed"]``."""
    mark: dict[str, Any] = {"player": actor, "action": action}
    proposal = first["payload"].get("proposal", args.get("proposal"))
    if isinstance(proposal, str) and proposal.strip().isdigit():
        proposal = int(proposal)
    if isinstance(proposal, int) and not isinstance(proposal, bool):
        mark["proposal"] = proposal  # a vote: revealed with the proposal's other votes
    started = False
    for event in events:
        started = started or event is first
        if not started:
            continue
        if event["type"] == REVEALED:
            if reveals(event, mark):
                return
            continue
        event["payload"]["sealed"] = dict(mark)


def reveals(reveal: Event, mark: dict[str, Any]) -> bool:
    """Whether the ``moves_revealed`` event ``reveal`` shows the move marked ``mark``."""
    p = reveal.get("payload") or {}
    if p.get("action") != mark.get("action"):
        return False
    return p.get("proposal") is None or p.get("proposal") == mark.get("proposal")


def hidden(events: list[Event]) -> dict[int, str | None]:
    """The sealed events of ``events`` no later event of them reveals: seq → whose move."""
    waiting: dict[int, dict[str, Any]] = {}
    for event in events:
        p = event.get("payload") or {}
        if event["type"] == REVEALED and waiting:
            waiting = {seq: mark for seq, mark in waiting.items() if not reveals(event, mark)}
        elif isinstance(p.get("sealed"), dict):
            waiting[event["seq"]] = p["sealed"]
    return {seq: mark.get("player") for seq, mark in waiting.items()}

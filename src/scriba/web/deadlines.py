"""Deadlines on time, with no cron: ``scriba serve`` fires real-clock games' due timers.

Every ``interval`` seconds (1 by default, $SCRIBA_TICK_INTERVAL) the task looks at each
real-clock game and, when one of its timers is due, asks the service to ``tick`` it.

Exactly once, even with several server processes on one PostgreSQL database: a tick is
decided under the game's lock (the database's, across processes), after reading the
events other processes appended; a timer another process fired is gone by then. The
store's unique (game, seq) stands behind that as a safety net.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

log = logging.getLogger("scriba.deadlines")


def tick_due(service: Any) -> dict[str, int]:
    """Fire the due timers of every real-clock game once; events appended per game."""
    fired = service.commands.tick_due()
    for game_id, count in fired.items():
        log.info("deadlines: %s fired %d events", game_id, count)
    return fired


async def run(service: Any, interval: float | None = None) -> None:
    """Run until cancelled (the server's shutdown)."""
    interval = interval or float(os.environ.get("SCRIBA_TICK_INTERVAL", "1"))
    while True:
        try:
            await asyncio.to_thread(tick_due, service)
        except Exception:  # noqa: BLE001 - e.g. the database briefly unreachable
            log.exception("deadlines: a round of ticks failed")
        await asyncio.sleep(interval)

"""Digest by default when a game is busy: a reader who never chose how to receive a game's
mail (mail mode ``auto``, every new account's) gets each announcement while the game is
calm, and the daily digest once it is busy — more than ``BUSY_PER_DAY`` announcements to
them in the last 24 hours (``SCRIBA_MAIL_BUSY_PER_DAY``, default 30). A reader's explicit
choice (``each``, ``digest``, ``none``, by letter, on the account page or by the one-click
unsubscribe) always wins."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sqlalchemy import Integer, bindparam, func, literal_column, select, union_all

from scriba.store.mail import OutboxMessage

BUSY_PER_DAY = 30
READERS_AT_ONCE = 50  # readers counted by one statement (SQLite allows 500 in a UNION)
_OUTBOX = OutboxMessage.__table__


@cache
def _told(readers: int) -> Any:
    """Each of ``readers`` readers' announcements of the day in a game (address ``r0``,
    ``r1``, …), counted up to the limit on a range of the outbox's index
    (ix_mail_outbox_told): what a vote costs does not grow with the game's mail. One
    statement per number of readers, made once: building it costs more than running it."""
    def day_of(n: int) -> Any:
        return select(_OUTBOX.c.id).where(
            _OUTBOX.c.game_id == bindparam("game"), _OUTBOX.c.kind == "announce",
            _OUTBOX.c.recipient == bindparam(f"r{n}"),
            _OUTBOX.c.created_at >= bindparam("since")
        ).limit(bindparam("limit", type_=Integer)).subquery()

    return union_all(*(select(literal_column(str(n)).label("n"), func.count())
                       .select_from(day_of(n)) for n in range(readers)))


def busy_per_day() -> int:
    value = os.environ.get("SCRIBA_MAIL_BUSY_PER_DAY", "")
    return int(value) if value.isdigit() and int(value) > 0 else BUSY_PER_DAY


def modes(connection: Any, game_id: str, readers: list[Any], now: datetime) -> dict[str, str]:
    """Each reader's mail mode for the next announcement (address → each/digest/none):
    ``auto`` made ``digest`` for the readers the game has told more than the limit today."""
    chosen = {r.email: r.mail_mode for r in readers}
    automatic = [email for email, mode in chosen.items() if mode not in ("each", "digest",
                                                                         "none")]
    if not automatic:
        return chosen
    limit = busy_per_day()
    counts: dict[str, int] = {}
    for first in range(0, len(automatic), READERS_AT_ONCE):
        some = automatic[first:first + READERS_AT_ONCE]
        found = dict(connection.execute(_told(len(some)), {
            "game": game_id, "since": now - timedelta(days=1), "limit": limit,
            **{f"r{n}": email for n, email in enumerate(some)}}).all())
        counts.update({email: found.get(n, 0) for n, email in enumerate(some)})
    return {**chosen, **{email: "digest" if counts.get(email, 0) >= limit else "each"
                         for email in automatic}}

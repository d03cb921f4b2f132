"""Digest by default when a game is busy: a reader who never chose how to receive a game's
mail (mail mode ``auto``, every new account's) gets each announcement while the game is
calm, and the daily digest once it is busy — more than ``BUSY_PER_DAY`` announcements to
them in the last 24 hours (``SCRIBA_MAIL_BUSY_PER_DAY``, default 30). A reader's explicit
choice (``each``, ``digest``, ``none``, by letter, on the account page or by the one-click
unsubscribe) always wins."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from scriba.store.mail import OutboxMessage

BUSY_PER_DAY = 30


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
    table = OutboxMessage.__table__
    counts = dict(connection.execute(
        select(table.c.recipient, func.count()).where(
            table.c.game_id == game_id, table.c.kind == "announce",
            table.c.created_at >= now - timedelta(days=1),
            table.c.recipient.in_(automatic)).group_by(table.c.recipient)).all())
    limit = busy_per_day()
    return {**chosen, **{email: "digest" if counts.get(email, 0) >= limit else "each"
                         for email in automatic}}

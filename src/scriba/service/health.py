"""What an operator's monitor asks (``/healthz``): does the database answer, can the rule
workers answer, is the outbox moving? Nothing here names a player, a game or a secret, so
the answer may be shown to anyone the operator lets reach it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from scriba.store.mail import OutboxMessage
from scriba.store.schema import games as games_t

if TYPE_CHECKING:
    from scriba.service.assembly import Service

# The oldest letter due now and still unsent: older than this, delivery is stuck (the mail
# server has refused or been unreachable for longer than a few retries at the 2 min cap).
OUTBOX_STUCK = timedelta(minutes=15)


@dataclass
class Health:
    """``ok`` when every check passed; ``checks`` says what each found, in plain words
    and numbers (``problems`` lists what is wrong)."""

    checks: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {"status": "ok" if self.ok else "failing", "checks": self.checks,
                "problems": self.problems}


def oldest_due_letter(service: Service, now: datetime | None = None) -> datetime | None:
    """When the oldest letter waiting to be sent and due now was written (letters waiting
    for a retry later, or for the daily digest, are not counted)."""
    now = now or datetime.now(UTC)
    with service.commands.store.engine.connect() as connection:
        oldest = connection.execute(
            select(func.min(OutboxMessage.created_at)).where(
                OutboxMessage.status == "pending", OutboxMessage.next_attempt <= now)
        ).scalar_one()
    if oldest is not None and oldest.tzinfo is None:  # SQLite keeps no zone: stored in UTC
        oldest = oldest.replace(tzinfo=UTC)
    return oldest


def check(service: Service, stuck_after: timedelta = OUTBOX_STUCK,
          now: datetime | None = None) -> Health:
    """Run the three checks; a failing one does not stop the others."""
    health = Health()
    now = now or datetime.now(UTC)
    try:
        # One light query that reads a table (SQLite answers ``SELECT 1`` without its file).
        with service.commands.store.engine.connect() as connection:
            connection.execute(select(games_t.c.id).limit(1)).all()
        health.checks["database"] = "ok"
    except Exception as error:  # noqa: BLE001 - any failure is the answer
        health.checks["database"] = "unreachable"
        health.problems.append(f"database: {type(error).__name__}")
    pool = service.commands.host.pool
    stats = pool.stats()
    alive = len(pool.pids())
    health.checks["workers"] = {"up": stats.workers, "idle": stats.idle, "alive": alive}
    # Workers start on demand and a dead one is replaced when next needed; a pool whose
    # every started worker has died (killed for memory, say) is worth a look.
    if stats.workers and not alive and stats.idle:
        health.problems.append("workers: none of the rule workers is alive")
    if health.checks["database"] == "ok":
        oldest = oldest_due_letter(service, now)
        waited = (now - oldest).total_seconds() if oldest else 0.0
        health.checks["outbox"] = {"oldest_due_seconds": round(max(waited, 0.0))}
        if waited > stuck_after.total_seconds():
            health.problems.append(
                f"outbox: a letter has waited {round(waited / 60)} min to be sent "
                f"(more than {round(stuck_after.total_seconds() / 60)} min)")
    return health

"""The busy check before every announcement (service/busy.py) counts a reader's day of
announcements up to the limit on a range of the outbox's index, so a vote does not cost
more as a game's mail piles up (issue 18): older mail and other games do not count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine

from scriba.service import busy, open_service
from scriba.service.letters import Reader
from scriba.store.database import migrate

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'busy.db'}"
    return str(request.getfixturevalue("fresh_postgres_url"))


def test_a_readers_day_is_counted_up_to_the_limit_and_nothing_older(url: str) -> None:
    migrate(url)
    service = open_service(url)
    outbox = service.outbox
    readers = [Reader(f"P{n}", f"p{n}@example.org", "en", "auto") for n in range(3)]
    readers.append(Reader("Q", "q@example.org", "en", "each"))  # her choice wins

    def told(email: str, when: datetime, game: str = "g", count: int = 1) -> None:
        outbox.clock = lambda: when
        with service.commands.store.engine.begin() as connection:
            outbox.queue_rows(connection, [outbox._row(
                key=f"{game}:{email}:{when.isoformat()}:{n}", recipient=email,
                kind="announce", game_id=game, subject="s", body="b")
                for n in range(count)])

    told("p0@example.org", NOW - timedelta(hours=1), count=busy.BUSY_PER_DAY)
    told("p1@example.org", NOW - timedelta(hours=1), count=busy.BUSY_PER_DAY - 1)
    told("p1@example.org", NOW - timedelta(days=2), count=5)  # the day before yesterday
    told("p2@example.org", NOW - timedelta(hours=1), game="other",
         count=busy.BUSY_PER_DAY)
    with service.commands.store.engine.connect() as connection:
        modes = busy.modes(connection, "g", readers, NOW)
    service.close()
    assert modes == {"p0@example.org": "digest", "p1@example.org": "each",
                     "p2@example.org": "each", "q@example.org": "each"}


def test_the_count_reads_the_outbox_index_not_the_games_rows(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'plan.db'}"
    migrate(url)
    engine = create_engine(url)
    statement = busy._told(2).params(game="g", r0="a", r1="b", since=NOW, limit=30)
    sql = str(statement.compile(engine, compile_kwargs={"literal_binds": True}))
    with engine.connect() as connection:
        plan = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql).all()
    engine.dispose()
    steps = " / ".join(str(row[-1]) for row in plan)
    assert steps.count("USING COVERING INDEX ix_mail_outbox_told") == 2, steps

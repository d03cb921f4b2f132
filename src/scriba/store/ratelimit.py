"""The rate limits' counters in our own database, as a storage of the ``limits`` library.

Every ``scriba serve`` process on one database shares them. A hit is one statement,
``INSERT … ON CONFLICT (key) DO UPDATE SET count = count + 1 … RETURNING count``, atomic on
SQLite and PostgreSQL: of any number of simultaneous hits each sees its own count, so a
burst cannot slip past a limit. A lapsed counter starts again at the hit that finds it;
lapsed rows are also deleted from time to time, so the table holds only live windows.
Only the fixed-window strategy is supported (``limits.strategies.FixedWindowRateLimiter``).
"""

from __future__ import annotations

import hashlib
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from limits.storage import Storage
from sqlalchemy import Engine, case, delete, select, text, update
from sqlalchemy.exc import SQLAlchemyError

from scriba.store.accounts import RateLimitRow
from scriba.store.database import upsert_dialect

KEY_MAX = 400  # the column's length
SWEEP_SECONDS = 300.0  # lapsed rows are deleted at most this often per process
_TABLE = RateLimitRow.__table__


def _now() -> datetime:
    # SQLite keeps times without their zone: every time here is UTC.
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def fitting_key(key: str) -> str:
    """The key as stored: a key longer than the column is replaced by its digest."""
    if len(key) <= KEY_MAX:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class DatabaseStorage(Storage):
    """``limits`` storage on the ``rate_limits`` table of the database behind ``engine``."""

    STORAGE_SCHEME = None  # made from an engine, never from a storage URI

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        dialect = upsert_dialect(engine.dialect.name)
        if dialect is None:
            raise ValueError(f"Rate limits need SQLite or PostgreSQL, not "
                             f"{engine.dialect.name}.")
        self.engine = engine
        self._insert = dialect.insert
        self._swept = 0.0
        self._sweep_lock = threading.Lock()

    @property
    def base_exceptions(self) -> type[Exception]:
        return SQLAlchemyError

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = _now()
        insert = self._insert(_TABLE).values(
            key=fitting_key(key), count=amount, expires_at=now + timedelta(seconds=expiry))
        lapsed = _TABLE.c.expires_at <= now
        statement = insert.on_conflict_do_update(
            index_elements=[_TABLE.c.key],
            set_={"count": case((lapsed, insert.excluded.count),
                                else_=_TABLE.c.count + insert.excluded.count),
                  "expires_at": case((lapsed, insert.excluded.expires_at),
                                     else_=_TABLE.c.expires_at)},
        ).returning(_TABLE.c.count)
        with self.engine.connect() as connection:
            if self.engine.dialect.name == "sqlite":  # take the write lock at once
                connection = connection.execution_options(sqlite_begin="IMMEDIATE")
            with connection.begin():
                count = int(connection.execute(statement).scalar_one())
        self._sweep()
        return count

    def decr(self, key: str, amount: int = 1) -> int:
        """Give back ``amount`` of a live counter (never below 0; a lapsed one stays so),
        as the library's memory storage does."""
        live = (_TABLE.c.key == fitting_key(key)) & (_TABLE.c.expires_at > _now())
        with self.engine.begin() as connection:
            count = connection.execute(update(_TABLE).where(live).values(
                count=case((_TABLE.c.count > amount, _TABLE.c.count - amount), else_=0))
                .returning(_TABLE.c.count)).scalar()
        return int(count or 0)

    def _live(self, key: str) -> Any:
        with self.engine.connect() as connection:
            return connection.execute(
                select(_TABLE.c.count, _TABLE.c.expires_at).where(
                    _TABLE.c.key == fitting_key(key), _TABLE.c.expires_at > _now())).first()

    def get(self, key: str) -> int:
        row = self._live(key)
        return int(row.count) if row is not None else 0

    def get_expiry(self, key: str) -> float:
        row = self._live(key)
        return _aware(row.expires_at).timestamp() if row is not None else time.time()

    def check(self) -> bool:
        try:
            with self.engine.connect() as connection:
                connection.execute(text("SELECT 1"))
        except SQLAlchemyError:
            return False
        return True

    def reset(self) -> int | None:
        with self.engine.begin() as connection:
            return connection.execute(delete(_TABLE)).rowcount

    def clear(self, key: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(delete(_TABLE).where(_TABLE.c.key == fitting_key(key)))

    def _sweep(self) -> None:
        """Forget lapsed counters (at most every SWEEP_SECONDS in this process)."""
        if time.monotonic() - self._swept < SWEEP_SECONDS or \
                not self._sweep_lock.acquire(blocking=False):
            return
        try:
            self._swept = time.monotonic()
            with self.engine.begin() as connection:
                connection.execute(delete(_TABLE).where(_TABLE.c.expires_at <= _now()))
        except SQLAlchemyError:  # a busy database: the next sweep will do it
            pass
        finally:
            self._sweep_lock.release()

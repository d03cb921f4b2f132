"""A consistent copy of a live SQLite database, and putting one back (``scriba backup``,
``scriba restore``), through SQLite's online backup API: the copy is what the database held
at one moment, taken while the server runs (commands wait only for the steps of the copy,
never fail); a restore writes the copy into the database the same way — with the server
stopped, since a running one would go on from the games as it last knew them. PostgreSQL
has its own tools (``pg_dump``, ``pg_restore``; the README has the lines).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from sqlalchemy.engine import make_url

from scriba.store.database import BUSY_TIMEOUT_S

PAGES_PER_STEP = 1024  # pages copied per step (4 MiB at SQLite's default page size)
Progress = Callable[[int, int], None]  # (pages copied, pages in all)


class BackupError(Exception):
    """Why a backup or a restore could not be made, in words for the operator."""


def sqlite_path(db_url: str) -> Path:
    """The file of a SQLite URL; a BackupError for another database or an in-memory one."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite":
        raise BackupError(f"{url.get_backend_name()} is backed up with its own tools "
                          "(pg_dump and pg_restore for PostgreSQL; see the README).")
    if not url.database or url.database == ":memory:":
        raise BackupError("An in-memory database has nothing to back up.")
    return Path(url.database)


@contextlib.contextmanager
def _connected(path: Path, must_exist: bool) -> Iterator[sqlite3.Connection]:
    if must_exist and not path.is_file():
        raise BackupError(f"There is no database at {path}.")
    mode = "rw" if must_exist else "rwc"
    connection = sqlite3.connect(f"file:{path}?mode={mode}", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        yield connection
    finally:
        connection.close()


def _copy(source: sqlite3.Connection, target: sqlite3.Connection,
          progress: Progress | None) -> None:
    def step(_status: int, remaining: int, total: int) -> None:
        if progress is not None:
            progress(total - remaining, total)
    source.backup(target, pages=PAGES_PER_STEP, progress=step)


def backup(db_url: str, to: Path, progress: Progress | None = None) -> Path:
    """Copy the database of ``db_url`` to the new file ``to`` (never over an existing one)."""
    source = sqlite_path(db_url)
    if to.exists():
        raise BackupError(f"{to} exists already: name a new file for the backup.")
    with _connected(source, must_exist=True) as live, _connected(to, must_exist=False) as copy:
        _copy(live, copy, progress)
        copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    return to


def restore(db_url: str, backup_file: Path, progress: Progress | None = None) -> str:
    """Write the backup ``backup_file`` into the database of ``db_url`` (made if missing);
    returns the schema revision restored (an older one wants ``scriba db upgrade``). The
    backup is checked first (SQLite's integrity check, a Scriba schema), so a wrong or
    damaged file changes nothing."""
    target = sqlite_path(db_url)
    with _connected(backup_file, must_exist=True) as copy:
        try:
            verdict = copy.execute("PRAGMA integrity_check").fetchone()
        except sqlite3.DatabaseError as error:
            raise BackupError(f"{backup_file} is not a SQLite database ({error}).") from None
        if verdict != ("ok",):
            raise BackupError(f"{backup_file} is damaged: {verdict[0] if verdict else '?'}")
        try:
            [revision] = copy.execute("SELECT version_num FROM alembic_version").fetchone()
        except (sqlite3.DatabaseError, TypeError):
            raise BackupError(f"{backup_file} is not a Scriba database.") from None
        with _connected(target, must_exist=False) as live:
            _copy(copy, live, progress)
    return str(revision)

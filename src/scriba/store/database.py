"""Connecting to the database, and creating or upgrading its schema (Alembic), explicitly.

SQLite: SQLAlchemy's documented pysqlite recipe — the driver's own transaction handling is
switched off and we emit ``BEGIN`` ourselves — so that a writer can ask for
``BEGIN IMMEDIATE`` (execution option ``sqlite_begin="IMMEDIATE"``): it takes SQLite's
write lock *before* reading, so a game is loaded, decided and appended by one writer at a
time, and the busy timeout makes the others wait instead of failing.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.pool import StaticPool

from scriba.errors import ServiceError

MIGRATIONS = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_S = 120.0  # a waiting writer waits this long for SQLite's lock before failing


def is_memory(url: str) -> bool:
    return url in ("sqlite://", "sqlite:///:memory:")


def upsert_dialect(name: str) -> Any | None:
    """SQLAlchemy's dialect module for ``name`` if its INSERT has ON CONFLICT, else None.
    Imported by name, as the engine imports its own: PostgreSQL's dialect package is some
    50 ms of every start on SQLite."""
    if name not in ("sqlite", "postgresql"):
        return None
    return importlib.import_module(f"sqlalchemy.dialects.{name}")


def make_engine(url: str) -> Engine:
    options: dict[str, Any] = {}
    if url.startswith("sqlite"):
        connect_args: dict[str, Any] = {"timeout": BUSY_TIMEOUT_S}
        if is_memory(url):
            options["poolclass"] = StaticPool
            connect_args["check_same_thread"] = False
        options["connect_args"] = connect_args
    engine = create_engine(url, **options)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_connect)
        event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_begin)
    cursor = dbapi_connection.cursor()
    # WAL lets readers run beside the writer. FULL sync: a command acknowledged to a
    # player (and perhaps already announced by mail) survives a power cut or a crash of
    # the machine, as a commit on PostgreSQL does; NORMAL would keep it only across a
    # crash of the server.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
    connection.exec_driver_sql(f"BEGIN {mode}")


def _alembic_config() -> Any:
    from alembic.config import Config  # imported here: only migrations need Alembic

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


@cache
def head_revision() -> str:
    """The newest revision, read from the migration files' headers.

    Alembic itself is not imported for this check: it costs a second of start-up.
    """
    revisions: dict[str, str | None] = {}
    for path in (MIGRATIONS / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision = re.search(r"^revision\s*=\s*[\"']([^\"']+)[\"']", source, re.M)
        down = re.search(r"^down_revision\s*=\s*(?:[\"']([^\"']+)[\"']|None)", source, re.M)
        if revision and down:
            revisions[revision.group(1)] = down.group(1)
    heads = set(revisions) - set(revisions.values())
    if len(heads) != 1:
        raise RuntimeError(f"the migrations have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


def current_revision(engine: Engine) -> str | None:
    """The schema's revision, or None for an empty database."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def upgrade(engine: Engine) -> None:
    """Bring the schema to the newest revision. An empty database gets the tables as the
    code describes them, stamped with the newest revision (Alembic's recipe for a new
    database: a quarter of the time of running every migration, which copies SQLite's
    tables at each ``batch_alter_table``); an existing one goes through the migrations.
    ``tests/test_schema.py`` checks that both give the same schema."""
    from alembic import command

    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        if inspect(connection).get_table_names():
            command.upgrade(config, "head")
        else:
            _described_metadata().create_all(connection)
            command.stamp(config, "head")


def _described_metadata() -> Any:
    """The metadata with every table the code describes: the Core tables' and the ORM's
    (their modules add them to it when imported)."""
    from scriba.store import accounts, mail, models  # noqa: F401 - for their tables
    from scriba.store.schema import metadata

    return metadata


def migrate(url: str) -> str:
    """Create or upgrade the schema at ``url`` to the newest revision; returns it.

    Run once at start (``scriba db upgrade``, the server, the demo), never per command.
    """
    engine = make_engine(url)
    try:
        upgrade(engine)
        return current_revision(engine) or ""
    finally:
        engine.dispose()


def check_schema(engine: Engine) -> None:
    """Refuse to work on a schema other than the newest: say how to upgrade it.

    An empty database (a fresh SQLite file, an in-memory one) is created on the spot, so
    the embedded default just works; an older schema is never upgraded behind the
    operator's back.
    """
    revision = current_revision(engine)
    if revision is None and not inspect(engine).get_table_names():
        upgrade(engine)
        return
    if revision != head_revision():
        found = revision or "none"
        raise ServiceError(
            f"The database schema is at revision {found}, this Scriba needs "
            f"{head_revision()}: run `scriba db upgrade` (scriba.store.migrate) first.")

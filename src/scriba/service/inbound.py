"""A letter kept by a pipe delivery with the standard library (or psycopg) alone.

A mail server starts ``scriba mail receive`` once per letter, and importing the service
(SQLAlchemy, the rule sandbox, password hashing …) costs most of a second. The pipe
therefore only keeps the letter: one INSERT into ``mail_letters`` with status ``kept``,
the row :meth:`scriba.service.mailroom.Mailroom.keep` writes, committed before the pipe
exits (SQLite through the standard library with ``synchronous=FULL`` like every other
write; PostgreSQL through psycopg, its driver, without SQLAlchemy). Nothing is decided
here; the intake of ``scriba mail serve`` (each round) or ``scriba mail send`` decides
kept letters (:meth:`scriba.mail.intake.Intake.decide_kept`), claiming each one so that
it is decided once.

This module imports nothing of Scriba's and is not exported by :mod:`scriba.service`, so
that importing it does not load the service.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from datetime import UTC, datetime
from urllib.parse import quote

# Larger letters are refused, with an answer: the pipe leaves them to the whole intake.
MAX_LETTER_BYTES = int(os.environ.get("SCRIBA_MAIL_MAX_BYTES", str(5 * 1024 * 1024)))
BUSY_TIMEOUT_S = 120.0  # as the store's engine: wait for a busy writer, do not fail


def envelope_sender(envelope_from: str | None) -> str:
    """The envelope sender as kept with the letter: "" = not given, "<>" = null sender."""
    return "" if envelope_from is None else (envelope_from.strip() or "<>")


def message_id_of(raw: bytes) -> str:
    """The Message-ID, or one made from the bytes (the same letter gives the same id)."""
    head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    match = re.search(rb"^message-id:[ \t]*(.*(?:\r?\n[ \t].*)*)", head, re.I | re.M)
    if match:
        value = match.group(1).decode("ascii", "replace").strip()
        value = re.sub(r"\s+", "", value)
        if 3 <= len(value) <= 400:
            return value
    return f"<sha256-{hashlib.sha256(raw).hexdigest()}@scriba.invalid>"


def keep_letter(db_url: str, raw: bytes, message_id: str, channel: str, sender: str = "",
                recipient: str = "") -> str | None:
    """Keep the letter in the database at ``db_url``: "kept" for a new letter, else the
    status of the letter already kept under this Message-ID; None for a database this
    module does not write (an in-memory SQLite, a URL with options it does not know):
    the service keeps those. Raises the driver's error when the letter cannot be kept
    (no database, no schema yet): the mail server then keeps it and tries again."""
    row = (message_id[:500], channel, raw, sender[:320], recipient[:320])
    path = sqlite_path(db_url)
    if path is not None:
        return _keep_sqlite(path, row)
    conninfo = postgres_conninfo(db_url)
    if conninfo is not None:
        return _keep_postgres(conninfo, row)
    return None


def sqlite_path(db_url: str) -> str | None:
    """The file of a ``sqlite:///FILE`` URL, else None."""
    scheme, sep, path = db_url.partition(":///")
    if not sep or scheme not in ("sqlite", "sqlite+pysqlite") or not path \
            or "?" in path or path == ":memory:":
        return None
    return path


def postgres_conninfo(db_url: str) -> str | None:
    """libpq's URI for a ``postgresql+psycopg://`` URL (the same text, libpq's scheme),
    else None."""
    scheme, sep, rest = db_url.partition("://")
    if not sep or scheme not in ("postgresql", "postgresql+psycopg", "postgres"):
        return None
    return f"postgresql://{rest}"


_INSERT = ("INSERT INTO mail_letters (message_id, received_at, channel, raw, sender, "
           "recipient, status, auth) VALUES ({0}, {0}, {0}, {0}, {0}, {0}, 'kept', '')")
_STATUS = "SELECT status FROM mail_letters WHERE message_id = {0}"


def _keep_sqlite(path: str, row: tuple[str, str, bytes, str, str]) -> str:
    # mode=rw: a wrong path fails instead of creating an empty database
    uri = f"file:{quote(os.path.abspath(path))}?mode=rw"
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        connection.execute("PRAGMA synchronous=FULL")  # acknowledged = on the disk
        # the timestamp as SQLAlchemy writes it to SQLite
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        try:
            connection.execute(_INSERT.format("?"), (row[0], now, *row[1:]))
            return "kept"
        except sqlite3.IntegrityError:  # the same Message-ID again
            found = connection.execute(_STATUS.format("?"), (row[0],)).fetchone()
            if found is None:
                raise
            return str(found[0])
    finally:
        connection.close()


def _keep_postgres(conninfo: str, row: tuple[str, str, bytes, str, str]) -> str | None:
    import psycopg  # the driver alone: a fifth of SQLAlchemy's start-up

    try:
        connection = psycopg.connect(conninfo, autocommit=True, connect_timeout=30)
    except psycopg.ProgrammingError:  # options only SQLAlchemy knows: the service's path
        return None
    with connection:
        kept = connection.execute(
            _INSERT.format("%s") + " ON CONFLICT (message_id) DO NOTHING RETURNING id",
            (row[0], datetime.now(UTC), *row[1:])).fetchone()
        if kept is not None:
            return "kept"
        found = connection.execute(_STATUS.format("%s"), (row[0],)).fetchone()
        if found is None:  # deleted meanwhile: let the mail server try again
            raise RuntimeError("letter neither kept nor found")
        return str(found[0])

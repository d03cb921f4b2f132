"""A game's lock on PostgreSQL: a transaction-scoped advisory lock per game, and the line
of writers that wait for a busy game, the first of which reads ahead meanwhile
(:data:`Prepare`). SQLite's locks are files beside the database
(:meth:`scriba.store.eventstore.EventStore.write`)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Callable

from sqlalchemy import Connection, text

from scriba.store.gamewrite import GameWrite

log = logging.getLogger("scriba.store")

_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:key)")
_TRY_ADVISORY_LOCK = text("SELECT pg_try_advisory_xact_lock(:key)")
_LINE_LOCK = text("SELECT pg_advisory_lock(:key)")  # the line: left as soon as first
_LINE_UNLOCK = text("SELECT pg_advisory_unlock(:key)")


def _lock_key(game_id: str, person: bytes = b"scriba-game") -> int:
    """A stable signed 64-bit key per game (a collision only serialises two games)."""
    digest = hashlib.blake2b(game_id.encode(), digest_size=8, person=person).digest()
    return int.from_bytes(digest, "big", signed=True)


# A writer that finds its game busy, given ``prepare``: it waits in the game's line, and
# the first in line reads what was committed meanwhile (``prepare`` with a reader) before
# it waits for the game itself: the writer it follows is deciding all the while (on the
# other core), so the turn starts with one commit to read, not one per writer in line.
Prepare = Callable[["GameWrite"], None]


def _advisory_lock(connection: Connection, game_id: str, prepare: Prepare | None) -> None:
    """PostgreSQL: the game's lock for this transaction; if it is busy and ``prepare`` is
    given, first the line's (a session lock, left once the game's is held), ``prepare``
    meanwhile in a savepoint (a failed read must not spoil the transaction)."""
    key = {"key": _lock_key(game_id)}
    if prepare is None:
        connection.execute(_ADVISORY_LOCK, key)
        return
    if connection.execute(_TRY_ADVISORY_LOCK, key).scalar():
        return
    line = {"key": _lock_key(game_id, b"scriba-line")}
    connection.execute(_LINE_LOCK, line)
    try:
        with contextlib.suppress(Exception), connection.begin_nested():
            _prepare(prepare, GameWrite(connection, game_id))
        connection.execute(_ADVISORY_LOCK, key)
    finally:
        try:
            connection.execute(_LINE_UNLOCK, line)
        except Exception:  # noqa: BLE001 - the transaction failed: end the session instead,
            connection.invalidate()  # which leaves the line (a pooled one would hold it)


def _prepare(prepare: Prepare, reader: GameWrite) -> None:
    """Only a head start: should it fail, the turn reads everything itself."""
    try:
        prepare(reader)
    except Exception:
        log.warning("reading ahead for %s failed", reader.game_id, exc_info=True)
        raise

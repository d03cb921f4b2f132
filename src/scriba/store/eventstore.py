"""The event store: append-only game logs, snapshots and raw inbound messages.

SQLite by default, PostgreSQL in production; SQLAlchemy Core statements, no ORM. A command
is decided inside :meth:`EventStore.write`, which holds the game's lock from the first
read to the commit: a transaction-scoped advisory lock per game on PostgreSQL (one
transaction throughout), and on SQLite a ``flock`` of a per-game file beside the database
(``<db>.locks/<hash>``), taken before a connection is. SQLite has one writer per *file*,
so there the game is read in a short read transaction, decided holding no database lock,
and only the appending takes the database's write lock (the writer ``flock``, then
``BEGIN IMMEDIATE``, see :meth:`GameWrite.writing`): a slow rule in one game never delays
another game. Lock order: the game's lock, a connection, the database's writer lock;
nothing waits for a game's lock holding a connection, nothing holding the writer lock
waits for a connection. The unique (game, seq) constraint stays as a
safety net: an append that breaks it raises :class:`Conflict`. The schema is made by
:func:`scriba.store.database.migrate`, never here: a store on an old schema refuses to
start and says how to upgrade.

What a command does holding the lock is :class:`scriba.store.gamewrite.GameWrite`; the
advisory lock of PostgreSQL is :mod:`scriba.store.gamelock`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Text, bindparam, cast, func, select, type_coerce, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from scriba.errors import GameExists, UnknownGame, with_sentence
from scriba.store.bulk import collector_paused
from scriba.store.database import check_schema, is_memory, make_engine
from scriba.store.gamelock import Prepare, _advisory_lock, _prepare
from scriba.store.gamewrite import (
    _EVENT_COLUMNS,
    _INBOUND_COLUMNS,
    _INSERT_INBOUND,
    Conflict,
    GameWrite,
    _events_by_seq,
    _inbound,
    _latest_snapshot,
    request_owner,
)
from scriba.store.schema import events as events_t
from scriba.store.schema import games as games_t
from scriba.store.schema import inbound as inbound_t
from scriba.store.schema import snapshots as snapshots_t

# Names other modules import from here (scriba.service.writepath, tests).
__all__ = ["Conflict", "EventStore", "GameWrite", "Prepare", "request_owner"]

# Reading a log: the payload as its stored JSON text, decoded many rows at a time by one
# json.loads of a JSON array (per-row decoding through the JSON type costs ~3x the SELECT).
_RAW_COLUMNS = {
    "sqlite": (*_EVENT_COLUMNS[:4], type_coerce(events_t.c.payload, Text)),
    "postgresql": (*_EVENT_COLUMNS[:4], cast(events_t.c.payload, Text)),
}
_DECODE_BATCH = 4096
# Built once, as the statements of the command path (scriba.store.gamewrite).
_GAME_ROW = select(games_t.c.id).where(games_t.c.id == bindparam("game_id"))


def unknown_game(game_id: str) -> Exception:
    return with_sentence(UnknownGame(f"There is no game named {game_id!r}."),
                         "There is no game {game}.", game=game_id)


def game_exists(game_id: str) -> Exception:
    return GameExists(f"A game named {game_id!r} already exists.")


def _decoded(rows: list[Any]) -> list[dict[str, Any]]:
    """Events from rows whose payload is JSON text (or already decoded, on a driver
    that decodes it), the texts of a batch decoded in one call."""
    events: list[dict[str, Any]] = []
    for at in range(0, len(rows), _DECODE_BATCH):
        batch = rows[at:at + _DECODE_BATCH]
        texts = [row[4] for row in batch]
        if all(isinstance(t, str) for t in texts):
            payloads = json.loads("[" + ",".join(texts) + "]")
        else:
            payloads = [json.loads(t) if isinstance(t, str) else t for t in texts]
        events += [{"seq": row[0], "type": row[1], "time": row[2], "actor": row[3],
                    "payload": payload} for row, payload in zip(batch, payloads, strict=True)]
    return events


class EventStore:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.dialect = self.engine.dialect.name
        database = self.engine.url.database
        on_file = self.dialect == "sqlite" and not is_memory(url) and bool(database)
        self._lock_path = f"{database}.writer-lock" if on_file else None
        self._game_locks = f"{database}.locks" if on_file else None
        self._locks_made = False  # the directory of the games' lock files, made once
        self._held = threading.local()
        check_schema(self.engine)
        # ORM sessions for the tables read and written off the command path (accounts,
        # mail); the command path itself uses Core statements on ``engine``.
        self.session = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def _begin(self, write: bool = False) -> Iterator[Connection]:
        # A connection first, then the writer lock: never wait for a connection holding it.
        with self.engine.connect() as connection, \
                self.exclusive() if write else contextlib.nullcontext():
            if write and self.dialect == "sqlite":
                connection.execution_options(sqlite_begin="IMMEDIATE")
            with connection.begin():
                yield connection

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold SQLite's writer turn across several write transactions (re-entrant per
        thread); a no-op on PostgreSQL. Taken holding a connection, never the reverse.

        SQLite has one writer per file, and its busy handler polls with sleeps of up to
        100 ms, so writers queued on it leave the lock idle; a blocking ``flock`` on a side
        file hands the turn to the next writer as soon as it is free. ``BEGIN IMMEDIATE``
        and the busy timeout still guard against writers that do not take it.
        """
        if self._lock_path is None or getattr(self._held, "depth", 0):
            self._held.depth = getattr(self._held, "depth", 0) + 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        with open(self._lock_path, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0
                fcntl.flock(handle, fcntl.LOCK_UN)

    # --- the command path -------------------------------------------------------------
    @contextmanager
    def write(self, game_id: str, known: bool = False,
              prepare: Prepare | None = None) -> Iterator[GameWrite]:
        """Hold ``game_id``'s lock from the first read to the commit (when the block ends).

        Waits (never fails) while another process or thread holds it. Reads come first;
        :meth:`GameWrite.writing` (or the first write) starts the writing part. ``known``:
        the caller has read this game before, so its row is not looked up again (games are
        never deleted). ``prepare``: see :data:`Prepare`.
        """
        if self.dialect != "sqlite":
            with self._begin() as connection:
                if self.dialect == "postgresql":
                    # An advisory lock, not SELECT … FOR UPDATE: it writes nothing, so a
                    # writer that finds its input already decided commits without a flush.
                    _advisory_lock(connection, game_id, prepare)
                if not known and connection.execute(
                        _GAME_ROW, {"game_id": game_id}).first() is None:
                    raise unknown_game(game_id)
                yield GameWrite(connection, game_id)
            return
        with self._game_lock(game_id, prepare), self._sqlite_write(game_id, known) as tx:
            yield tx

    @contextmanager
    def _sqlite_write(self, game_id: str, known: bool) -> Iterator[GameWrite]:
        """A read transaction (WAL: beside the writer), turned by ``writing()`` into a write
        transaction under SQLite's lock. The game's own lock is held by the caller, so what
        was read stays true: no one else appends to this game meanwhile."""
        with contextlib.ExitStack() as stack:
            connection = stack.enter_context(self.engine.connect())
            transaction = connection.begin()

            def begin_write() -> None:
                nonlocal transaction
                transaction.commit()
                stack.enter_context(self.exclusive())  # released after the commit below
                connection.execution_options(sqlite_begin="IMMEDIATE")
                transaction = connection.begin()
            try:
                if not known and connection.execute(
                        _GAME_ROW, {"game_id": game_id}).first() is None:
                    raise unknown_game(game_id)
                yield GameWrite(connection, game_id, begin_write)
            except BaseException:
                transaction.rollback()
                raise
            transaction.commit()

    @contextmanager
    def _game_lock(self, game_id: str, prepare: Prepare | None = None) -> Iterator[None]:
        """SQLite on a file: ``flock`` of the game's own file beside the database, so the
        processes deciding one game queue while other games go on (re-entrant per thread).
        Taken before any connection: a writer waiting for it holds none."""
        held: set[str] = self._held.__dict__.setdefault("games", set())
        if self._game_locks is None or game_id in held:
            yield
            return
        if not self._locks_made:
            os.makedirs(self._game_locks, exist_ok=True)
            self._locks_made = True
        path = os.path.join(self._game_locks,
                            hashlib.blake2b(game_id.encode(), digest_size=16).hexdigest())
        with open(path, "a+b") as handle:
            if prepare is None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            else:
                self._wait_in_line(handle, path, game_id, prepare)
            held.add(game_id)
            try:
                yield
            finally:
                held.discard(game_id)
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _wait_in_line(self, game: Any, path: str, game_id: str, prepare: Prepare) -> None:
        """Take the game's ``flock``; if it is busy, first the line's (a second file), then
        ``prepare`` in a short read of its own, then the game's, then leave the line."""
        try:
            fcntl.flock(game, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        with open(path + ".line", "a+b") as line:
            fcntl.flock(line, fcntl.LOCK_EX)
            with contextlib.suppress(Exception), self.engine.connect() as connection, \
                    connection.begin():
                _prepare(prepare, GameWrite(connection, game_id))
            fcntl.flock(game, fcntl.LOCK_EX)  # the line's lock goes with its file

    # --- games ------------------------------------------------------------------------
    def create_game(self, game_id: str, name: str, ruleset: str,
                    events: list[dict[str, Any]], due_at: str | None = None,
                    listing: dict[str, Any] | None = None) -> None:
        try:
            with self._begin(write=True) as connection:
                if self._has_game(connection, game_id):
                    raise game_exists(game_id)
                connection.execute(games_t.insert().values(
                    id=game_id, name=name, ruleset=ruleset, created_at=datetime.now(UTC),
                    last_seq=events[-1]["seq"] if events else 0, due_at=due_at,
                    listing=listing))
                GameWrite(connection, game_id).append(events)
        except (IntegrityError, Conflict) as error:  # created meanwhile by another process
            raise game_exists(game_id) from error

    @staticmethod
    def _has_game(connection: Connection, game_id: str) -> bool:
        return connection.execute(_GAME_ROW, {"game_id": game_id}).first() is not None

    def has_game(self, game_id: str) -> bool:
        with self._begin() as connection:
            return self._has_game(connection, game_id)

    def games(self, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """The games' rows in the order they were made (``limit`` of them from ``offset``,
        or all): id, name, ruleset, ``events`` (its last event's number), ``due_at`` and
        ``listing`` (None until the service first indexes it)."""
        with self._begin() as connection:
            rows = connection.execute(
                select(games_t.c.id, games_t.c.name, games_t.c.ruleset, games_t.c.last_seq,
                       games_t.c.due_at, games_t.c.listing)
                .order_by(games_t.c.created_at, games_t.c.id).limit(limit).offset(offset))
            return [{"id": g, "name": n, "ruleset": r, "events": seq, "due_at": due,
                     "listing": listing} for g, n, r, seq, due, listing in rows]

    def due_games(self, now: str) -> list[str]:
        """The games whose next deadline is ``now`` or earlier (one indexed query)."""
        with self._begin() as connection:
            return list(connection.execute(
                select(games_t.c.id).where(games_t.c.due_at <= now)
                .order_by(games_t.c.due_at)).scalars())

    # --- events -----------------------------------------------------------------------
    def append(self, game_id: str, events: list[dict[str, Any]]) -> None:
        """Append events under the game's lock (the service decides inside :meth:`write`)."""
        with self.write(game_id) as tx:
            tx.append(events)
            if events:
                tx.connection.execute(update(games_t).where(games_t.c.id == game_id)
                                      .values(last_seq=events[-1]["seq"]))

    def events(self, game_id: str, after: int = 0, upto: int | None = None) -> list[dict[str, Any]]:
        with self._begin() as connection:
            # A game with events after 0 is known to exist; only a first read checks it.
            if after == 0 and not self._has_game(connection, game_id):
                raise unknown_game(game_id)
            columns = _RAW_COLUMNS.get(self.dialect, _EVENT_COLUMNS)
            query = select(*columns).where(events_t.c.game_id == game_id,
                                           events_t.c.seq > after)
            if upto is not None:
                query = query.where(events_t.c.seq <= upto)
            with collector_paused():
                return _decoded(connection.execute(query.order_by(events_t.c.seq)).all())

    def events_by_seq(self, game_id: str, seqs: Iterable[int]) -> list[dict[str, Any]]:
        with self._begin() as connection:
            return _events_by_seq(connection, game_id, seqs)

    def count_events(self, game_id: str) -> int:
        with self._begin() as connection:
            return connection.execute(select(func.count()).select_from(events_t)
                                      .where(events_t.c.game_id == game_id)).scalar_one()

    # --- snapshots --------------------------------------------------------------------
    def latest_snapshot(self, game_id: str) -> tuple[int, dict[str, Any]] | None:
        with self._begin() as connection:
            return _latest_snapshot(connection, game_id)

    def save_snapshot(self, game_id: str, seq: int, state_json: str) -> None:
        try:
            with self._begin(write=True) as connection:
                exists = connection.execute(select(snapshots_t.c.seq).where(
                    snapshots_t.c.game_id == game_id, snapshots_t.c.seq == seq)).first()
                if exists is None:
                    connection.execute(snapshots_t.insert().values(
                        game_id=game_id, seq=seq, state=state_json))
        except IntegrityError:
            pass  # another process wrote the same snapshot: it is the same state

    # --- raw inbound messages ---------------------------------------------------------
    def receive(self, channel: str, raw: str, game_id: str | None = None,
                request_id: str | None = None,
                command: dict[str, Any] | None = None) -> int:
        """Keep an input undecided (committed): its row's id. The write path keeps its
        inputs already decided; a row left ``received`` (an earlier version's queue, an
        interface that parses the raw text later) is decided by ``Service.recover``."""
        with self._begin(write=True) as connection:
            result = connection.execute(_INSERT_INBOUND, {
                "game_id": game_id, "channel": channel, "raw": raw,
                "received_at": datetime.now(UTC), "status": "received",
                "request_id": request_id, "player": request_owner(command),
                "command": command})
            return int(result.inserted_primary_key[0])

    def undecided(self) -> list[dict[str, Any]]:
        """Inputs kept but never decided (a crash between keeping and deciding), oldest first."""
        with self._begin() as connection:
            return [_inbound(row) for row in connection.execute(
                select(*_INBOUND_COLUMNS).where(inbound_t.c.status == "received")
                .order_by(inbound_t.c.id))]

    def mark_inbound(self, inbound_id: int, status: str, message: str,
                     outcome: dict[str, Any] | None = None) -> None:
        with self._begin(write=True) as connection:
            connection.execute(
                update(inbound_t).where(inbound_t.c.id == inbound_id)
                .values(status=status, result=message, outcome=outcome,
                        decided_at=datetime.now(UTC)))

    def inbound(self, game_id: str | None = None) -> list[dict[str, Any]]:
        with self._begin() as connection:
            query = select(*_INBOUND_COLUMNS).order_by(inbound_t.c.id)
            if game_id is not None:
                query = query.where(inbound_t.c.game_id == game_id)
            return [_inbound(row) for row in connection.execute(query)]

    def close(self) -> None:
        self.engine.dispose()

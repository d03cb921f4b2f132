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
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Text, bindparam, cast, func, select, text, type_coerce, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from scriba.errors import GameExists, UnknownGame, with_sentence
from scriba.store.bulk import collector_paused
from scriba.store.database import check_schema, is_memory, make_engine
from scriba.store.schema import events as events_t
from scriba.store.schema import games as games_t
from scriba.store.schema import inbound as inbound_t
from scriba.store.schema import snapshots as snapshots_t

log = logging.getLogger("scriba.store")

_EVENT_COLUMNS = (events_t.c.seq, events_t.c.type, events_t.c.time, events_t.c.actor,
                  events_t.c.payload)
# Reading a log: the payload as its stored JSON text, decoded many rows at a time by one
# json.loads of a JSON array (per-row decoding through the JSON type costs ~3x the SELECT).
_RAW_COLUMNS = {
    "sqlite": (*_EVENT_COLUMNS[:4], type_coerce(events_t.c.payload, Text)),
    "postgresql": (*_EVENT_COLUMNS[:4], cast(events_t.c.payload, Text)),
}
_DECODE_BATCH = 4096
_INBOUND_COLUMNS = (inbound_t.c.id, inbound_t.c.game_id, inbound_t.c.channel,
                    inbound_t.c.raw, inbound_t.c.status, inbound_t.c.result,
                    inbound_t.c.request_id, inbound_t.c.player, inbound_t.c.command,
                    inbound_t.c.outcome)


# The command path's statements, built once: building a statement costs more than
# running it on SQLite (SQLAlchemy caches the compiled form; these skip the construction).
_GAME_ROW = select(games_t.c.id).where(games_t.c.id == bindparam("game_id"))
_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:key)")
_TRY_ADVISORY_LOCK = text("SELECT pg_try_advisory_xact_lock(:key)")
_LINE_LOCK = text("SELECT pg_advisory_lock(:key)")  # the line: left as soon as first
_LINE_UNLOCK = text("SELECT pg_advisory_unlock(:key)")
_EVENTS_AFTER = (select(*_EVENT_COLUMNS)
                 .where(events_t.c.game_id == bindparam("game_id"),
                        events_t.c.seq > bindparam("after"))
                 .order_by(events_t.c.seq))
_INSERT_EVENTS = events_t.insert()
_INBOUND_BY_ID = select(*_INBOUND_COLUMNS).where(inbound_t.c.id == bindparam("inbound_id"))
# Only a row still ``received`` is decided: a second decision would be a lock bypassed.
_DECIDE_INBOUND = (update(inbound_t).where(inbound_t.c.id == bindparam("inbound_id"),
                                           inbound_t.c.status == "received")
                   .values(status=bindparam("b_status"), result=bindparam("b_result"),
                           outcome=bindparam("b_outcome"),
                           decided_at=bindparam("b_decided_at")))
_INSERT_INBOUND = inbound_t.insert()
_INDEX_GAME = (update(games_t).where(games_t.c.id == bindparam("game_id"))
               .values(last_seq=bindparam("b_last_seq"), due_at=bindparam("b_due_at"),
                       listing=bindparam("b_listing")))
# A request id is its player's own: (game, player, id) is unique.
_FIND_REQUEST = select(*_INBOUND_COLUMNS).where(
    inbound_t.c.game_id == bindparam("game_id"), inbound_t.c.player == bindparam("player"),
    inbound_t.c.request_id == bindparam("request_id"))


def request_owner(command: Any) -> str:
    """Whose request id an input's is: the player the command acts as; "" for the
    officer's and the system's (never NULL: unique constraints ignore NULLs)."""
    actor = command.get("actor") if isinstance(command, dict) else None
    return actor if isinstance(actor, str) else ""


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


class Conflict(Exception):
    """Two writers produced the same event number: the per-game lock was bypassed."""


def unknown_game(game_id: str) -> Exception:
    return with_sentence(UnknownGame(f"There is no game named {game_id!r}."),
                         "There is no game {game}.", game=game_id)


def game_exists(game_id: str) -> Exception:
    return GameExists(f"A game named {game_id!r} already exists.")


def _event(row: Any) -> dict[str, Any]:
    return {"seq": row[0], "type": row[1], "time": row[2], "actor": row[3], "payload": row[4]}


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


def _inbound(row: Any) -> dict[str, Any]:
    return dict(row._mapping)


class GameWrite:
    """What a command may do while it holds its game's lock: read, then (after
    :meth:`writing`) append, keep and decide inbound rows."""

    def __init__(self, connection: Connection, game_id: str,
                 begin_write: Callable[[], None] | None = None) -> None:
        self.connection = connection
        self.game_id = game_id
        self._begin_write = begin_write
        self.caught_up: list[dict[str, Any]] = []  # what the last events_after() read

    def writing(self) -> None:
        """From here on this transaction writes. On SQLite this ends the read and takes the
        database's write lock (``BEGIN IMMEDIATE``): call it once deciding is done, so
        the database-wide lock is held only for the writing. Idempotent."""
        if self._begin_write is not None:
            begin, self._begin_write = self._begin_write, None
            begin()

    def find_request(self, player: str, request_id: str) -> dict[str, Any] | None:
        """The input ``player`` sent under ``request_id`` in this game (see
        :func:`request_owner`), or None."""
        row = self.connection.execute(_FIND_REQUEST, {
            "game_id": self.game_id, "player": player, "request_id": request_id}).first()
        return _inbound(row) if row else None

    def keep_decided(self, channel: str, raw: str, request_id: str | None,
                     command: dict[str, Any], *, status: str, message: str,
                     outcome: dict[str, Any]) -> int:
        """Keep an input already decided, in the transaction that writes its decision
        (one INSERT, no UPDATE after): the row's id.

        An IntegrityError means its player's request id was kept meanwhile by a writer
        that bypassed the game's lock.
        """
        self.writing()
        now = datetime.now(UTC)
        result = self.connection.execute(_INSERT_INBOUND, {
            "game_id": self.game_id, "channel": channel, "raw": raw, "received_at": now,
            "status": status, "result": message, "outcome": outcome, "decided_at": now,
            "request_id": request_id, "player": request_owner(command), "command": command})
        return int(result.inserted_primary_key[0])

    def events_after(self, seq: int) -> list[dict[str, Any]]:
        rows = self.connection.execute(_EVENTS_AFTER, {"game_id": self.game_id, "after": seq})
        self.caught_up = [_event(row) for row in rows]
        return self.caught_up

    def events_by_seq(self, seqs: Iterable[int]) -> list[dict[str, Any]]:
        return _events_by_seq(self.connection, self.game_id, seqs)

    def latest_snapshot(self) -> tuple[int, dict[str, Any]] | None:
        return _latest_snapshot(self.connection, self.game_id)

    def inbound(self, inbound_id: int) -> dict[str, Any] | None:
        row = self.connection.execute(_INBOUND_BY_ID, {"inbound_id": inbound_id}).first()
        return _inbound(row) if row else None

    def append(self, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        self.writing()
        try:  # on failure the whole transaction is rolled back by the caller's block
            self.connection.execute(_INSERT_EVENTS, [
                {"game_id": self.game_id, "seq": e["seq"], "type": e["type"],
                 "time": e["time"], "actor": e["actor"], "payload": e["payload"]}
                for e in events])
        except IntegrityError as error:
            raise Conflict(f"game {self.game_id} changed meanwhile") from error

    def index(self, last_seq: int, due_at: str | None, listing: dict[str, Any]) -> None:
        """Keep the game's row up to date with this commit (see ``schema.games``)."""
        self.writing()
        self.connection.execute(_INDEX_GAME, {"game_id": self.game_id, "b_last_seq": last_seq,
                                              "b_due_at": due_at, "b_listing": listing})

    def decide(self, inbound_id: int, status: str, message: str,
               outcome: dict[str, Any]) -> None:
        self.writing()
        result = self.connection.execute(_DECIDE_INBOUND, {
            "inbound_id": inbound_id, "b_status": status, "b_result": message,
            "b_outcome": outcome, "b_decided_at": datetime.now(UTC)})
        if result.rowcount != 1:  # decided meanwhile: only a writer bypassing the lock
            raise Conflict(f"input {inbound_id} of game {self.game_id} was decided meanwhile")


def _events_by_seq(connection: Connection, game_id: str,
                   seqs: Iterable[int]) -> list[dict[str, Any]]:
    wanted = sorted(set(seqs))
    if not wanted:
        return []
    query = select(*_EVENT_COLUMNS).where(
        events_t.c.game_id == game_id, events_t.c.seq >= wanted[0],
        events_t.c.seq <= wanted[-1]).order_by(events_t.c.seq)
    return [e for e in map(_event, connection.execute(query)) if e["seq"] in wanted]


def _latest_snapshot(connection: Connection, game_id: str) -> tuple[int, dict[str, Any]] | None:
    row = connection.execute(
        select(snapshots_t.c.seq, snapshots_t.c.state).where(snapshots_t.c.game_id == game_id)
        .order_by(snapshots_t.c.seq.desc()).limit(1)).first()
    return (row[0], json.loads(row[1])) if row else None


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

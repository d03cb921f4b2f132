"""What a command may do while it holds its game's lock (:class:`GameWrite`): read the
events after a number, the latest snapshot, an input; then append events, keep and decide
inputs, index the game's row. The statements of that path are built once here: building a
statement costs more than running it on SQLite."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select, update
from sqlalchemy.exc import IntegrityError

from scriba.store.schema import events as events_t
from scriba.store.schema import games as games_t
from scriba.store.schema import inbound as inbound_t
from scriba.store.schema import snapshots as snapshots_t

_EVENT_COLUMNS = (events_t.c.seq, events_t.c.type, events_t.c.time, events_t.c.actor,
                  events_t.c.payload)
_INBOUND_COLUMNS = (inbound_t.c.id, inbound_t.c.game_id, inbound_t.c.channel,
                    inbound_t.c.raw, inbound_t.c.status, inbound_t.c.result,
                    inbound_t.c.request_id, inbound_t.c.player, inbound_t.c.command,
                    inbound_t.c.outcome)


# The command path's statements, built once: building a statement costs more than
# running it on SQLite (SQLAlchemy caches the compiled form; these skip the construction).
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


class Conflict(Exception):
    """Two writers produced the same event number: the per-game lock was bypassed."""


def _event(row: Any) -> dict[str, Any]:
    return {"seq": row[0], "type": row[1], "time": row[2], "actor": row[3], "payload": row[4]}


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

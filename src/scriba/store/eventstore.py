"""The event store: append-only game logs, snapshots and raw inbound messages.

SQLite by default, PostgreSQL in production; the schema is created and upgraded by
Alembic migrations. Appends are optimistic: events carry their sequence numbers and the
unique (game, seq) constraint turns a concurrent writer into :class:`Conflict`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from scriba.store.models import Event, Game, Inbound, Snapshot

MIGRATIONS = Path(__file__).parent / "migrations"


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    # WAL lets readers run beside the writer; NORMAL sync keeps every committed command
    # across a crash of the server (not of the machine's power) at a fraction of the cost.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class Conflict(Exception):
    """Another writer appended to the game first; reload and try again."""


class UnknownGame(Exception):
    pass


def migrate(engine: Any) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


class EventStore:
    def __init__(self, url: str) -> None:
        options: dict[str, Any] = {}
        if url in ("sqlite://", "sqlite:///:memory:"):
            options = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        self.url = url
        self.engine = create_engine(url, **options)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        migrate(self.engine)
        self.session = sessionmaker(self.engine, expire_on_commit=False)

    # --- games ------------------------------------------------------------------------
    def create_game(self, game_id: str, name: str, ruleset: str,
                    events: list[dict[str, Any]]) -> None:
        with self.session.begin() as session:
            if session.get(Game, game_id) is not None:
                raise Conflict(f"a game named {game_id!r} already exists")
            session.add(Game(id=game_id, name=name, ruleset=ruleset,
                             created_at=datetime.now(UTC)))
            session.flush()
            self._add(session, game_id, events)

    def games(self) -> list[dict[str, Any]]:
        with self.session() as session:
            counts = dict(session.execute(
                select(Event.game_id, func.max(Event.seq)).group_by(Event.game_id)).all())
            return [{"id": g.id, "name": g.name, "ruleset": g.ruleset,
                     "events": counts.get(g.id, 0)}
                    for g in session.scalars(select(Game).order_by(Game.created_at))]

    # --- events -----------------------------------------------------------------------
    def append(self, game_id: str, events: list[dict[str, Any]],
               inbound: tuple[int, str, str] | None = None,
               in_transaction: Any = None) -> None:
        """Append events, and mark the inbound message they answer, in one transaction."""
        if not events and inbound is None:
            return
        try:
            with self.session.begin() as session:
                self._add(session, game_id, events)
                if inbound is not None:
                    row = session.get(Inbound, inbound[0])
                    if row is not None:
                        row.status, row.result = inbound[1], inbound[2]
                if in_transaction is not None:
                    session.flush()
                    in_transaction(session.connection())
        except IntegrityError as error:
            raise Conflict(f"game {game_id} changed meanwhile") from error

    @staticmethod
    def _add(session: Session, game_id: str, events: list[dict[str, Any]]) -> None:
        session.add_all(Event(game_id=game_id, seq=e["seq"], type=e["type"], time=e["time"],
                              actor=e["actor"], payload=e["payload"]) for e in events)

    def events(self, game_id: str, after: int = 0, upto: int | None = None) -> list[dict[str, Any]]:
        with self.session() as session:
            # A game with events after 0 is known to exist; only a first read checks it.
            if after == 0 and session.get(Game, game_id) is None:
                raise UnknownGame(game_id)
            query = select(Event).where(Event.game_id == game_id, Event.seq > after)
            if upto is not None:
                query = query.where(Event.seq <= upto)
            return [{"seq": e.seq, "type": e.type, "time": e.time, "actor": e.actor,
                     "payload": e.payload}
                    for e in session.scalars(query.order_by(Event.seq))]

    # --- snapshots --------------------------------------------------------------------
    def latest_snapshot(self, game_id: str) -> tuple[int, dict[str, Any]] | None:
        with self.session() as session:
            row = session.scalars(select(Snapshot).where(Snapshot.game_id == game_id)
                                  .order_by(Snapshot.seq.desc()).limit(1)).first()
            return (row.seq, json.loads(row.state)) if row else None

    def save_snapshot(self, game_id: str, seq: int, state_json: str) -> None:
        with self.session.begin() as session:
            if session.get(Snapshot, (game_id, seq)) is None:
                session.add(Snapshot(game_id=game_id, seq=seq, state=state_json))

    # --- raw inbound messages ---------------------------------------------------------
    def keep_inbound(self, channel: str, raw: str, game_id: str | None = None) -> int:
        with self.session.begin() as session:
            row = Inbound(game_id=game_id, channel=channel, raw=raw,
                          received_at=datetime.now(UTC), status="received")
            session.add(row)
            session.flush()
            return row.id

    def inbound(self, game_id: str | None = None) -> list[dict[str, Any]]:
        with self.session() as session:
            query = select(Inbound).order_by(Inbound.id)
            if game_id is not None:
                query = query.where(Inbound.game_id == game_id)
            return [{"id": r.id, "channel": r.channel, "raw": r.raw, "status": r.status,
                     "result": r.result} for r in session.scalars(query)]

    def close(self) -> None:
        self.engine.dispose()

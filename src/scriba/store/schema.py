"""Tables as SQLAlchemy Core objects: games, their append-only events, snapshots, inbound.

The command path reads and writes these with Core statements (no ORM unit of work);
Alembic migrations create them, and ``metadata`` is what autogenerate compares against.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

games = Table(
    "games", metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("ruleset", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # Kept by every commit, so that a host's listing and its deadline loop read one row per
    # game (or only the games due), never the games' logs: the last event's number, when
    # the game's next deadline falls (real-clock games; None: none), and what the games'
    # listing shows of it (its name, period, language, whether it ended).
    Column("last_seq", Integer, nullable=False, server_default="0"),
    Column("due_at", String(40), nullable=True),
    Column("listing", JSON, nullable=True),
    Index("ix_games_due_at", "due_at"),
    Index("ix_games_made", "created_at", "id"),  # the listing's order, a page at a time
)

events = Table(
    "events", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(64), ForeignKey("games.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("type", String(64), nullable=False),
    Column("time", String(32), nullable=False),
    Column("actor", String(200), nullable=True),
    Column("payload", JSON, nullable=False),
    # The safety net under the per-game lock: two writers can never store one seq twice.
    UniqueConstraint("game_id", "seq", name="uq_events_game_seq"),
    Index("ix_events_game_id", "game_id"),
)

snapshots = Table(
    "snapshots", metadata,
    Column("game_id", String(64), ForeignKey("games.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("state", Text, nullable=False),
)

# Raw input kept (committed) before it is decided, so nothing a player sent is lost; the
# decision, its events and the row's status are then written in one transaction.
inbound = Table(
    "inbound", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("game_id", String(64), nullable=True),
    Column("channel", String(32), nullable=False),
    Column("received_at", DateTime(timezone=True), nullable=False),
    Column("raw", Text, nullable=False),
    Column("status", String(32), nullable=False),  # received | accepted | refused
    Column("result", Text, nullable=True),  # the message given back
    Column("request_id", String(200), nullable=True),  # the client's idempotency key
    # Whose request id it is: the acting player ("" for the officer or the system).
    Column("player", String(200), nullable=True),
    Column("command", JSON, nullable=True),  # {"op", "actor", "action", "args", "at"}
    Column("decided_at", DateTime(timezone=True), nullable=True),
    Column("outcome", JSON, nullable=True),  # {"accepted", "message", "seqs"}
    UniqueConstraint("game_id", "player", "request_id", name="uq_inbound_game_player_request"),
    Index("ix_inbound_game_id", "game_id"),
    Index("ix_inbound_status", "status"),
)

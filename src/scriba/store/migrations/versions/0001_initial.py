"""The first tables: games, events, snapshots, inbound.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("ruleset", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("time", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(200), nullable=True),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.UniqueConstraint("game_id", "seq", name="uq_events_game_seq"),
    )
    op.create_index("ix_events_game_id", "events", ["game_id"])
    op.create_table(
        "snapshots",
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("state", sa.Text, nullable=False),
    )
    op.create_table(
        "inbound",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("channel", sa.String(32), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("raw", sa.Text, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("result", sa.Text, nullable=True),
    )
    op.create_index("ix_inbound_game_id", "inbound", ["game_id"])


def downgrade() -> None:
    op.drop_table("inbound")
    op.drop_table("snapshots")
    op.drop_table("events")
    op.drop_table("games")

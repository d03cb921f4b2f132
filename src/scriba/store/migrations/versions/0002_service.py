"""Exactly-once commands: request ids, the structured command and its recorded outcome.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbound") as batch:
        batch.add_column(sa.Column("request_id", sa.String(200), nullable=True))
        batch.add_column(sa.Column("command", sa.JSON, nullable=True))
        batch.add_column(sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("outcome", sa.JSON, nullable=True))
        batch.create_unique_constraint("uq_inbound_game_request", ["game_id", "request_id"])
    op.create_index("ix_inbound_status", "inbound", ["status"])


def downgrade() -> None:
    op.drop_index("ix_inbound_status", "inbound")
    with op.batch_alter_table("inbound") as batch:
        batch.drop_constraint("uq_inbound_game_request", type_="unique")
        batch.drop_column("outcome")
        batch.drop_column("decided_at")
        batch.drop_column("command")
        batch.drop_column("request_id")

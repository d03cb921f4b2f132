"""Mail: letters kept raw, the outbox, personal addresses.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mail_letters",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("message_id", sa.String(500), nullable=False, unique=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("channel", sa.String(16), nullable=False),
        sa.Column("raw", sa.LargeBinary, nullable=False),
        sa.Column("sender", sa.String(320), nullable=False),
        sa.Column("recipient", sa.String(320), nullable=False),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("player", sa.String(200), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("auth", sa.String(32), nullable=False),
        sa.Column("result", sa.Text, nullable=True),
    )
    op.create_index("ix_mail_letters_game_id", "mail_letters", ["game_id"])
    op.create_index("ix_mail_letters_status", "mail_letters", ["status"])
    op.create_table(
        "mail_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(500), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("game_id", sa.String(64), nullable=True),
        sa.Column("player", sa.String(200), nullable=True),
        sa.Column("recipient", sa.String(320), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(500), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("headers", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_mail_outbox_game_id", "mail_outbox", ["game_id"])
    op.create_index("ix_mail_outbox_status", "mail_outbox", ["status"])
    op.create_table(
        "mail_addresses",
        sa.Column("game_id", sa.String(64), primary_key=True),
        sa.Column("player", sa.String(200), primary_key=True),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("game_id", "secret", name="uq_mail_addresses_secret"),
    )


def downgrade() -> None:
    op.drop_table("mail_addresses")
    op.drop_table("mail_outbox")
    op.drop_table("mail_letters")

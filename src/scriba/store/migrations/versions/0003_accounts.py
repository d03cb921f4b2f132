"""Accounts, seats, invitations, API tokens, sign-in attempts, server secrets.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("email", sa.String(320), nullable=False, unique=True),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("language", sa.String(16), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("mail_mode", sa.String(16), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
    )
    op.create_table(
        "seats",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("account_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("player", sa.String(200), nullable=True),
        sa.UniqueConstraint("game_id", "player", name="uq_seats_game_player"),
        sa.UniqueConstraint("game_id", "account_id", "role", name="uq_seats_game_account_role"),
    )
    op.create_index("ix_seats_game_id", "seats", ["game_id"])
    op.create_index("ix_seats_account_id", "seats", ["account_id"])
    op.create_table(
        "invitations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column("player", sa.String(200), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("expires_at", _TZ, nullable=False),
        sa.Column("used_at", _TZ, nullable=True),
    )
    op.create_index("ix_invitations_game_id", "invitations", ["game_id"])
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("game_id", sa.String(64), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("player", sa.String(200), nullable=False),
        sa.Column("account_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=True),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("revoked_at", _TZ, nullable=True),
    )
    op.create_index("ix_api_tokens_game_id", "api_tokens", ["game_id"])
    op.create_table(
        "signin_attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(400), nullable=False),
        sa.Column("at", _TZ, nullable=False),
    )
    op.create_index("ix_signin_attempts_key_at", "signin_attempts", ["key", "at"])
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(512), nullable=False),
    )


def downgrade() -> None:
    for table in ("server_secrets", "signin_attempts", "api_tokens", "invitations", "seats",
                  "accounts"):
        op.drop_table(table)

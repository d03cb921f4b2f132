"""Security: request ids per player, server-side sessions, shared rate-limit counters,
password resets, and a letter's signature as its identity.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    # A request id is the player's own: (game, player, id), so two players' bots that
    # number their requests alike never collide.
    with op.batch_alter_table("inbound") as batch:
        batch.add_column(sa.Column("player", sa.String(200), nullable=True))
        batch.drop_constraint("uq_inbound_game_request", type_="unique")
    inbound = sa.table("inbound", sa.column("id", sa.Integer),
                       sa.column("command", sa.JSON), sa.column("player", sa.String))
    connection = op.get_bind()
    for row_id, command in connection.execute(
            sa.select(inbound.c.id, inbound.c.command)).all():
        actor = command.get("actor") if isinstance(command, dict) else None
        connection.execute(sa.update(inbound).where(inbound.c.id == row_id)
                           .values(player=actor if isinstance(actor, str) else ""))
    with op.batch_alter_table("inbound") as batch:
        batch.create_unique_constraint("uq_inbound_game_player_request",
                                       ["game_id", "player", "request_id"])

    op.create_table(
        "web_sessions",
        sa.Column("id", sa.String(64), primary_key=True),  # SHA-256 of the cookie's key
        sa.Column("account_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("seen_at", _TZ, nullable=False),
        sa.Column("expires_at", _TZ, nullable=False),
        sa.Column("ended_at", _TZ, nullable=True),
        sa.Column("client", sa.String(200), nullable=False),
    )
    op.create_index("ix_web_sessions_account_id", "web_sessions", ["account_id"])

    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(400), primary_key=True),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("expires_at", _TZ, nullable=False),
    )
    op.create_index("ix_rate_limits_expires_at", "rate_limits", ["expires_at"])
    # The rate limits replace the failed sign-ins of 0003, which were counted after the
    # password was checked (and so not at all for attempts racing each other).
    op.drop_index("ix_signin_attempts_key_at", table_name="signin_attempts")
    op.drop_table("signin_attempts")
    # Session cookies were signed with a key kept here; now they carry a random key of a
    # session row, and nothing is signed.
    op.drop_table("server_secrets")

    op.create_table(
        "password_resets",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("account_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("expires_at", _TZ, nullable=False),
        sa.Column("used_at", _TZ, nullable=True),
    )
    op.create_index("ix_password_resets_account_id", "password_resets", ["account_id"])

    with op.batch_alter_table("mail_letters") as batch:
        batch.add_column(sa.Column("signature", sa.String(64), nullable=True))
        batch.create_unique_constraint("uq_mail_letters_signature", ["signature"])


def downgrade() -> None:
    with op.batch_alter_table("mail_letters") as batch:
        batch.drop_constraint("uq_mail_letters_signature", type_="unique")
        batch.drop_column("signature")
    op.drop_table("password_resets")
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(512), nullable=False),
    )
    op.create_table(
        "signin_attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(400), nullable=False),
        sa.Column("at", _TZ, nullable=False),
    )
    op.create_index("ix_signin_attempts_key_at", "signin_attempts", ["key", "at"])
    op.drop_table("rate_limits")
    op.drop_table("web_sessions")
    with op.batch_alter_table("inbound") as batch:
        batch.drop_constraint("uq_inbound_game_player_request", type_="unique")
        batch.drop_column("player")
        batch.create_unique_constraint("uq_inbound_game_request", ["game_id", "request_id"])

"""The games' index: each game's last event, next deadline and listing, kept by its commits.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("due_at", sa.String(40), nullable=True))
        batch.add_column(sa.Column("listing", sa.JSON, nullable=True))
        batch.create_index("ix_games_due_at", ["due_at"])
    # The last event of each game now; deadlines and listings are filled in by the service
    # when it starts (a game without a listing is indexed then).
    games = sa.table("games", sa.column("id", sa.String), sa.column("last_seq", sa.Integer))
    events = sa.table("events", sa.column("game_id", sa.String), sa.column("seq", sa.Integer))
    op.get_bind().execute(sa.update(games).values(last_seq=sa.func.coalesce(
        sa.select(sa.func.max(events.c.seq)).where(events.c.game_id == games.c.id)
        .scalar_subquery(), 0)))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_due_at")
        batch.drop_column("listing")
        batch.drop_column("due_at")
        batch.drop_column("last_seq")

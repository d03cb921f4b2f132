"""The outbox's attachments: a proposal's announcement carries its rule code as files.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mail_outbox") as batch:
        batch.add_column(sa.Column("attachments", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mail_outbox") as batch:
        batch.drop_column("attachments")

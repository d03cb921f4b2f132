"""The outbox's index of what each reader of a game was told, and when: the busy check
before every announcement (:mod:`scriba.service.busy`) counts a reader's announcements of
the last day by it, instead of reading every message the game ever queued.

Revision ID: 0009
Revises: 0008
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_mail_outbox_told", "mail_outbox",
                    ["game_id", "kind", "recipient", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_mail_outbox_told", table_name="mail_outbox")

"""Proposals tested by the lab ("Test this proposal"): progress and report of each.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "proposal_tests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("proposal", sa.Integer, nullable=False),
        sa.Column("at_seq", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("done_turns", sa.Integer, nullable=False),
        sa.Column("total_turns", sa.Integer, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("bounds", sa.JSON, nullable=False),
        sa.Column("report", sa.JSON, nullable=True),
        sa.Column("asked_by", sa.String(200), nullable=False),
        sa.Column("notify", sa.JSON, nullable=True),
        sa.UniqueConstraint("game_id", "proposal", "at_seq", name="uq_proposal_tests_state"),
    )
    op.create_index("ix_proposal_tests_game_id", "proposal_tests", ["game_id"])


def downgrade() -> None:
    op.drop_index("ix_proposal_tests_game_id", "proposal_tests")
    op.drop_table("proposal_tests")

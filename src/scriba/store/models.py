"""The ORM base for tables used off the command path (accounts, mail), and the proposals
tested by the lab.

They share the Core tables' ``MetaData`` (:mod:`scriba.store.schema`), so Alembic and a
fresh database see one schema; the command path itself uses Core statements only.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Integer, String, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from scriba.store.schema import metadata


class Base(DeclarativeBase):
    metadata = metadata


class ProposalTestRow(Base):
    """A proposal tested by the lab ("Test this proposal"): one per proposal and game state
    (``at_seq``, the game's last event when it was asked), kept with its progress and its
    report (as data; the service tells it in the reader's words)."""

    __tablename__ = "proposal_tests"
    __table_args__ = (UniqueConstraint("game_id", "proposal", "at_seq",
                                       name="uq_proposal_tests_state"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(String(64), index=True)
    proposal: Mapped[int] = mapped_column(Integer)
    at_seq: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))  # running | done | failed
    done_turns: Mapped[int] = mapped_column(Integer, default=0)
    total_turns: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    bounds: Mapped[dict] = mapped_column(JSON, default=dict)  # games, turns, seconds, workers
    report: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    asked_by: Mapped[str] = mapped_column(String(200))
    # Who is told by mail when it is done: {"address", "language", "message_id", "subject"}
    notify: Mapped[dict | None] = mapped_column(JSON, nullable=True)

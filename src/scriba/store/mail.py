"""Tables of the mail front: letters kept raw, the outbox, personal addresses.

A letter is stored as the bytes that arrived, before anything reads it, and its
Message-ID is unique so that a letter delivered twice is decided once. The outbox is
written in the same transaction as the events it tells about (a commit listener), and each
row's ``key`` is unique so that no message is queued twice.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from scriba.store.models import Base


class Letter(Base):
    __tablename__ = "mail_letters"
    # Named as migration 0005 names it, so that a new database has what an upgraded one has.
    __table_args__ = (UniqueConstraint("signature", name="uq_mail_letters_signature"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    message_id: Mapped[str] = mapped_column(String(500), unique=True)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    channel: Mapped[str] = mapped_column(String(16))
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    sender: Mapped[str] = mapped_column(String(320), default="")
    recipient: Mapped[str] = mapped_column(String(320), default="")
    game_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # kept -> deciding -> decided | held (not authenticated) | ignored (auto reply) | refused
    status: Mapped[str] = mapped_column(String(16), default="kept", index=True)
    auth: Mapped[str] = mapped_column(String(32), default="")
    result: Mapped[str | None] = mapped_column(Text, nullable=True)
    # A signed letter's identity: SHA-256 of its DKIM signature (b=), so that the same
    # signed letter sent again under a new Message-ID is recognised and not decided twice.
    signature: Mapped[str | None] = mapped_column(String(64), nullable=True)


class OutboxMessage(Base):
    __tablename__ = "mail_outbox"
    # What each reader of a game was told, and when (service/busy.py counts a day of it
    # before every announcement): a range of this index, not every row of the game.
    __table_args__ = (Index("ix_mail_outbox_told", "game_id", "kind", "recipient",
                            "created_at"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(500), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    game_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)
    recipient: Mapped[str] = mapped_column(String(320))
    kind: Mapped[str] = mapped_column(String(32))
    subject: Mapped[str] = mapped_column(String(500))
    body: Mapped[str] = mapped_column(Text)
    headers: Mapped[dict] = mapped_column(JSON, default=dict)
    # Files sent with the message ([{"filename", "content"}], plain text): a proposal's code
    attachments: Mapped[list | None] = mapped_column(JSON, nullable=True)
    # part (a piece of a receipt) | pending | digest (waits for the daily digest) |
    # sent | merged (sent inside a digest or receipt) | failed (refused for good)
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class PersonalAddress(Base):
    __tablename__ = "mail_addresses"
    __table_args__ = (UniqueConstraint("game_id", "secret", name="uq_mail_addresses_secret"),)
    game_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    player: Mapped[str] = mapped_column(String(200), primary_key=True)
    secret: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

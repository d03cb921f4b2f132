"""Tables of people: accounts, their seats in games, invitations, API tokens and the rate
limits' counters.

Secrets people hold (passwords, invitation links, API tokens) are never stored as given:
passwords as argon2 hashes, links and tokens as SHA-256 of a high-entropy random string.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from scriba.store.models import Base


class AccountRow(Base):
    __tablename__ = "accounts"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    display_name: Mapped[str] = mapped_column(String(200))
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    language: Mapped[str] = mapped_column(String(16), default="en")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    mail_mode: Mapped[str] = mapped_column(String(16), default="auto")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SeatRow(Base):
    """An account's place in a game: a player (bound to one player name) or the officer.

    The officer's row has no player; SQL unique constraints ignore NULLs, so one game may
    have one account per player name and any number of officers."""

    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "player", name="uq_seats_game_player"),
                      UniqueConstraint("game_id", "account_id", "role",
                                       name="uq_seats_game_account_role"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # "player" | "officer"
    player: Mapped[str | None] = mapped_column(String(200), nullable=True)


class InvitationRow(Base):
    __tablename__ = "invitations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    email: Mapped[str] = mapped_column(String(320))
    player: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ApiTokenRow(Base):
    __tablename__ = "api_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), index=True)
    player: Mapped[str] = mapped_column(String(200))
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id"), nullable=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class WebSessionRow(Base):
    """A signed-in browser: the cookie holds a random key, this row its SHA-256. Signing
    out, a password change or the loss of a seat ends the row, and so the session."""

    __tablename__ = "web_sessions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    client: Mapped[str] = mapped_column(String(200), default="")


class RateLimitRow(Base):
    """A counter of the rate limits (sign-ins, game creation), shared by every process on
    this database: incremented atomically, forgotten after ``expires_at``."""

    __tablename__ = "rate_limits"
    key: Mapped[str] = mapped_column(String(400), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class PasswordResetRow(Base):
    """A password-reset link sent by mail: single use, expiring; only its hash is kept."""

    __tablename__ = "password_resets"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

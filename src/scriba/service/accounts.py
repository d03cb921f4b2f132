"""People: accounts, sign-in sessions and password resets (their seats in games, the
invitations and API tokens are :mod:`.seats`; what a password must be, :mod:`.passwords`).

Used by every interface that knows who is speaking: the web (sign-in, preferences,
password resets), mail (an address is a person), the CLI (``scriba officer``).

- A wrong address costs the same hashing time as a wrong password, so sign-in does not
  tell which addresses have accounts. Setting a password ends the account's other sessions.
- A web session is a row keyed by the SHA-256 of the random key its cookie holds; signing
  out, a password change or the loss of a seat ends it in the database, so every server
  process on it sees the end at once.
- A password reset is a single-use link valid for an hour, mailed through the outbox at
  most once per address and quarter of an hour; only its SHA-256 is kept.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError

from scriba.service import validation
from scriba.service.errors import InvalidInput, NotAllowed, NotFound
from scriba.service.messages import translate
from scriba.service.passwords import PASSWORD_MAX, _hasher, check_password, dummy_hash
from scriba.service.profile import MAIL_MODES, check_language, check_timezone, normalize_email
from scriba.store.accounts import (
    AccountRow,
    PasswordResetRow,
    WebSessionRow,
)
from scriba.store.eventstore import EventStore
from scriba.store.mail import OutboxMessage as OutboxMessageRow

if TYPE_CHECKING:
    from scriba.service.outbox import Outbox
    from scriba.service.ratelimit import Limiter

SESSION_DAYS = 30            # a sign-in lasts this long, unless it is ended before
SEEN_EVERY = timedelta(hours=1)  # "last seen" is written at most this often
RESET_HOURS = 1              # a password-reset link works this long, once
RESET_EVERY = 900            # seconds: one reset mail per address per quarter of an hour


@dataclass(frozen=True)
class Account:
    id: int
    email: str
    display_name: str
    language: str
    timezone: str
    mail_mode: str
    has_password: bool








@dataclass(frozen=True)
class WebSession:
    """A signed-in browser: ``id`` is the SHA-256 of its cookie's key (safe to show)."""

    id: str
    account: Account
    csrf: str
    created_at: datetime
    seen_at: datetime
    client: str


RESET_SUBJECT = "Scriba: choose a new password"
RESET_BODY = ("Someone, probably you, asked to choose a new password for {email} on "
              "Scriba.\n\nOpen this link within an hour to choose it (it works once):\n"
              "\n{link}\n\nIf you did not ask, ignore this message: your password stays as "
              "it is.\n")
RESET_INVALID = ("This link to choose a new password is not valid; ask for a new one from "
                 "the sign-in page.")
RESET_USED = "This link has already been used; ask for a new one from the sign-in page."
RESET_EXPIRED = ("This link has expired (it works for an hour); ask for a new one from the "
                 "sign-in page.")


def utc_now() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    # SQLite gives back naive datetimes; every time stored here is UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _display_name(value: Any, language: str) -> str:
    # the service's validation: NFC, no control or format characters, bounded length
    return validation.name(value, language, field="display name")


def account_from(row: AccountRow) -> Account:
    return Account(row.id, row.email, row.display_name, row.language, row.timezone,
                   row.mail_mode, row.password_hash is not None)


class Accounts:
    """People: accounts, passwords, sign-in sessions and password resets (their seats in
    games are :class:`~scriba.service.seats.Seats`)."""

    def __init__(self, store: EventStore, outbox: Outbox) -> None:
        self.session = store.session
        self._engine = store.engine
        self.outbox = outbox  # a password reset's link is mailed through it

    # --- accounts -----------------------------------------------------------------
    def create_account(self, email: str, display_name: str, password: str | None = None,
                       language: str = "en", timezone: str = "UTC") -> Account:
        email = normalize_email(email)
        language = check_language(language)
        name = _display_name(display_name, language)
        row = AccountRow(email=email, display_name=name,
                         password_hash=_hasher.hash(check_password(password, language,
                                                                   (email, name)))
                         if password is not None else None,
                         language=language, timezone=check_timezone(timezone),
                         mail_mode="auto", created_at=utc_now())
        try:
            with self.session.begin() as session:
                session.add(row)
        except IntegrityError:
            raise NotAllowed(f"There is already an account for {email}.") from None
        return account_from(row)

    def account(self, account_id: int) -> Account:
        with self.session() as session:
            row = session.get(AccountRow, account_id)
            if row is None:
                raise NotFound(f"There is no account {account_id}.")
            return account_from(row)

    def by_email(self, email: str) -> Account | None:
        try:
            email = normalize_email(email)
        except InvalidInput:
            return None
        with self.session() as session:
            row = session.scalars(select(AccountRow).where(AccountRow.email == email)).first()
            return account_from(row) if row else None

    def authenticate(self, email: str, password: str) -> Account | None:
        """The account if the password is right; None otherwise (same cost either way)."""
        if not isinstance(password, str) or len(password) > PASSWORD_MAX:
            return None
        try:
            email = normalize_email(email)
        except InvalidInput:
            email = ""
        with self.session() as session:
            row = session.scalars(select(AccountRow).where(AccountRow.email == email)).first()
            stored = row.password_hash if row is not None and row.password_hash else None
        try:
            _hasher.verify(stored or dummy_hash(), password)
        except (VerificationError, InvalidHashError):
            return None
        if stored is None or row is None:
            return None
        if _hasher.check_needs_rehash(stored):
            self._set_password_hash(row.id, _hasher.hash(password))
        return account_from(row)

    def set_password(self, account_id: int, password: str, language: str | None = None,
                     keep_session: str | None = None) -> None:
        """A new password (refused in ``language``, else the account's, if easy to guess);
        every session of the account but ``keep_session`` (an id) ends."""
        account = self.account(account_id)
        checked = check_password(password, language or account.language,
                                 (account.email, account.display_name))
        self._set_password_hash(account_id, _hasher.hash(checked))
        self.end_sessions(account_id, keep=keep_session)

    def change_password(self, account_id: int, current: str, new: str, language: str,
                        keep_session: str | None = None) -> None:
        """The account's own change: the current password first, then as set_password."""
        account = self.account(account_id)
        if self.authenticate(account.email, current) is None:
            raise NotAllowed(translate("The current password is wrong.", language))
        self.set_password(account_id, new, language, keep_session)

    def _set_password_hash(self, account_id: int, hashed: str) -> None:
        with self.session.begin() as session:
            session.execute(update(AccountRow).where(AccountRow.id == account_id)
                            .values(password_hash=hashed))

    def update_preferences(self, account_id: int, language: str | None = None,
                           timezone: str | None = None, mail_mode: str | None = None,
                           display_name: str | None = None) -> Account:
        values: dict[str, Any] = {}
        if language is not None:
            values["language"] = check_language(language)
        if timezone is not None:
            values["timezone"] = check_timezone(timezone)
        if mail_mode is not None:
            if mail_mode not in MAIL_MODES:
                raise InvalidInput(f"Unknown mail mode (known: {', '.join(MAIL_MODES)}).",
                                   "mail_mode")
            values["mail_mode"] = mail_mode
        if display_name is not None:
            values["display_name"] = _display_name(display_name, language or "en")
        if values:
            with self.session.begin() as session:
                session.execute(update(AccountRow).where(AccountRow.id == account_id)
                                .values(**values))
        return self.account(account_id)

    # --- web sessions -------------------------------------------------------------
    def start_session(self, account_id: int, client: str = "") -> tuple[str, WebSession]:
        """A new session: (the cookie's random key, given out once; the session)."""
        key = secrets.token_urlsafe(32)  # 256 bits
        now = utc_now()
        row = WebSessionRow(id=digest(key), account_id=account_id,
                            csrf=secrets.token_urlsafe(32), created_at=now, seen_at=now,
                            expires_at=now + timedelta(days=SESSION_DAYS),
                            client=client[:200])
        with self.session.begin() as session:
            # Ended and expired sessions are forgotten as new ones begin.
            session.execute(delete(WebSessionRow).where(or_(
                WebSessionRow.expires_at < now,
                WebSessionRow.ended_at < now - timedelta(days=1))))
            session.add(row)
            account = session.get(AccountRow, account_id)
            if account is None:
                raise NotFound(f"There is no account {account_id}.")
            found = account_from(account)
        return key, WebSession(row.id, found, row.csrf, now, now, row.client)

    def web_session(self, key: Any) -> WebSession | None:
        """The live session of a cookie's key; None if unknown, ended or expired."""
        if not isinstance(key, str) or not 32 <= len(key) <= 64:
            return None
        now = utc_now()
        with self.session() as session:
            found = session.execute(select(WebSessionRow, AccountRow).join(
                AccountRow, AccountRow.id == WebSessionRow.account_id).where(
                WebSessionRow.id == digest(key), WebSessionRow.ended_at.is_(None))).first()
        if found is None or aware(found[0].expires_at) <= now:
            return None
        row, account = found
        seen = aware(row.seen_at)
        if now - seen >= SEEN_EVERY:  # not a write per request
            with self.session.begin() as session:
                session.execute(update(WebSessionRow).where(WebSessionRow.id == row.id)
                                .values(seen_at=now))
            seen = now
        return WebSession(row.id, account_from(account), row.csrf, aware(row.created_at), seen,
                          row.client)

    def sessions(self, account_id: int) -> list[WebSession]:
        """The account's live sessions, the most recently seen first."""
        with self.session() as session:
            account = session.get(AccountRow, account_id)
            rows = session.scalars(select(WebSessionRow).where(
                WebSessionRow.account_id == account_id, WebSessionRow.ended_at.is_(None),
                WebSessionRow.expires_at > utc_now()).order_by(
                WebSessionRow.seen_at.desc())).all()
        if account is None:
            return []
        return [WebSession(r.id, account_from(account), r.csrf, aware(r.created_at),
                           aware(r.seen_at), r.client) for r in rows]

    def end_session(self, session_id: str, account_id: int | None = None) -> bool:
        """End one session (by id; only if it is ``account_id``'s when given)."""
        where = [WebSessionRow.id == session_id, WebSessionRow.ended_at.is_(None)]
        if account_id is not None:
            where.append(WebSessionRow.account_id == account_id)
        with self.session.begin() as session:
            return session.execute(update(WebSessionRow).where(*where)
                                   .values(ended_at=utc_now())).rowcount == 1

    def end_sessions(self, account_id: int, keep: str | None = None) -> None:
        """End every session of the account but ``keep`` (an id)."""
        with self.session.begin() as session:
            end_sessions_in(session, account_id, keep)

    # --- password resets ----------------------------------------------------------
    def request_password_reset(self, email: str, link: Any) -> None:
        """Mail the account of ``email`` a link to set a new password: ``link(token)`` is
        its address. Nothing is said about whether the account exists; at most one mail
        per address and quarter of an hour."""
        account = self.by_email(email)
        if account is None:
            return
        now = utc_now()
        key = f"password-reset:{account.email}:{int(now.timestamp()) // RESET_EVERY}"
        outbox = self.outbox
        with self.session() as session:
            if session.scalars(select(OutboxMessageRow.id).where(
                    OutboxMessageRow.key == key)).first() is not None:
                return
        token = secrets.token_urlsafe(32)
        language = account.language
        body = translate(RESET_BODY, language, email=account.email, link=link(token))
        with self.session.begin() as session:
            session.add(PasswordResetRow(token_hash=digest(token), account_id=account.id,
                                         created_at=now,
                                         expires_at=now + timedelta(hours=RESET_HOURS)))
            session.flush()
            # Queued with the link's row: both or neither. Should two requests race in
            # the same quarter hour, the outbox keeps one mail and the other link is
            # never sent (it is known to nobody).
            outbox.enqueue(session.connection(), key=key, recipient=account.email,
                           kind="password_reset", subject=translate(RESET_SUBJECT, language),
                           body=body, headers={"Auto-Submitted": "auto-generated"})

    def password_reset(self, token: Any, language: str = "en") -> Account:
        """The account a live reset link is for; else NotFound (not a link of ours) or
        NotAllowed (used, expired), said in ``language``."""
        return self._reset_row(token, language)[1]

    def _reset_row(self, token: Any, language: str) -> tuple[PasswordResetRow, Account]:
        found = None
        if isinstance(token, str) and 16 <= len(token) <= 128:
            with self.session() as session:
                found = session.execute(select(PasswordResetRow, AccountRow).join(
                    AccountRow, AccountRow.id == PasswordResetRow.account_id).where(
                    PasswordResetRow.token_hash == digest(token))).first()
        if found is None:
            raise NotFound(translate(RESET_INVALID, language))
        row, account = found
        if row.used_at is not None:
            raise NotAllowed(translate(RESET_USED, language))
        if aware(row.expires_at) <= utc_now():
            raise NotAllowed(translate(RESET_EXPIRED, language))
        return row, account_from(account)

    def reset_password(self, token: Any, password: str, language: str) -> Account:
        """Set a new password through a reset link, once: every session of the account
        ends, and every other reset link of it dies."""
        row, account = self._reset_row(token, language)
        checked = check_password(password, language, (account.email, account.display_name))
        now = utc_now()
        with self.session.begin() as session:
            claimed = session.execute(update(PasswordResetRow).where(
                PasswordResetRow.token_hash == row.token_hash,
                PasswordResetRow.used_at.is_(None)).values(used_at=now)).rowcount == 1
            if not claimed:
                raise NotAllowed(translate(RESET_USED, language))
            session.execute(update(PasswordResetRow).where(
                PasswordResetRow.account_id == account.id,
                PasswordResetRow.used_at.is_(None)).values(used_at=now))
            session.execute(update(AccountRow).where(AccountRow.id == account.id)
                            .values(password_hash=_hasher.hash(checked)))
            end_sessions_in(session, account.id)
        return self.account(account.id)

    # --- sign-in rate limiting ----------------------------------------------------
    @property
    def limits(self) -> Limiter:
        """The rate limits of sign-ins and of games started (scriba.service.ratelimit),
        counted in this database so every server process shares them."""
        limiter = self.__dict__.get("_limits")
        if limiter is None:
            from scriba.service.ratelimit import Limiter
            limiter = self.__dict__["_limits"] = Limiter(self._engine)
        return limiter


def end_sessions_in(session: Any, account_id: int, keep: str | None = None) -> None:
    """End every session of the account but ``keep`` (an id), in ``session``'s
    transaction."""
    where = [WebSessionRow.account_id == account_id, WebSessionRow.ended_at.is_(None)]
    if keep is not None:
        where.append(WebSessionRow.id != keep)
    session.execute(update(WebSessionRow).where(*where).values(ended_at=utc_now()))

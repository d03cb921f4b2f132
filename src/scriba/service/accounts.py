"""People and their places in games: accounts, seats, invitations, API tokens, sign-in
sessions and password resets.

Used by every interface that knows who is speaking: the web (sign-in, tokens), mail (an
address is a player), the CLI (``scriba player add … --email``, ``scriba token``).

- Passwords are argon2id hashes (argon2-cffi); a wrong address costs the same hashing time
  as a wrong password, so sign-in does not tell which addresses have accounts. A new
  password must be hard to guess: zxcvbn's score at least 3, judged against the person's
  own address and name too. Setting one ends the account's other sessions.
- A web session is a row keyed by the SHA-256 of the random key its cookie holds; signing
  out, a password change or the loss of a seat ends it in the database, so every server
  process on it sees the end at once.
- A token is bound to one seat (game and player); when the seat passes to another account
  or is taken away, its tokens are revoked. Tokens cannot make tokens.
- A password reset is a single-use link valid for an hour, mailed through the outbox at
  most once per address and quarter of an hour; only its SHA-256 is kept.
- Invitation links and API tokens are high-entropy random strings given out once; only
  their SHA-256 is stored, so a copy of the database lets nobody act or join.
- An invitation is claimed with a conditional UPDATE (``used_at IS NULL``): of two
  simultaneous uses exactly one wins, the other is :class:`NotAllowed`.
- Per game an account is the ``officer`` (the game's creator, who invites), a ``player``
  (bound to one player name) or else a ``reader``.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from zxcvbn import zxcvbn

from scriba.service.errors import InvalidInput, NotAllowed, NotFound, UnknownGame
from scriba.service.messages import translate
from scriba.service.validation import normalize_email
from scriba.store.accounts import (
    AccountRow,
    ApiTokenRow,
    InvitationRow,
    PasswordResetRow,
    SeatRow,
    WebSessionRow,
)
from scriba.store.mail import OutboxMessage as OutboxMessageRow
from scriba.store.schema import games as games_table

if TYPE_CHECKING:
    from scriba.service.ratelimit import Limiter
    from scriba.service.service import Service

LANGUAGES = ("en", "it", "de")
MAIL_MODES = ("each", "digest", "none")
PASSWORD_MIN = 8
PASSWORD_MAX = 1024          # argon2 hashes anything, but a megabyte password is an attack
PASSWORD_SCORE = 3           # zxcvbn: "safely unguessable", about 10^8 guesses or more
_JUDGED = 72                 # zxcvbn judges at most this many characters (its own limit)
# zxcvbn keeps the user's own words in a module-level dictionary while it judges.
_zxcvbn_lock = threading.Lock()
SESSION_DAYS = 30            # a sign-in lasts this long, unless it is ended before
SEEN_EVERY = timedelta(hours=1)  # "last seen" is written at most this often
RESET_HOURS = 1              # a password-reset link works this long, once
RESET_EVERY = 900            # seconds: one reset mail per address per quarter of an hour
INVITATION_DAYS = 14
TOKEN_PREFIX = "scr_"
_hasher = PasswordHasher()
# Verified against when the address is unknown, so both failures take the same time.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


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
class Role:
    kind: str                # "officer" | "player" | "reader"
    player: str | None = None


@dataclass(frozen=True)
class Seat:
    game_id: str
    player: str | None
    role: str
    account_id: int
    email: str
    display_name: str
    language: str
    mail_mode: str


@dataclass(frozen=True)
class Invitation:
    game_id: str
    email: str
    player: str
    expires_at: datetime
    used: bool


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


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    # SQLite gives back naive datetimes; every time stored here is UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _display_name(value: Any, language: str) -> str:
    try:  # the service's validation: NFC, no control or format characters, bounded length
        from scriba.service import validation
        return validation.name(value, language, field="display name")
    except ImportError:  # pragma: no cover - the module exists in the merged tree
        if not isinstance(value, str) or not value.strip() or len(value) > 64:
            raise InvalidInput("The display name must be 1 to 64 characters.",
                               "display_name") from None
        return unicodedata.normalize("NFC", value.strip())


WEAK_PASSWORD = ("This password is too easy to guess. Choose a longer one, for example a "
                 "few unusual words that do not include your name or address.")


def _password(value: Any, language: str = "en", own_words: tuple[str, ...] = ()) -> str:
    """The password if it is hard to guess, else InvalidInput in ``language``.

    ``own_words`` (the person's address and name) count as guessed: a password made of
    them is refused."""
    if not isinstance(value, str):
        raise InvalidInput(translate("The password must be text.", language), "password")
    if len(value) < PASSWORD_MIN:
        raise InvalidInput(translate("The password is too short: at least {min} characters.",
                                     language, min=PASSWORD_MIN), "password")
    if len(value) > PASSWORD_MAX:
        raise InvalidInput(translate("The password is too long: at most {max} characters.",
                                     language, max=PASSWORD_MAX), "password")
    words = [w[:100] for word in own_words if word
             for w in (word, *re.split(r"[@.+_\-\s]+", word)) if len(w) > 2]
    with _zxcvbn_lock:
        verdict = zxcvbn(value[:_JUDGED], user_inputs=[*words, "scriba", "nomic"])
    if verdict["score"] < PASSWORD_SCORE:
        message = translate(WEAK_PASSWORD, language)
        if language == "en":  # zxcvbn speaks English only: its advice for English readers
            advice = verdict["feedback"]
            message = " ".join(part for part in [message, advice.get("warning"),
                                                 *advice.get("suggestions", [])] if part)
        raise InvalidInput(message, "password")
    return value


def check_language(value: Any) -> str:
    if value not in LANGUAGES:
        raise InvalidInput(f"Unknown language {str(value)[:20]!r} (known: "
                           f"{', '.join(LANGUAGES)}).", "language")
    return str(value)


def check_timezone(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > 64 or ".." in value \
            or value.startswith("/"):
        raise InvalidInput("Unknown time zone.", "timezone")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidInput(f"Unknown time zone {value[:64]!r} (write e.g. Europe/Rome).",
                           "timezone") from None
    return value


def _account(row: AccountRow) -> Account:
    return Account(row.id, row.email, row.display_name, row.language, row.timezone,
                   row.mail_mode, row.password_hash is not None)


class Accounts:
    """Accounts and seats of one service (its database)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.session = service.store.session

    # --- accounts -----------------------------------------------------------------------
    def create_account(self, email: str, display_name: str, password: str | None = None,
                       language: str = "en", timezone: str = "UTC") -> Account:
        email = normalize_email(email)
        language = check_language(language)
        name = _display_name(display_name, language)
        row = AccountRow(email=email, display_name=name,
                         password_hash=_hasher.hash(_password(password, language,
                                                              (email, name)))
                         if password is not None else None,
                         language=language, timezone=check_timezone(timezone),
                         mail_mode="each", created_at=_now())
        try:
            with self.session.begin() as session:
                session.add(row)
        except IntegrityError:
            raise NotAllowed(f"There is already an account for {email}.") from None
        return _account(row)

    def account(self, account_id: int) -> Account:
        with self.session() as session:
            row = session.get(AccountRow, account_id)
            if row is None:
                raise NotFound(f"There is no account {account_id}.")
            return _account(row)

    def by_email(self, email: str) -> Account | None:
        try:
            email = normalize_email(email)
        except InvalidInput:
            return None
        with self.session() as session:
            row = session.scalars(select(AccountRow).where(AccountRow.email == email)).first()
            return _account(row) if row else None

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
            _hasher.verify(stored or _DUMMY_HASH, password)
        except (VerificationError, InvalidHashError):
            return None
        if stored is None or row is None:
            return None
        if _hasher.check_needs_rehash(stored):
            self._set_password_hash(row.id, _hasher.hash(password))
        return _account(row)

    def set_password(self, account_id: int, password: str, language: str | None = None,
                     keep_session: str | None = None) -> None:
        """A new password (refused in ``language``, else the account's, if easy to guess);
        every session of the account but ``keep_session`` (an id) ends."""
        account = self.account(account_id)
        checked = _password(password, language or account.language,
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

    # --- seats --------------------------------------------------------------------------
    def _game_language(self, game_id: str) -> str:
        with self.session() as session:
            if session.execute(select(games_table.c.id).where(
                    games_table.c.id == game_id)).first() is None:
                raise UnknownGame(f"There is no game {game_id!r}.")
        return self.service.load(game_id).language

    def _players(self, game_id: str) -> dict[str, Any]:
        return self.service.load(game_id).players

    def _bind(self, game_id: str, player: str, account_id: int) -> None:
        """Bind ``player`` to the account, replacing whoever held that player name.

        A seat that changes hands loses its tokens; an account that loses a seat to
        another is signed out everywhere (the officer took the seat away from it)."""
        with self.session.begin() as session:
            held = session.scalars(select(SeatRow).where(
                SeatRow.game_id == game_id, SeatRow.role == "player",
                or_(SeatRow.player == player, SeatRow.account_id == account_id))).all()
            if any(r.player == player and r.account_id == account_id for r in held):
                return  # already theirs
            for row in held:
                session.delete(row)
                self._revoke_seat_tokens(session, game_id, row.player)
                if row.account_id != account_id:
                    self._end_sessions(session, row.account_id)
            session.flush()
            session.add(SeatRow(game_id=game_id, account_id=account_id, role="player",
                                player=player))

    def unseat(self, game_id: str, player: str) -> bool:
        """Take ``player``'s seat from its account: its tokens are revoked and the account
        is signed out everywhere. False if nobody held it."""
        with self.session.begin() as session:
            row = session.scalars(select(SeatRow).where(
                SeatRow.game_id == game_id, SeatRow.player == player)).first()
            if row is None:
                return False
            session.delete(row)
            self._revoke_seat_tokens(session, game_id, player)
            self._end_sessions(session, row.account_id)
        return True

    def seat(self, game_id: str, player: str, email: str) -> Account:
        """Bind the account of ``email`` (made, without a password, if absent) to a player."""
        language = self._game_language(game_id)
        if player not in self._players(game_id):
            raise NotFound(f"There is no player named {player} in {game_id}.")
        account = self.by_email(email) or self._account_for(email, player, language)
        self._bind(game_id, player, account.id)
        return account

    def _account_for(self, email: str, display_name: str, language: str) -> Account:
        try:
            return self.create_account(email, display_name, None,
                                       language if language in LANGUAGES else "en")
        except NotAllowed:  # made meanwhile by another request
            found = self.by_email(email)
            if found is None:
                raise
            return found

    def set_officer(self, game_id: str, account_id: int) -> None:
        self._game_language(game_id)
        self.account(account_id)
        try:
            with self.session.begin() as session:
                session.add(SeatRow(game_id=game_id, account_id=account_id, role="officer",
                                    player=None))
        except IntegrityError:
            pass  # already the officer

    def role(self, account_id: int | None, game_id: str) -> Role:
        if account_id is None:
            return Role("reader")
        with self.session() as session:
            rows = session.scalars(select(SeatRow).where(SeatRow.game_id == game_id,
                                                         SeatRow.account_id == account_id)).all()
        player = next((r.player for r in rows if r.role == "player"), None)
        if any(r.role == "officer" for r in rows):
            return Role("officer", player)
        return Role("player", player) if player else Role("reader")

    def games_of(self, account_id: int) -> list[tuple[str, Role]]:
        with self.session() as session:
            games = session.scalars(select(SeatRow.game_id).where(
                SeatRow.account_id == account_id).distinct()).all()
        return [(game, self.role(account_id, game)) for game in games]

    def seats(self, game_id: str) -> list[Seat]:
        with self.session() as session:
            rows = session.execute(select(SeatRow, AccountRow).join(
                AccountRow, AccountRow.id == SeatRow.account_id).where(
                SeatRow.game_id == game_id).order_by(SeatRow.role, SeatRow.player)).all()
        return [Seat(s.game_id, s.player, s.role, a.id, a.email, a.display_name, a.language,
                     a.mail_mode) for s, a in rows]

    def player_for_email(self, game_id: str, email: str) -> str | None:
        try:
            email = normalize_email(email)
        except InvalidInput:
            return None
        with self.session() as session:
            return session.scalars(select(SeatRow.player).join(
                AccountRow, AccountRow.id == SeatRow.account_id).where(
                SeatRow.game_id == game_id, SeatRow.role == "player",
                AccountRow.email == email)).first()

    def email_for_player(self, game_id: str, player: str) -> str | None:
        with self.session() as session:
            return session.scalars(select(AccountRow.email).join(
                SeatRow, AccountRow.id == SeatRow.account_id).where(
                SeatRow.game_id == game_id, SeatRow.player == player)).first()

    # --- invitations --------------------------------------------------------------------
    def invite(self, game_id: str, email: str, player: str) -> str:
        """A new invitation link's token (give it out once; only its hash is kept)."""
        language = self._game_language(game_id)
        email = normalize_email(email)
        try:
            from scriba.service import validation
            player = validation.name(player, language, field="name")
        except ImportError:  # pragma: no cover
            pass
        token = secrets.token_urlsafe(32)
        now = _now()
        with self.session.begin() as session:
            session.add(InvitationRow(token_hash=digest(token), game_id=game_id, email=email,
                                      player=player, created_at=now,
                                      expires_at=now + timedelta(days=INVITATION_DAYS)))
        return token

    def invitation(self, token: str) -> Invitation:
        """What an invitation is for (to show before accepting); unknown → NotFound."""
        row = self._invitation_row(token)
        return Invitation(row.game_id, row.email, row.player, _aware(row.expires_at),
                          row.used_at is not None)

    def _invitation_row(self, token: str) -> InvitationRow:
        if not isinstance(token, str) or not 16 <= len(token) <= 128:
            raise NotFound("This invitation link is not valid.")
        with self.session() as session:
            row = session.scalars(select(InvitationRow).where(
                InvitationRow.token_hash == digest(token))).first()
        if row is None:
            raise NotFound("This invitation link is not valid.")
        return row

    def invitations(self, game_id: str) -> list[Invitation]:
        with self.session() as session:
            rows = session.scalars(select(InvitationRow).where(
                InvitationRow.game_id == game_id).order_by(InvitationRow.id)).all()
        return [Invitation(r.game_id, r.email, r.player, _aware(r.expires_at),
                           r.used_at is not None) for r in rows]

    def accept_invitation(self, token: str, password: str, display_name: str | None = None,
                          language: str | None = None) -> Account:
        """Take the invited seat: set the password (or prove it, for an existing account),
        join the game (its joining rule where there is one), bind the seat. Once only.
        A weak new password is refused in ``language`` (else the game's)."""
        row = self._invitation_row(token)
        if row.used_at is not None:
            raise NotAllowed("This invitation has already been used.")
        if _aware(row.expires_at) < _now():
            raise NotAllowed("This invitation has expired; ask the game's officer for a "
                             "new one.")
        game_language = self._game_language(row.game_id)
        existing = self.by_email(row.email)
        if existing is not None and existing.has_password:
            # Whoever holds the link may not take over an account that already has a
            # password: they must know it.
            if self.authenticate(row.email, password) is None:
                raise NotAllowed(f"There is already an account for {row.email}; enter its "
                                 "password to accept.")
        else:
            _password(password, language or game_language,
                      (row.email, row.player, display_name or ""))
        if not self._claim(row.id):
            raise NotAllowed("This invitation has already been used.")
        try:
            self._join(row.game_id, row.player, game_language)
            account = existing or self._account_for(row.email, display_name or row.player,
                                                    game_language)
            if not account.has_password:
                self.set_password(account.id, password, language or game_language)
            if display_name:
                self.update_preferences(account.id, display_name=display_name)
            self._bind(row.game_id, row.player, account.id)
        except Exception:
            self._release(row.id)
            raise
        return self.account(account.id)

    def _claim(self, invitation_id: int) -> bool:
        with self.session.begin() as session:
            result = session.execute(update(InvitationRow).where(
                InvitationRow.id == invitation_id, InvitationRow.used_at.is_(None))
                .values(used_at=_now()))
            return result.rowcount == 1

    def _release(self, invitation_id: int) -> None:
        with self.session.begin() as session:
            session.execute(update(InvitationRow).where(InvitationRow.id == invitation_id)
                            .values(used_at=None))

    def _join(self, game_id: str, player: str, language: str) -> None:
        players = self._players(game_id)
        if player in players and players[player].get("status") == "active":
            return  # the officer added them already
        join = self._joining_action(game_id)
        if join is not None:
            outcome = self.service.perform(game_id, player, join, {}, channel="web")
        else:
            outcome = self.service.add_player(game_id, player)
        if not outcome.accepted:
            raise NotAllowed(outcome.message or "The game refused the new player.")

    def _joining_action(self, game_id: str) -> str | None:
        actions_for = getattr(self.service, "actions_for", None)
        if actions_for is None:
            return None
        for info in actions_for(game_id, None):
            kind = info.get("kind") if isinstance(info, dict) else getattr(info, "kind", None)
            if kind == "join":
                return info["name"] if isinstance(info, dict) else info.name
        return None

    # --- API tokens ---------------------------------------------------------------------
    def new_token(self, game_id: str, player: str, label: str = "") -> str:
        """A new token acting as ``player`` in ``game_id``: shown once, stored hashed."""
        self._game_language(game_id)
        if player not in self._players(game_id):
            raise NotFound(f"There is no player named {player} in {game_id}.")
        with self.session() as session:
            account_id = session.scalars(select(SeatRow.account_id).where(
                SeatRow.game_id == game_id, SeatRow.player == player)).first()
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        with self.session.begin() as session:
            session.add(ApiTokenRow(token_hash=digest(token), game_id=game_id, player=player,
                                    account_id=account_id, label=str(label)[:200],
                                    created_at=_now()))
        return token

    def token_identity(self, token: str) -> tuple[Account | None, str, str] | None:
        """(account or None, game, player) of a live token; None if unknown or revoked."""
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) \
                or len(token) > 128:
            return None
        with self.session() as session:
            row = session.scalars(select(ApiTokenRow).where(
                ApiTokenRow.token_hash == digest(token))).first()
            if row is None or row.revoked_at is not None:
                return None
            account = session.get(AccountRow, row.account_id) if row.account_id else None
            return (_account(account) if account else None, row.game_id, row.player)

    def tokens(self, game_id: str, player: str) -> list[dict[str, Any]]:
        with self.session() as session:
            rows = session.scalars(select(ApiTokenRow).where(
                ApiTokenRow.game_id == game_id, ApiTokenRow.player == player)
                .order_by(ApiTokenRow.id)).all()
        return [{"id": r.id, "label": r.label, "created_at": _aware(r.created_at).isoformat(),
                 "revoked": r.revoked_at is not None} for r in rows]

    def revoke_token(self, token: str | None = None, token_id: int | None = None) -> bool:
        """Revoke by the token itself or by its id; True if a live token was revoked."""
        where = (ApiTokenRow.token_hash == digest(token)) if token is not None \
            else (ApiTokenRow.id == token_id)
        with self.session.begin() as session:
            result = session.execute(update(ApiTokenRow).where(
                where, ApiTokenRow.revoked_at.is_(None)).values(revoked_at=_now()))
            return result.rowcount == 1

    @staticmethod
    def _revoke_seat_tokens(session: Any, game_id: str, player: str | None) -> None:
        session.execute(update(ApiTokenRow).where(
            ApiTokenRow.game_id == game_id, ApiTokenRow.player == player,
            ApiTokenRow.revoked_at.is_(None)).values(revoked_at=_now()))

    # --- web sessions -------------------------------------------------------------------
    def start_session(self, account_id: int, client: str = "") -> tuple[str, WebSession]:
        """A new session: (the cookie's random key, given out once; the session)."""
        key = secrets.token_urlsafe(32)  # 256 bits
        now = _now()
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
            found = _account(account)
        return key, WebSession(row.id, found, row.csrf, now, now, row.client)

    def web_session(self, key: Any) -> WebSession | None:
        """The live session of a cookie's key; None if unknown, ended or expired."""
        if not isinstance(key, str) or not 32 <= len(key) <= 64:
            return None
        now = _now()
        with self.session() as session:
            found = session.execute(select(WebSessionRow, AccountRow).join(
                AccountRow, AccountRow.id == WebSessionRow.account_id).where(
                WebSessionRow.id == digest(key), WebSessionRow.ended_at.is_(None))).first()
        if found is None or _aware(found[0].expires_at) <= now:
            return None
        row, account = found
        seen = _aware(row.seen_at)
        if now - seen >= SEEN_EVERY:  # not a write per request
            with self.session.begin() as session:
                session.execute(update(WebSessionRow).where(WebSessionRow.id == row.id)
                                .values(seen_at=now))
            seen = now
        return WebSession(row.id, _account(account), row.csrf, _aware(row.created_at), seen,
                          row.client)

    def sessions(self, account_id: int) -> list[WebSession]:
        """The account's live sessions, the most recently seen first."""
        with self.session() as session:
            account = session.get(AccountRow, account_id)
            rows = session.scalars(select(WebSessionRow).where(
                WebSessionRow.account_id == account_id, WebSessionRow.ended_at.is_(None),
                WebSessionRow.expires_at > _now()).order_by(
                WebSessionRow.seen_at.desc())).all()
        if account is None:
            return []
        return [WebSession(r.id, _account(account), r.csrf, _aware(r.created_at),
                           _aware(r.seen_at), r.client) for r in rows]

    def end_session(self, session_id: str, account_id: int | None = None) -> bool:
        """End one session (by id; only if it is ``account_id``'s when given)."""
        where = [WebSessionRow.id == session_id, WebSessionRow.ended_at.is_(None)]
        if account_id is not None:
            where.append(WebSessionRow.account_id == account_id)
        with self.session.begin() as session:
            return session.execute(update(WebSessionRow).where(*where)
                                   .values(ended_at=_now())).rowcount == 1

    def end_sessions(self, account_id: int, keep: str | None = None) -> None:
        """End every session of the account but ``keep`` (an id)."""
        with self.session.begin() as session:
            self._end_sessions(session, account_id, keep)

    @staticmethod
    def _end_sessions(session: Any, account_id: int, keep: str | None = None) -> None:
        where = [WebSessionRow.account_id == account_id, WebSessionRow.ended_at.is_(None)]
        if keep is not None:
            where.append(WebSessionRow.id != keep)
        session.execute(update(WebSessionRow).where(*where).values(ended_at=_now()))

    # --- password resets ----------------------------------------------------------------
    def request_password_reset(self, email: str, link: Any) -> None:
        """Mail the account of ``email`` a link to set a new password: ``link(token)`` is
        its address. Nothing is said about whether the account exists; at most one mail
        per address and quarter of an hour."""
        account = self.by_email(email)
        if account is None:
            return
        now = _now()
        key = f"password-reset:{account.email}:{int(now.timestamp()) // RESET_EVERY}"
        outbox = self.service._outbox
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
        if _aware(row.expires_at) <= _now():
            raise NotAllowed(translate(RESET_EXPIRED, language))
        return row, _account(account)

    def reset_password(self, token: Any, password: str, language: str) -> Account:
        """Set a new password through a reset link, once: every session of the account
        ends, and every other reset link of it dies."""
        row, account = self._reset_row(token, language)
        checked = _password(password, language, (account.email, account.display_name))
        now = _now()
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
            self._end_sessions(session, account.id)
        return self.account(account.id)

    # --- sign-in rate limiting ----------------------------------------------------------
    @property
    def limits(self) -> Limiter:
        """The rate limits of sign-ins and of games started (scriba.service.ratelimit),
        counted in this database so every server process shares them."""
        limiter = self.__dict__.get("_limits")
        if limiter is None:
            from scriba.service.ratelimit import Limiter
            limiter = self.__dict__["_limits"] = Limiter(self.service.store.engine)
        return limiter

"""People and their places in games: accounts, seats, invitations, API tokens.

Used by every interface that knows who is speaking: the web (sign-in, tokens), mail (an
address is a player), the CLI (``scriba player add … --email``, ``scriba token``).

- Passwords are argon2id hashes (argon2-cffi); a wrong address costs the same hashing time
  as a wrong password, so sign-in does not tell which addresses have accounts.
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
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from scriba.service.errors import InvalidInput, NotAllowed, NotFound, UnknownGame
from scriba.store.accounts import (
    AccountRow,
    ApiTokenRow,
    InvitationRow,
    SeatRow,
    ServerSecretRow,
    SigninAttemptRow,
)
from scriba.store.schema import games as games_table

if TYPE_CHECKING:
    from scriba.service.service import Service

LANGUAGES = ("en", "it", "de")
MAIL_MODES = ("each", "digest", "none")
PASSWORD_MIN = 8
PASSWORD_MAX = 1024          # argon2 hashes anything, but a megabyte password is an attack
INVITATION_DAYS = 14
TOKEN_PREFIX = "scr_"
EMAIL_MAX = 254
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\-\u0080-\U0010ffff]{1,64}")
_LABEL = re.compile(r"(?!-)[a-z0-9\-\u0080-\U0010ffff]{1,63}(?<!-)")
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


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    # SQLite gives back naive datetimes; every time stored here is UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def normalize_email(value: Any) -> str:
    """``Local@Domain`` as stored: NFC, trimmed, domain lower-cased; refused if malformed."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput("The e-mail address is not valid UTF-8 text.", "email") from None
    if not isinstance(value, str):
        raise InvalidInput("The e-mail address must be text.", "email")
    value = unicodedata.normalize("NFC", value.strip())
    if len(value) > EMAIL_MAX:
        raise InvalidInput(f"The e-mail address is too long (at most {EMAIL_MAX} "
                           "characters).", "email")
    local, sep, domain = value.rpartition("@")
    domain = domain.lower().rstrip(".")
    labels = domain.split(".")
    if (not sep or not _LOCAL.fullmatch(local) or local.startswith(".")
            or local.endswith(".") or ".." in local or len(labels) < 2
            or not all(_LABEL.fullmatch(label) for label in labels)
            or any(unicodedata.category(c)[0] in "CZ" for c in local + domain)):
        raise InvalidInput(f"'{value[:80]}' is not an e-mail address.", "email")
    return f"{local}@{domain}"


def _display_name(value: Any, language: str) -> str:
    try:  # the service's validation: NFC, no control or format characters, bounded length
        from scriba.service import validation
        return validation.name(value, language, field="display name")
    except ImportError:  # pragma: no cover - the module exists in the merged tree
        if not isinstance(value, str) or not value.strip() or len(value) > 64:
            raise InvalidInput("The display name must be 1 to 64 characters.",
                               "display_name") from None
        return unicodedata.normalize("NFC", value.strip())


def _password(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput("The password must be text.", "password")
    if len(value) < PASSWORD_MIN:
        raise InvalidInput(f"The password is too short: at least {PASSWORD_MIN} "
                           "characters.", "password")
    if len(value) > PASSWORD_MAX:
        raise InvalidInput(f"The password is too long: at most {PASSWORD_MAX} "
                           "characters.", "password")
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
        row = AccountRow(email=email, display_name=_display_name(display_name, language),
                         password_hash=_hasher.hash(_password(password))
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

    def set_password(self, account_id: int, password: str) -> None:
        self._set_password_hash(account_id, _hasher.hash(_password(password)))

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
        """Bind ``player`` to the account, replacing whoever held that player name."""
        with self.session.begin() as session:
            session.execute(delete(SeatRow).where(SeatRow.game_id == game_id,
                                                  SeatRow.player == player))
            session.execute(delete(SeatRow).where(SeatRow.game_id == game_id,
                                                  SeatRow.account_id == account_id,
                                                  SeatRow.role == "player"))
            session.add(SeatRow(game_id=game_id, account_id=account_id, role="player",
                                player=player))

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

    def accept_invitation(self, token: str, password: str, display_name: str | None = None
                          ) -> Account:
        """Take the invited seat: set the password (or prove it, for an existing account),
        join the game (its joining rule where there is one), bind the seat. Once only."""
        row = self._invitation_row(token)
        if row.used_at is not None:
            raise NotAllowed("This invitation has already been used.")
        if _aware(row.expires_at) < _now():
            raise NotAllowed("This invitation has expired; ask the game's officer for a "
                             "new one.")
        language = self._game_language(row.game_id)
        existing = self.by_email(row.email)
        if existing is not None and existing.has_password:
            # Whoever holds the link may not take over an account that already has a
            # password: they must know it.
            if self.authenticate(row.email, password) is None:
                raise NotAllowed(f"There is already an account for {row.email}; enter its "
                                 "password to accept.")
        else:
            _password(password)
        if not self._claim(row.id):
            raise NotAllowed("This invitation has already been used.")
        try:
            self._join(row.game_id, row.player, language)
            account = existing or self._account_for(row.email, display_name or row.player,
                                                    language)
            if not account.has_password:
                self.set_password(account.id, password)
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

    # --- sign-in rate limiting ----------------------------------------------------------
    def recent_failures(self, key: str, window: timedelta) -> int:
        with self.session() as session:
            return session.scalar(select(func.count()).select_from(SigninAttemptRow).where(
                SigninAttemptRow.key == key[:400],
                SigninAttemptRow.at > _now() - window)) or 0

    def note_failure(self, *keys: str) -> None:
        now = _now()
        with self.session.begin() as session:
            session.add_all(SigninAttemptRow(key=key[:400], at=now) for key in keys)
            # Old attempts are forgotten as new ones come in, so the table stays small.
            session.execute(delete(SigninAttemptRow).where(
                SigninAttemptRow.at < now - timedelta(days=1)))

    # --- the server's own secrets -------------------------------------------------------
    def server_secret(self, name: str = "session") -> str:
        """A random secret made once and shared by every server process on this database."""
        with self.session() as session:
            row = session.get(ServerSecretRow, name)
            if row is not None:
                return row.value
        try:
            with self.session.begin() as session:
                session.add(ServerSecretRow(name=name, value=secrets.token_urlsafe(48)))
        except IntegrityError:
            pass  # another process made it first: use theirs
        with self.session() as session:
            return session.get(ServerSecretRow, name).value  # type: ignore[union-attr]

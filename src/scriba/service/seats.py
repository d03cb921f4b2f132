"""Who sits where in each game: seats, invitations and API tokens.

- Per game an account is the ``officer`` (the game's creator, who invites), a ``player``
  (bound to one player name) or else a ``reader``.
- A token is bound to one seat (game and player); when the seat passes to another account
  or is taken away, its tokens are revoked, and an account that loses its seat is signed
  out everywhere. Tokens cannot make tokens.
- Invitation links and API tokens are high-entropy random strings given out once; only
  their SHA-256 is stored, so a copy of the database lets nobody act or join.
- An invitation is claimed with a conditional UPDATE (``used_at IS NULL``): of two
  simultaneous uses exactly one wins, the other is :class:`NotAllowed`.

People themselves (accounts, passwords, sessions) are :mod:`.accounts`; a seat needs of
the game only its players and a way in (:class:`Joining`, which the commands satisfy).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.exc import IntegrityError

from scriba.kernel.state import GameState
from scriba.service import validation
from scriba.service.accounts import (
    Account,
    Accounts,
    account_from,
    aware,
    digest,
    end_sessions_in,
    utc_now,
)
from scriba.service.errors import InvalidInput, NotAllowed, NotFound, UnknownGame
from scriba.service.inputs import Outcome
from scriba.service.passwords import check_password
from scriba.service.profile import LANGUAGES, normalize_email
from scriba.service.reads import Reads
from scriba.store.accounts import AccountRow, ApiTokenRow, InvitationRow, SeatRow
from scriba.store.eventstore import EventStore
from scriba.store.schema import games as games_table

INVITATION_DAYS = 14
TOKEN_PREFIX = "scr_"

# A live token's game, player and account: one Core statement, made once (every API write
# asks it, and building it anew cost as much as running it).
_TOKENS, _ACCOUNTS = ApiTokenRow.__table__, AccountRow.__table__
_TOKEN_IDENTITY = (
    select(_TOKENS.c.game_id.label("token_game"), _TOKENS.c.player.label("token_player"),
           _ACCOUNTS)
    .select_from(_TOKENS.outerjoin(_ACCOUNTS, _ACCOUNTS.c.id == _TOKENS.c.account_id))
    .where(_TOKENS.c.token_hash == bindparam("token_hash"), _TOKENS.c.revoked_at.is_(None)))


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
    game_name: str = ""  # how the game is called (the page names it so, not by its id)


class Joining(Protocol):
    """What seats need of a game: its players, and a way in for an invited player."""

    def load(self, game_id: str) -> GameState: ...

    def perform(self, game_id: str, actor: str | None, action: str,
                args: dict[str, Any] | None = None, at: str | None = None,
                channel: str = "api", raw: str | None = None,
                request_id: str | None = None) -> Outcome: ...

    def add_player(self, game_id: str, name: str, at: str | None = None,
                   request_id: str | None = None, channel: str = "api",
                   raw: str | None = None) -> Outcome: ...


class Seats:
    """Who sits where: seats (officer, players), invitations and API tokens of the games
    of one database. A seat binds an account (:class:`~scriba.service.accounts.Accounts`)
    to a player of a game; an invitation joins the game through ``game`` (the commands)."""

    def __init__(self, store: EventStore, accounts: Accounts, game: Joining,
                 reads: Reads) -> None:
        self.session = store.session
        self._engine = store.engine
        self.accounts = accounts
        self.game = game
        self.reads = reads

    # --- seats --------------------------------------------------------------------
    def _game_language(self, game_id: str) -> str:
        with self.session() as session:
            if session.execute(select(games_table.c.id).where(
                    games_table.c.id == game_id)).first() is None:
                raise UnknownGame(f"There is no game {game_id!r}.")
        return self.game.load(game_id).language

    def _players(self, game_id: str) -> dict[str, Any]:
        return self.game.load(game_id).players

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
                    end_sessions_in(session, row.account_id)
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
            end_sessions_in(session, row.account_id)
        return True

    def seat(self, game_id: str, player: str, email: str) -> Account:
        """Bind the account of ``email`` (made, without a password, if absent) to a player."""
        language = self._game_language(game_id)
        if player not in self._players(game_id):
            raise NotFound(f"There is no player named {player} in {game_id}.")
        account = self.accounts.by_email(email) or self._account_for(email, player, language)
        self._bind(game_id, player, account.id)
        return account

    def _account_for(self, email: str, display_name: str, language: str) -> Account:
        try:
            return self.accounts.create_account(email, display_name, None,
                                       language if language in LANGUAGES else "en")
        except NotAllowed:  # made meanwhile by another request
            found = self.accounts.by_email(email)
            if found is None:
                raise
            return found

    def set_officer(self, game_id: str, account_id: int) -> None:
        self._game_language(game_id)
        self.accounts.account(account_id)
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

    # --- invitations --------------------------------------------------------------
    def invite(self, game_id: str, email: str, player: str) -> str:
        """A new invitation link's token (give it out once; only its hash is kept)."""
        language = self._game_language(game_id)
        email = normalize_email(email)
        player = validation.name(player, language, field="name")
        token = secrets.token_urlsafe(32)
        now = utc_now()
        with self.session.begin() as session:
            session.add(InvitationRow(token_hash=digest(token), game_id=game_id, email=email,
                                      player=player, created_at=now,
                                      expires_at=now + timedelta(days=INVITATION_DAYS)))
        return token

    def invitation(self, token: str) -> Invitation:
        """What an invitation is for (to show before accepting); unknown → NotFound."""
        row = self._invitation_row(token)
        with self.session() as session:
            name = session.execute(select(games_table.c.name).where(
                games_table.c.id == row.game_id)).scalar()
        return Invitation(row.game_id, row.email, row.player, aware(row.expires_at),
                          row.used_at is not None, name or row.game_id)

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
        return [Invitation(r.game_id, r.email, r.player, aware(r.expires_at),
                           r.used_at is not None) for r in rows]

    def accept_invitation(self, token: str, password: str, display_name: str | None = None,
                          language: str | None = None,
                          signed_in: Account | None = None) -> Account:
        """Take the invited seat: set the password (or prove it, for an existing account),
        join the game (its joining rule where there is one), bind the seat. Once only.
        A weak new password is refused in ``language`` (else the game's). ``signed_in``:
        the account of the session accepting it; when its address is the invitation's,
        the session is the proof and no password is asked again."""
        row = self._invitation_row(token)
        if row.used_at is not None:
            raise NotAllowed("This invitation has already been used.")
        if aware(row.expires_at) < utc_now():
            raise NotAllowed("This invitation has expired; ask the game's officer for a "
                             "new one.")
        game_language = self._game_language(row.game_id)
        existing = self.accounts.by_email(row.email)
        proven = signed_in is not None and existing is not None \
            and signed_in.id == existing.id
        if proven:
            pass  # signed in as the invited address: that session proved the password
        elif existing is not None and existing.has_password:
            # Whoever holds the link may not take over an account that already has a
            # password: they must know it.
            if self.accounts.authenticate(row.email, password) is None:
                raise NotAllowed(f"There is already an account for {row.email}; enter its "
                                 "password to accept.")
        else:
            check_password(password, language or game_language,
                      (row.email, row.player, display_name or ""))
        if not self._claim(row.id):
            raise NotAllowed("This invitation has already been used.")
        try:
            self._join(row.game_id, row.player, game_language)
            account = existing or self._account_for(row.email, display_name or row.player,
                                                    game_language)
            if not account.has_password and not proven:
                self.accounts.set_password(account.id, password, language or game_language)
            if display_name:
                self.accounts.update_preferences(account.id, display_name=display_name)
            self._bind(row.game_id, row.player, account.id)
        except Exception:
            self._release(row.id)
            raise
        return self.accounts.account(account.id)

    def _claim(self, invitation_id: int) -> bool:
        with self.session.begin() as session:
            result = session.execute(update(InvitationRow).where(
                InvitationRow.id == invitation_id, InvitationRow.used_at.is_(None))
                .values(used_at=utc_now()))
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
            outcome = self.game.perform(game_id, player, join, {}, channel="web")
        else:
            outcome = self.game.add_player(game_id, player)
        if not outcome.accepted:
            raise NotAllowed(outcome.message or "The game refused the new player.")

    def _joining_action(self, game_id: str) -> str | None:
        for info in self.reads.permitted_actions(game_id, None):
            if info.kind == "join":
                return info.name
        return None

    # --- API tokens ---------------------------------------------------------------
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
                                    created_at=utc_now()))
        return token

    def token_identity(self, token: str) -> tuple[Account | None, str, str] | None:
        """(account or None, game, player) of a live token; None if unknown or revoked."""
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) \
                or len(token) > 128:
            return None
        with self._engine.connect() as connection:
            row = connection.execute(_TOKEN_IDENTITY, {"token_hash": digest(token)}).first()
        if row is None:
            return None
        return (account_from(row) if row.id is not None else None, row.token_game,
                row.token_player)

    def tokens(self, game_id: str, player: str) -> list[dict[str, Any]]:
        with self.session() as session:
            rows = session.scalars(select(ApiTokenRow).where(
                ApiTokenRow.game_id == game_id, ApiTokenRow.player == player)
                .order_by(ApiTokenRow.id)).all()
        return [{"id": r.id, "label": r.label, "created_at": aware(r.created_at).isoformat(),
                 "revoked": r.revoked_at is not None} for r in rows]

    def revoke_token(self, token: str | None = None, token_id: int | None = None) -> bool:
        """Revoke by the token itself or by its id; True if a live token was revoked."""
        where = (ApiTokenRow.token_hash == digest(token)) if token is not None \
            else (ApiTokenRow.id == token_id)
        with self.session.begin() as session:
            result = session.execute(update(ApiTokenRow).where(
                where, ApiTokenRow.revoked_at.is_(None)).values(revoked_at=utc_now()))
            return result.rowcount == 1

    @staticmethod
    def _revoke_seat_tokens(session: Any, game_id: str, player: str | None) -> None:
        session.execute(update(ApiTokenRow).where(
            ApiTokenRow.game_id == game_id, ApiTokenRow.player == player,
            ApiTokenRow.revoked_at.is_(None)).values(revoked_at=utc_now()))

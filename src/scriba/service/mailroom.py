"""The mailroom: letters kept raw, tied to a game and a player, decided exactly once.

A letter is stored before anything reads it (:meth:`Mailroom.keep`); its Message-ID is
unique, so a second delivery of the same letter finds the first and is not decided again.
The Message-ID is the sender's word, though: once the letter is authenticated its
identity (the hash of its DKIM signature, or for a letter to a personal address of its
From, Date and text) is recorded by :meth:`identify`, unique too, so that the same letter
under a new Message-ID, sent to another address or racing the first, is not decided again.
:meth:`claim` turns ``kept`` into ``deciding`` in one conditional UPDATE, so two intake
processes never decide one letter twice; :meth:`finish` records how it ended. A letter
left ``deciding`` by a crash is decided again by :meth:`unfinished` + the intake: each of
its commands carries ``request_id = MESSAGE_ID#N``, which the service deduplicates.

Personal addresses (``scriba+GAME.SECRET@domain``) authenticate a letter by where it was
sent: the secret is random, stored per (game, player) and rotatable.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from scriba.service.personal import unsubscribe_token
from scriba.store.eventstore import EventStore
from scriba.store.mail import Letter, PersonalAddress


@dataclass
class KeptLetter:
    id: int
    message_id: str
    status: str
    new: bool
    result: str | None = None


class Mailroom:
    """The letters received and the personal addresses of one database."""

    def __init__(self, store: EventStore) -> None:
        self._session = store.session

    # --- letters ------------------------------------------------------------------------
    def keep(self, raw: bytes, message_id: str, channel: str, sender: str = "",
             recipient: str = "") -> KeptLetter:
        """Store the letter as it arrived; the same Message-ID again returns the first."""
        try:
            with self._session.begin() as session:
                row = Letter(message_id=message_id[:500], raw=raw, channel=channel,
                             sender=sender[:320], recipient=recipient[:320],
                             received_at=datetime.now(UTC), status="kept", auth="")
                session.add(row)
                session.flush()
                return KeptLetter(row.id, row.message_id, "kept", True)
        except IntegrityError:
            with self._session() as session:
                row = session.scalars(select(Letter).where(
                    Letter.message_id == message_id[:500])).one()
                return KeptLetter(row.id, row.message_id, row.status, False, row.result)

    def identify(self, letter_id: int, identity: str) -> int | None:
        """Record the letter's identity; None, or the id of the letter that already has it
        (the unique constraint decides between two racing copies)."""
        try:
            with self._session.begin() as session:
                session.execute(update(Letter).where(Letter.id == letter_id)
                                .values(signature=identity))
            return None
        except IntegrityError:
            with self._session() as session:
                first = session.scalars(select(Letter.id).where(
                    Letter.signature == identity)).first()
            if first is None:
                raise
            return first

    def claim(self, letter_id: int) -> bool:
        """Take the letter for deciding; False when another worker took it already."""
        with self._session.begin() as session:
            done = session.execute(update(Letter).where(
                Letter.id == letter_id, Letter.status == "kept").values(status="deciding"))
            return done.rowcount == 1

    def finish(self, letter_id: int, status: str, result: str, game_id: str | None = None,
               player: str | None = None, auth: str = "") -> None:
        # one UPDATE, no read first: on SQLite a transaction that read before writing
        # fails at once when another intake wrote meanwhile, instead of waiting its turn
        with self._session.begin() as session:
            session.execute(update(Letter).where(Letter.id == letter_id).values(
                status=status, result=result[:20000], game_id=game_id, player=player,
                auth=auth))

    def unfinished(self, statuses: tuple[str, ...] = ("kept", "deciding")) -> list[int]:
        """Letters kept but not decided (a crash between keeping and deciding; or only
        ``("kept",)``: kept by a pipe and not yet taken by anyone)."""
        with self._session() as session:
            return list(session.scalars(select(Letter.id).where(
                Letter.status.in_(statuses)).order_by(Letter.id)))

    def reopen(self, letter_id: int) -> None:
        with self._session.begin() as session:
            session.execute(update(Letter).where(
                Letter.id == letter_id, Letter.status == "deciding").values(status="kept"))

    def envelope(self, letter_id: int) -> tuple[bytes, str, str]:
        """The kept bytes, envelope sender and recipients of a letter."""
        with self._session() as session:
            row = session.get(Letter, letter_id)
            return bytes(row.raw), row.sender, row.recipient

    def letters(self, game_id: str | None = None) -> list[dict[str, Any]]:
        with self._session() as session:
            query = select(Letter).order_by(Letter.id)
            if game_id is not None:
                query = query.where(Letter.game_id == game_id)
            return [{"id": r.id, "message_id": r.message_id, "channel": r.channel,
                     "sender": r.sender, "game": r.game_id, "player": r.player,
                     "status": r.status, "auth": r.auth, "result": r.result,
                     "size": len(r.raw)} for r in session.scalars(query)]

    # --- personal addresses -------------------------------------------------------------
    def secret(self, game_id: str, player: str, rotate: bool = False) -> str:
        """The player's secret for ``scriba+GAME.SECRET@domain``, made when first asked."""
        with self._session.begin() as session:
            row = session.get(PersonalAddress, (game_id, player))
            if row is None or rotate:
                value = secrets.token_hex(8)
                if row is None:
                    session.add(PersonalAddress(game_id=game_id, player=player,
                                                secret=value, created_at=datetime.now(UTC)))
                else:
                    row.secret, row.created_at = value, datetime.now(UTC)
                return value
            return row.secret

    def player_for_unsubscribe(self, game_id: str, token: str) -> str | None:
        """The player whose one-click unsubscribe link carries ``token`` (see
        :mod:`.personal`), or None."""
        if not token:
            return None
        with self._session() as session:
            rows = session.scalars(select(PersonalAddress).where(
                PersonalAddress.game_id == game_id)).all()
            for row in rows:  # in constant time, like the secret it comes from
                if secrets.compare_digest(unsubscribe_token(row.secret), token):
                    return row.player
            return None

    def player_for_secret(self, game_id: str, secret: str) -> str | None:
        if not secret:
            return None
        with self._session() as session:
            rows = session.scalars(select(PersonalAddress).where(
                PersonalAddress.game_id == game_id)).all()
            # compare in constant time: the secret is a credential
            for row in rows:
                if secrets.compare_digest(row.secret, secret):
                    return row.player
            return None

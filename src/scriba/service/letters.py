"""What a letter of Scriba's is made of and whom it goes to: its words (English here,
Italian and German in ``locale/*/LC_MESSAGES/mail.po``, the ``mail`` Babel domain), the
game's addresses, the letter being decided (for the receipt its commands' answers are
gathered into), and a game's readers (its seated players: address, language, mail mode)."""

from __future__ import annotations

import hashlib
import os
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import bindparam, select

from scriba.service import catalogs

# The outbox's own words, in English; Italian and German in locale/*/LC_MESSAGES/mail.po
# (the ``mail`` Babel domain, shared with scriba.mail.replies).
_REPLY: dict[str, str] = {
    "re": "Re: ",
    "announce": "[{game}] {actor}: {what}",
    "report": "[{game}] {title}",
    "period_report": "[{game}] {title} \u2014 report",
    "remind": "[{game}] Reminder: {deadline}",
    "remind_body": "You have not acted yet; the deadline ({name}) is {deadline}.\n"
                   "What you can do: {actions}\n",
    "digest": "[{game}] Daily digest",
    "footer": "\n-- \nScriba, {game}\n",
}


def mail_text(english: str, language: str) -> str:
    """``english`` in ``language`` from the mail domain, or as it is."""
    return catalogs.lookup("mail", language, english) if language != "en" else english


@cache  # per language, once: a commit's announcements ask it for every reader
def words(language: str) -> dict[str, str]:
    return {key: mail_text(text, language) for key, text in _REPLY.items()}


SUBJECT_LIMIT = 78  # what a mail list shows whole (RFC 5322 2.1.1's line length)


def short_subject(text: str, limit: int = SUBJECT_LIMIT) -> str:
    """``text`` on one line, at most ``limit`` characters: cut at a word, never inside one,
    and marked with "…" where cut (a single over-long word is cut, marked too)."""
    whole = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if len(whole) <= limit:
        return whole
    cut = whole[:limit]  # the "…" takes the last place; one more shows if a word ends there
    head = cut.rsplit(" ", 1)[0] if " " in cut else cut[:limit - 1]
    return (head.rstrip(" ,;:.–—-") or cut[:limit - 1]) + "…"


@dataclass
class LetterContext:
    """The letter being decided, for the commit listener's receipt."""

    message_id: str
    reply_to: str
    language: str
    subject: str
    references: list[str] = field(default_factory=list)
    n: int = 0
    line: str = ""
    game_id: str | None = None
    player: str | None = None


current_letter: ContextVar[LetterContext | None] = ContextVar("scriba_letter", default=None)


def mail_domain() -> str:
    return os.environ.get("SCRIBA_MAIL_DOMAIN", "scriba.localhost")


def game_address(game_id: str | None, secret: str | None = None) -> str:
    local = os.environ.get("SCRIBA_MAIL_LOCAL", "scriba")
    if not game_id:
        return f"{local}@{mail_domain()}"
    tail = f"{game_id}.{secret}" if secret else game_id
    return f"{local}+{tail}@{mail_domain()}"


def message_id_for(key: str) -> str:
    return f"<{hashlib.sha256(key.encode()).hexdigest()[:32]}@{mail_domain()}>"


@dataclass
class Reader:
    player: str | None
    email: str
    language: str
    mail_mode: str


@cache
def _readers_statement() -> Any:
    """The readers of a game, as a Core statement built once: built per commit from the
    ORM classes it cost ~1 ms of Python, about as much as the rest of the write."""
    from scriba.store.accounts import AccountRow, SeatRow  # noqa: PLC0415 - optional

    seats, accounts = SeatRow.__table__, AccountRow.__table__
    return (select(seats.c.player, accounts.c.email, accounts.c.language,
                   accounts.c.mail_mode)
            .join_from(seats, accounts, accounts.c.id == seats.c.account_id)
            .where(seats.c.game_id == bindparam("game_id"), seats.c.role == "player"))


def readers_in(connection: Any, game_id: str) -> list[Reader]:
    """The seated players, read through the decision's own connection: another session
    opened inside the transaction would, on a single-connection pool (in-memory SQLite),
    roll the decision back when it closed. Read at each announcement, not cached: seats
    and addresses change in other processes (the web, the mail) without a trace in the
    game's log."""
    rows = connection.execute(_readers_statement(), {"game_id": game_id}).all()
    return [Reader(*row) for row in rows]

"""The outbox: every message Scriba sends, written before it is sent, sent until it goes
(what a letter says is :mod:`.letters`).

Rows are written in the same transaction as the events they tell about (a commit listener
on the service), so a decision and its announcements commit together or not at all; each
row's ``key`` is unique and inserted with ON CONFLICT DO NOTHING, so nothing is queued
twice. :meth:`Outbox.deliver_due` hands what is due to a transport and, on failure, tries
again later with exponential backoff (capped, never given up on a temporary failure).

What is written:
- a receipt to the sender of a letter: one reply with the answer to each of its commands
  (pieces ``part`` written with each decision, merged when the letter is done);
- each accepted action announced to every other seated player (``each``), or kept for
  the daily digest (``digest``), or nothing (``none``): :mod:`.announcements`;
- by :meth:`sweep`: each period's report, reminders before a deadline to the players who
  have not acted since the last one, and the digests that are due: :mod:`.periodmail`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import insert, select, update

from scriba.kernel.events import fold
from scriba.service.announcements import Announcements
from scriba.service.commands import Commands
from scriba.service.letters import (
    LetterContext,
    current_letter,
    game_address,
    mail_domain,
    message_id_for,
    short_subject,
    words,
)
from scriba.service.mailroom import Mailroom
from scriba.service.periodmail import PeriodMail
from scriba.service.personal import personal_headers
from scriba.service.reads import Reads
from scriba.service.receipts import answer, receipt_words
from scriba.store.database import upsert_dialect
from scriba.store.eventstore import EventStore
from scriba.store.mail import OutboxMessage

BACKOFF_FIRST = 15.0  # seconds before the first retry
BACKOFF_CAP = 120.0  # at most two minutes between tries: one knock, not one per message


class Outbox:
    """The mail queue of one database. :meth:`on_commit` is registered as a commit
    listener of the commands where the service is assembled; ``clock`` stamps the rows
    (a test may set another)."""

    def __init__(self, store: EventStore, commands: Commands, reads: Reads,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.commands = commands
        self.reads = reads
        self.clock = clock or (lambda: datetime.now(UTC))
        self._session = store.session
        self._engine = store.engine
        self._dialect = store.engine.dialect.name
        self._queue: Any = None  # the statement of queue_rows, made on first use
        self.announcements = Announcements(self)
        self.period = PeriodMail(self)
        self._mailroom = Mailroom(store)

    # --- writing ------------------------------------------------------------------------
    def _row(self, **values: Any) -> dict[str, Any]:
        now = self.clock()
        row = {"created_at": now, "next_attempt": now, "attempts": 0, "headers": {},
               "game_id": None, "player": None, "status": "pending", "attachments": None,
               **values}
        row["subject"] = short_subject(row["subject"])  # short and whole, on every kind
        row["headers"] = {"Message-ID": message_id_for(row["key"]), **row["headers"]}
        return row

    def _insert(self, values: dict[str, Any]) -> Any:
        return self._insert_rows([self._row(**values)])

    def _insert_rows(self, rows: list[dict[str, Any]] | None = None) -> Any:
        """INSERT … ON CONFLICT (key) DO NOTHING: a message already queued stays as is.
        Without ``rows``, the statement to execute with them as parameters."""
        dialect = upsert_dialect(self._dialect)
        statement = dialect.insert(OutboxMessage) if dialect else insert(OutboxMessage)
        if rows is not None:
            statement = statement.values(rows)
        if dialect:
            statement = statement.on_conflict_do_nothing(index_elements=["key"])
        return statement

    def queue_rows(self, connection: Any, rows: list[dict[str, Any]]) -> None:
        """``rows`` (made by :meth:`_row`, alike) queued in ``connection``'s transaction:
        one statement made and compiled once, the rows its parameters (a multi-row VALUES
        is compiled anew each time — for every vote, with a row per reader)."""
        if rows:
            if self._queue is None:
                self._queue = self._insert_rows()
            connection.execute(self._queue, rows)

    def enqueue(self, connection: Any = None, **values: Any) -> None:
        """Queue one message (``key``, ``recipient``, ``kind``, ``subject``, ``body``, ...)
        unless its key is queued already; in ``connection``'s transaction when given."""
        statement = self._insert(values)
        if connection is not None:
            connection.execute(statement)
        else:
            with self._session.begin() as session:
                session.execute(statement)

    def thread_headers(self, game_id: str | None) -> dict[str, str]:
        if not game_id:
            return {}
        address = game_address(game_id)
        root = f"<game-{game_id}@{mail_domain()}>"
        return {"List-Id": f"<{game_id}.{mail_domain()}>",
                "List-Post": f"<mailto:{address}>",
                "List-Unsubscribe": f"<mailto:{address}?subject=unsubscribe>",
                "References": root, "In-Reply-To": root}

    # --- the commit listener ------------------------------------------------------------
    def on_commit(self, connection: Any, game_id: str, events: list[dict[str, Any]],
                  outcome: Any) -> None:
        letter = current_letter.get()
        if letter is not None and letter.game_id == game_id:
            self._answer_part(connection, letter, game_id, outcome)
        actor = next((e.get("actor") for e in (outcome.events or []) if e.get("actor")), None)
        if outcome.accepted and actor and outcome.events:
            self.announcements.announce(connection, game_id, actor, events, outcome)
        for event in events:  # a correction is told to everyone, whoever made it
            if event["type"] == "record_corrected":
                self.announcements.announce_correction(connection, game_id, event)

    def _describe(self, game_id: str, outcome: Any, language: str,
                  separator: str = " ") -> str:
        try:
            if outcome.accepted and outcome.state is None:
                # inside the transaction: the state after it, folded on the cached one
                # (no read of the database, which this transaction is writing)
                before = self.commands.cached(game_id)
                if before is not None:
                    after = fold(outcome.events, before.copy())
                    outcome = SimpleNamespace(accepted=True, message=outcome.message,
                                              events=outcome.events, state=after)
            return self.reads.describe_outcome(game_id, outcome, language, separator)
        except Exception:  # noqa: BLE001 - a reply must not break the decision it answers
            return outcome.message or ("OK" if outcome.accepted else "refused")

    def _answer_part(self, connection: Any, letter: LetterContext, game_id: str,
                     outcome: Any) -> None:
        text = self._describe(game_id, outcome, letter.language, "\n")  # a line each
        # what was recorded, quoted; a refusal said as one, with its rule
        state = getattr(outcome, "state", None) or self.commands.cached(game_id)
        text = answer(text, outcome, receipt_words(self.reads, state, letter.language))
        self.enqueue(connection, key=f"part:{letter.message_id}#{letter.n}",
                     recipient=letter.reply_to, kind="part", status="part",
                     game_id=game_id, player=letter.player, subject=letter.subject,
                     body=f"> {letter.line}\n{text}\n",
                     headers={"n": letter.n})

    # --- receipts -----------------------------------------------------------------------
    def add_part(self, letter: LetterContext, text: str) -> None:
        self.enqueue(key=f"part:{letter.message_id}#{letter.n}", recipient=letter.reply_to,
                     kind="part", status="part", game_id=letter.game_id,
                     player=letter.player, subject=letter.subject,
                     body=f"> {letter.line}\n{text}\n" if letter.line else f"{text}\n",
                     headers={"n": letter.n})

    def answered(self, message_id: str, n: int) -> bool:
        """Whether command ``n`` of the letter was decided already: its answer is written
        in the transaction of its decision, so it exists exactly when the decision does."""
        with self._session() as session:
            return session.scalars(select(OutboxMessage.id).where(
                OutboxMessage.key == f"part:{message_id}#{n}")).first() is not None

    def close_receipt(self, letter: LetterContext) -> None:
        """Merge the letter's answers into one reply, threaded under the letter, and its
        announcements into one mail per reader."""
        prefix = f"part:{letter.message_id}#"
        with self._session.begin() as session:
            # SQLite: take the write lock before reading (another intake may be writing)
            session.connection(execution_options={"sqlite_begin": "IMMEDIATE"})
            parts = [row for row in session.scalars(select(OutboxMessage).where(
                OutboxMessage.key.startswith(prefix, autoescape=True),
                OutboxMessage.status == "part"))]
            parts.sort(key=lambda row: int((row.headers or {}).get("n", 0)))
            self.announcements.merge_letter(session, letter.message_id)
            if not parts:
                return
            for row in parts:
                row.status = "merged"
            body = "\n".join(row.body for row in parts)
            session.flush()
            session.execute(self._insert(self._reply_row(letter, "receipt", body)))

    def reply(self, letter: LetterContext, kind: str, body: str, key: str | None = None,
              recipient: str | None = None) -> None:
        """A one-off answer (unknown sender, held letter, too large): once per ``key``."""
        row = self._reply_row(letter, kind, body, key)
        if recipient:
            row["recipient"] = recipient
        self.enqueue(**row)

    def _reply_row(self, letter: LetterContext, kind: str, body: str,
                   key: str | None = None) -> dict[str, Any]:
        w = words(letter.language)
        subject = letter.subject or ""
        if not subject.lower().startswith(("re:", "r:", "aw:")):
            subject = w["re"] + subject
        references = [*letter.references[-10:], letter.message_id]
        headers = {**self.thread_headers(letter.game_id),
                   "In-Reply-To": letter.message_id, "References": " ".join(references),
                   "Auto-Submitted": "auto-replied"}
        return {"key": key or f"{kind}:{letter.message_id}", "recipient": letter.reply_to,
                "kind": kind, "game_id": letter.game_id, "player": letter.player,
                "subject": subject, "headers": headers,
                "body": body + w["footer"].format(game=letter.game_id or "")}

    # --- what time makes due (periodmail.py) -------------------------------------------
    def sweep(self) -> int:
        """Queue the reports, reminders and digests that are due; returns how many."""
        return self.period.sweep()

    # --- delivery -----------------------------------------------------------------------
    def due(self, limit: int = 100) -> list[OutboxMessage]:
        with self._session() as session:
            return list(session.scalars(select(OutboxMessage).where(
                OutboxMessage.status == "pending",
                OutboxMessage.next_attempt <= self.clock()).order_by(
                OutboxMessage.id).limit(limit)))

    def deliver_due(self, transport: Callable[[OutboxMessage], None],
                    limit: int = 100) -> dict[str, int]:
        """Send what is due through ``transport`` (raises to fail): sent rows are marked
        sent, failed ones wait ``15 s · 2^(attempts-1)`` (at most two minutes); a
        :class:`PermanentFailure` marks the row failed."""
        counts = {"sent": 0, "retry": 0, "failed": 0}
        down: Exception | None = None
        for row in self.due(limit):
            try:
                if down is not None:  # the server is unreachable: don't knock again
                    raise down
                self._personal(row)
                transport(row)
            except PermanentFailure as error:
                self._mark(row.id, status="failed", last_error=str(error)[:2000],
                           attempts=row.attempts + 1)
                counts["failed"] += 1
            except Exception as error:  # noqa: BLE001 - any failure is retried later
                if isinstance(error, ConnectionError) and down is None:
                    down = error
                attempts = row.attempts + 1
                wait = min(BACKOFF_FIRST * 2 ** (attempts - 1), BACKOFF_CAP)
                self._mark(row.id, attempts=attempts, last_error=str(error)[:2000],
                           next_attempt=self.clock() + timedelta(seconds=wait))
                counts["retry"] += 1
            else:
                self._mark(row.id, status="sent", sent_at=self.clock(),
                           attempts=row.attempts + 1, last_error=None)
                counts["sent"] += 1
        return counts

    def _personal(self, row: OutboxMessage) -> None:
        """A seated reader's own Reply-To, List-Post and List-Unsubscribe (.personal): set
        as it is sent, not in the decision's transaction (the secret is made on demand)."""
        if row.game_id and row.player:
            secret = self._mailroom.secret(row.game_id, row.player)
            row.headers = {**(row.headers or {}), **personal_headers(row.game_id, secret)}

    def _mark(self, row_id: int, **values: Any) -> None:
        with self._session.begin() as session:
            session.execute(update(OutboxMessage).where(OutboxMessage.id == row_id)
                            .values(**values))

    def messages(self, status: str | None = None, kind: str | None = None
                 ) -> list[dict[str, Any]]:
        with self._session() as session:
            query = select(OutboxMessage).order_by(OutboxMessage.id)
            if status:
                query = query.where(OutboxMessage.status == status)
            if kind:
                query = query.where(OutboxMessage.kind == kind)
            return [{"id": r.id, "key": r.key, "recipient": r.recipient, "kind": r.kind,
                     "subject": r.subject, "body": r.body, "status": r.status,
                     "attempts": r.attempts, "game": r.game_id, "player": r.player,
                     "headers": r.headers, "attachments": r.attachments or []}
                    for r in session.scalars(query)]


class Deferred(Exception):
    """The server deferred this one message (a 4xx for its recipient); others may go."""


class PermanentFailure(Exception):
    """The mail server refused the message for good (a 5xx answer)."""


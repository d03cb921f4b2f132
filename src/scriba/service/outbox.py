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
  the daily digest (``digest``), or nothing (``none``);
- by :meth:`sweep`: each period's report, reminders before a deadline to the players who
  have not acted since the last one, and the digests that are due.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from scriba.kernel.events import fold
from scriba.service.commands import Commands
from scriba.service.errors import ServiceError
from scriba.service.letters import (
    LetterContext,
    Reader,
    current_letter,
    game_address,
    mail_domain,
    message_id_for,
    readers_in,
    short_subject,
    words,
)
from scriba.service.reads import Reads
from scriba.service.words import show_time
from scriba.store.eventstore import EventStore
from scriba.store.mail import OutboxMessage

BACKOFF_FIRST = 15.0  # seconds before the first retry
BACKOFF_CAP = 120.0  # at most two minutes between tries: one knock, not one per message
REMIND_BEFORE = timedelta(hours=float(os.environ.get("SCRIBA_MAIL_REMIND_HOURS", "24")))
DIGEST_EVERY = timedelta(days=1)
_ACTED = {"action_taken", "vote_cast", "proposal_submitted"}

def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


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
        self._swept: dict[str, tuple[Any, int]] = {}
        # The last transaction's readers: (transaction, game id, readers). Every decision
        # of a batch is announced in one transaction: its seats are read once.
        self._readers: tuple[Any, str, list[Reader]] | None = None

    # --- writing ------------------------------------------------------------------------
    def _row(self, **values: Any) -> dict[str, Any]:
        now = self.clock()
        row = {"created_at": now, "next_attempt": now, "attempts": 0, "headers": {},
               "game_id": None, "player": None, "status": "pending", **values}
        row["subject"] = short_subject(row["subject"])  # short and whole, on every kind
        row["headers"] = {"Message-ID": message_id_for(row["key"]), **row["headers"]}
        return row

    def _insert(self, values: dict[str, Any]) -> Any:
        return self._insert_rows([self._row(**values)])

    def _insert_rows(self, rows: list[dict[str, Any]]) -> Any:
        """INSERT … ON CONFLICT (key) DO NOTHING: a message already queued stays as is."""
        module = postgresql if self._dialect == "postgresql" else sqlite
        if self._dialect in ("postgresql", "sqlite"):
            return module.insert(OutboxMessage).values(rows).on_conflict_do_nothing(
                index_elements=["key"])
        return insert(OutboxMessage).values(rows)

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
            self._announce(connection, game_id, actor, events, outcome)

    def _describe(self, game_id: str, outcome: Any, language: str) -> str:
        try:
            if outcome.accepted and outcome.state is None:
                # inside the transaction: the state after it, folded on the cached one
                # (no read of the database, which this transaction is writing)
                before = self.commands.cached(game_id)
                if before is not None:
                    after = fold(outcome.events, before.copy())
                    outcome = SimpleNamespace(accepted=True, message=outcome.message,
                                              events=outcome.events, state=after)
            return self.reads.describe_outcome(game_id, outcome, language)
        except Exception:  # noqa: BLE001 - a reply must not break the decision it answers
            return outcome.message or ("OK" if outcome.accepted else "refused")

    def _answer_part(self, connection: Any, letter: LetterContext, game_id: str,
                     outcome: Any) -> None:
        text = self._describe(game_id, outcome, letter.language)
        self.enqueue(connection, key=f"part:{letter.message_id}#{letter.n}",
                     recipient=letter.reply_to, kind="part", status="part",
                     game_id=game_id, player=letter.player, subject=letter.subject,
                     body=f"> {letter.line}\n{text}\n",
                     headers={"n": letter.n})

    def _announce(self, connection: Any, game_id: str, actor: str,
                  events: list[dict[str, Any]], outcome: Any) -> None:
        seats = self._seats(connection, game_id)
        first = events[0]["seq"] if events else 0
        told: dict[str, str] = {}  # one narration per language, not per reader
        rows: list[dict[str, Any]] = []
        for seat in seats:
            if seat.player == actor or seat.mail_mode == "none" or not seat.email:
                continue
            if seat.language not in told:
                told[seat.language] = self._describe(game_id, outcome, seat.language)
            text = told[seat.language]
            what = text.split("\n", 1)[0]
            # the narration names the actor already: the subject says it once
            subject = (words(seat.language)["report"].format(game=game_id, title=what)
                       if actor in what else words(seat.language)["announce"].format(
                           game=game_id, actor=actor, what=what))
            rows.append(self._row(
                key=f"announce:{game_id}:{first}:{seat.email}", recipient=seat.email,
                kind="announce", game_id=game_id, player=seat.player, subject=subject,
                status="digest" if seat.mail_mode == "digest" else "pending",
                body=text + words(seat.language)["footer"].format(game=game_id),
                headers=self.thread_headers(game_id)))
        if rows:  # one statement for all the readers
            connection.execute(self._insert_rows(rows))

    def _seats(self, connection: Any, game_id: str) -> list[Reader]:
        """The game's readers, read once per transaction (a batch of decisions shares
        it; a seat taken meanwhile elsewhere is seen by the next transaction)."""
        transaction = connection.get_transaction()
        cached = self._readers
        if cached is not None and transaction is not None and cached[0] is transaction \
                and cached[1] == game_id:
            return cached[2]
        seats = readers_in(connection, game_id)
        self._readers = (transaction, game_id, seats)
        return seats

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
        """Merge the letter's answers into one reply, threaded under the letter."""
        prefix = f"part:{letter.message_id}#"
        with self._session.begin() as session:
            # SQLite: take the write lock before reading (another intake may be writing)
            session.connection(execution_options={"sqlite_begin": "IMMEDIATE"})
            parts = [row for row in session.scalars(select(OutboxMessage).where(
                OutboxMessage.key.startswith(prefix, autoescape=True),
                OutboxMessage.status == "part"))]
            parts.sort(key=lambda row: int((row.headers or {}).get("n", 0)))
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

    # --- sweeps: reports, reminders, digests --------------------------------------------
    def sweep(self) -> int:
        """Queue what time has made due; returns how many messages were queued."""
        before = self._count()
        for game in self.reads.games():
            # a game unchanged since the last sweep, in the same quarter hour, has no
            # new report or reminder: skip it (reports read the whole log)
            mark = (game.get("events"), int(self.clock().timestamp() // 900))
            if self._swept.get(game["id"]) == mark:
                continue
            self._swept[game["id"]] = mark
            try:
                with self._engine.connect() as connection:
                    seats = [s for s in readers_in(connection, game["id"])
                             if s.player and s.email and s.mail_mode != "none"]
            except Exception:  # noqa: BLE001
                continue
            if seats:
                self._reports(game["id"], seats)
                self._reminders(game["id"], seats)
        self._digests()
        return self._count() - before

    def _count(self) -> int:
        with self._session() as session:
            return len(session.scalars(select(OutboxMessage.id)).all())

    def _reports(self, game_id: str, seats: list[Any]) -> None:
        by_language: dict[str, list[dict[str, Any]]] = {}
        for seat in seats:
            if seat.language not in by_language:
                try:
                    by_language[seat.language] = self.reads.period_reports(
                        game_id, seat.language)
                except ServiceError:
                    by_language[seat.language] = []
            # finished periods with something to tell (not the instant before the first)
            reports = [r for r in by_language[seat.language] if r.get("end")
                       and r.get("lines") and r.get("end") != r.get("start")]
            for report in reports[-3:]:  # a game joined late is not sent its whole past
                title = str(report.get("title") or "")
                body = "\n".join(str(line) for line in report.get("lines") or [])
                self.enqueue(key=f"report:{game_id}:{report.get('start')}:{report.get('end')}:"
                             f"{seat.email}",
                             recipient=seat.email, kind="report", game_id=game_id,
                             player=seat.player, headers=self.thread_headers(game_id),
                             subject=words(seat.language)["report"].format(
                                 game=game_id, title=title),
                             body=f"{title}\n\n{body}\n" + words(seat.language)[
                                 "footer"].format(game=game_id))

    def _reminders(self, game_id: str, seats: list[Any]) -> None:
        status = self.reads.status(game_id)
        deadline, now = status.get("deadline"), status.get("now")
        if not deadline or not now or status.get("ended"):
            return
        left = _parse(deadline) - _parse(now)
        if left <= timedelta(0) or left > REMIND_BEFORE:
            return
        log = self.reads.log(game_id)
        start = max((e["seq"] for e in log if e["type"] == "timer_fired"), default=0)
        acted = {e["actor"] for e in log if e["seq"] > start and e["type"] in _ACTED}
        for seat in seats:
            if seat.player in acted:
                continue
            try:
                actions = self.reads.actions_for(game_id, seat.player)
                said = self.reads.words(game_id, seat.language)
            except ServiceError:
                actions = []
            if not actions:
                continue
            # What a player reads: the actions by their labels, the time in words.
            labels = [(said.action(a.name).label or SimpleNamespace(text=a.name)).text
                      for a in actions]
            w = words(seat.language)
            name = status.get("deadline_name") or ""
            when = show_time(deadline)
            self.enqueue(key=f"remind:{game_id}:{deadline}:{seat.email}",
                         recipient=seat.email, kind="remind", game_id=game_id,
                         player=seat.player, headers=self.thread_headers(game_id),
                         subject=w["remind"].format(game=game_id, deadline=when),
                         body=w["remind_body"].format(name=name, deadline=when,
                                                      actions=", ".join(labels))
                         + w["footer"].format(game=game_id))

    def _digests(self) -> None:
        now = self.clock()
        with self._session.begin() as session:
            rows = session.scalars(select(OutboxMessage).where(
                OutboxMessage.status == "digest").order_by(OutboxMessage.id)).all()
            groups: dict[tuple[str, str | None], list[OutboxMessage]] = {}
            for row in rows:
                groups.setdefault((row.recipient, row.game_id), []).append(row)
            for (recipient, game_id), group in groups.items():
                if now - _aware(group[0].created_at) < DIGEST_EVERY:
                    continue
                for row in group:
                    row.status = "merged"
                body = "\n\n".join(f"{row.subject}\n{row.body}" for row in group)
                session.flush()
                session.execute(self._insert({
                    "key": f"digest:{recipient}:{game_id}:{group[0].id}",
                    "recipient": recipient, "kind": "digest", "game_id": game_id,
                    "subject": words("en")["digest"].format(game=game_id), "body": body,
                    "headers": self.thread_headers(game_id)}))

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
                     "headers": r.headers} for r in session.scalars(query)]


class Deferred(Exception):
    """The server deferred this one message (a 4xx for its recipient); others may go."""


class PermanentFailure(Exception):
    """The mail server refused the message for good (a 5xx answer)."""


def _parse(moment: str) -> datetime:
    return _aware(datetime.fromisoformat(moment.replace("Z", "+00:00")))

"""Each accepted action announced to the game's other readers, written by the outbox's
commit listener in the transaction of the decision (so both commit or neither does): by
mail to each reader (``each``), kept for the daily digest (``digest``), or not at all
(``none``). One narration per language, not per reader.

A proposal's announcement carries the whole proposal (:mod:`.proposaltext`): the rules of
play by mail have every proposal sent in full to every player before the vote. Subjects
are short and whole and name the period: ``[g] Proposal 3 “Courtesy” — Turn 2``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import Any, Protocol

from sqlalchemy import select

from scriba.kernel.events import fold
from scriba.kernel.sealing import hidden
from scriba.service import busy
from scriba.service.difference import correction_letter
from scriba.service.letters import (
    SUBJECT_LIMIT,
    Reader,
    current_letter,
    mail_text,
    readers_in,
    short_subject,
    words,
)
from scriba.service.narrate import Narrator, bookkeeping
from scriba.service.outcome import _next_steps
from scriba.service.periods import period_title
from scriba.service.proposaltext import proposal_heading, proposal_in_full
from scriba.service.words import Words, declared_words
from scriba.store.mail import OutboxMessage

# An announcement of one of a letter's commands, waiting for the letter's other commands.
PART, PART_KIND = "announce-part:", "announce-part"


class Queue(Protocol):
    """What the announcements and the period's mail use of the outbox (:mod:`.outbox`
    builds them with itself; this keeps the imports one way)."""

    commands: Any
    reads: Any
    clock: Callable[[], datetime]
    _session: Any
    _engine: Any

    def _row(self, **values: Any) -> dict[str, Any]: ...
    def _insert(self, values: dict[str, Any]) -> Any: ...
    def _insert_rows(self, rows: list[dict[str, Any]] | None = None) -> Any: ...
    def queue_rows(self, connection: Any, rows: list[dict[str, Any]]) -> None: ...
    def _describe(self, game_id: str, outcome: Any, language: str) -> str: ...
    def enqueue(self, connection: Any = None, **values: Any) -> None: ...
    def thread_headers(self, game_id: str | None) -> dict[str, str]: ...


@dataclass
class Told:
    """An announcement in one language: its subject, body and attached files."""

    subject: str
    body: str
    attachments: list[dict[str, str]] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)  # the headings of those it makes


def subject_with_period(game_id: str, what: str, period: str | None,
                        proposal: dict[str, Any] | None = None, language: str = "en") -> str:
    """``[g] what — period``: ``what`` cut at a word so that the period stays whole; for
    one ``proposal``, its heading with its title cut inside the quotes."""
    tail = f" \u2014 {period}" if period else ""
    if proposal is not None and proposal.get("title"):
        bare = len(f"[{game_id}] ") + len(proposal_heading(proposal["number"], "", language))
        room = SUBJECT_LIMIT - len(tail) - bare - 3  # a space and the two quotes
        if room >= 10:
            title = short_subject(str(proposal["title"]), room)
            what = proposal_heading(proposal["number"], title, language)
    what = what.rstrip(" .")  # a sentence's full stop before the dash reads as a typo
    head = short_subject(f"[{game_id}] {what}", SUBJECT_LIMIT - len(tail))
    return head + tail


def _headline(events: list[dict[str, Any]], said: Words, sentences: list[str]) -> str:
    """The subject's sentence: the first one told, but an action whose values are lists or
    tables (the votes of a whole letter) by its name alone — the body tells them."""
    first = events[0] if events else None
    args = ((first or {}).get("payload") or {}).get("args") or {}
    if first is not None and first["type"] == "action_taken" and any(
            isinstance(value, list | dict) for value in args.values()):
        bare = {**first, "payload": {**first["payload"], "args": {}}}
        return Narrator(said).tell(bare)
    return sentences[0] if sentences else ""


class Announcements:
    """What the outbox writes when an action is accepted (its rows, its queue)."""

    def __init__(self, outbox: Queue) -> None:
        self.outbox = outbox
        # The last transaction's readers: (transaction, game id, readers). Every decision
        # of a batch is announced in one transaction: its seats are read once.
        self._readers: tuple[Any, str, list[Reader]] | None = None

    def announce(self, connection: Any, game_id: str, actor: str,
                 events: list[dict[str, Any]], outcome: Any) -> None:
        outbox = self.outbox
        seats = [s for s in self._seats(connection, game_id)
                 if s.player != actor and s.mail_mode != "none" and s.email]
        if not seats:
            return
        first = events[0]["seq"] if events else 0
        outcome = self._with_state(game_id, outcome)
        # The others are not told a sealed move (kernel/sealing.py) until it is revealed;
        # a command of nothing else is not announced at all (its receipt tells its player).
        secret = hidden(events)
        if secret:
            events = [e for e in events if e["seq"] not in secret]
            if not events:
                return
            outcome = SimpleNamespace(accepted=True, message=outcome.message, events=events,
                                      state=outcome.state)
        mode = busy.modes(connection, game_id, seats, outbox.clock())  # auto: busy → digest
        told: dict[str, Told] = {}  # one narration per language, not per reader
        rows: list[dict[str, Any]] = []
        # A command of a letter is told as a part, merged with the letter's other parts
        # into one mail per reader when the letter is closed (merge_letter): four votes
        # in one e-mail reach the others as one mail, not four.
        letter = current_letter.get()
        if letter is None or letter.game_id != game_id:
            letter = None
        thread = outbox.thread_headers(game_id)  # the same for every reader
        for seat in seats:
            if seat.language not in told:
                told[seat.language] = self._tell(game_id, actor, outcome, seat.language)
            said = told[seat.language]
            status = "digest" if mode[seat.email] == "digest" else "pending"
            row = outbox._row(
                key=f"announce:{game_id}:{first}:{seat.email}", recipient=seat.email,
                kind="announce", game_id=game_id, player=seat.player, subject=said.subject,
                status=status,
                body=said.body + words(seat.language)["footer"].format(game=game_id),
                attachments=said.attachments or None, headers=thread)
            if letter is not None:
                row.update(key=f"{PART}{letter.message_id}#{letter.n}:{seat.email}",
                           kind=PART_KIND, status="part", body=said.body,
                           headers={"n": letter.n, "then": status, "actor": actor,
                                    "language": seat.language, "proposals": said.proposals})
            rows.append(row)
        outbox.queue_rows(connection, rows)  # one statement for all the readers

    def announce_correction(self, connection: Any, game_id: str,
                            event: dict[str, Any]) -> None:
        """A confirmed correction told to every reader, in their language: what was
        corrected, by whom, why, and its difference (:mod:`.difference`)."""
        outbox = self.outbox
        seats = [s for s in self._seats(connection, game_id)
                 if s.mail_mode != "none" and s.email]
        state = outbox.commands.cached(game_id)  # folded with the correction already
        if not seats or state is None:
            return
        declared = outbox.reads.engine.declarations(state)
        told: dict[str, tuple[str, list[str]]] = {}
        rows = []
        for seat in seats:
            if seat.language not in told:
                told[seat.language] = correction_letter(
                    event["payload"], declared_words(state, declared, seat.language))
            heading, lines = told[seat.language]
            rows.append(outbox._row(
                key=f"correction:{game_id}:{event['seq']}:{seat.email}",
                recipient=seat.email, kind="announce", game_id=game_id, player=seat.player,
                subject=short_subject(f"[{game_id}] {heading}", SUBJECT_LIMIT),
                status="pending",
                body="\n".join(lines) + "\n" + words(seat.language)["footer"].format(
                    game=game_id),
                headers=outbox.thread_headers(game_id)))
        outbox.queue_rows(connection, rows)

    def merge_letter(self, session: Any, message_id: str) -> None:
        """One mail per reader for the announcements of one letter's commands, in the
        transaction that closes the letter (with its receipt)."""
        outbox = self.outbox
        parts = list(session.scalars(select(OutboxMessage).where(
            OutboxMessage.key.startswith(f"{PART}{message_id}#", autoescape=True),
            OutboxMessage.kind == PART_KIND, OutboxMessage.status == "part")))
        by_reader: dict[str, list[Any]] = {}
        for row in sorted(parts, key=lambda r: int((r.headers or {}).get("n", 0))):
            by_reader.setdefault(row.recipient, []).append(row)
            row.status = "merged"
        session.flush()
        for recipient, rows in by_reader.items():
            first, game_id = rows[0], rows[0].game_id
            info = first.headers or {}
            language = str(info.get("language") or "en")
            subject = first.subject
            # the subject names the letter's proposals, else the letter and its writer
            made = [row for row in rows if (row.headers or {}).get("proposals")]
            headings = [h for row in made for h in row.headers["proposals"]]
            if len(made) == 1 and len(headings) == 1:
                subject = made[0].subject
            elif len(rows) > 1:
                period = subject.rsplit(" \u2014 ", 1)[1] if " \u2014 " in subject else None
                what = ", ".join(headings) or mail_text("Letter from {actor}", language).format(
                    actor=info.get("actor") or first.player or "")
                subject = subject_with_period(game_id, what, period, None, language)
            attachments = [a for row in rows for a in (row.attachments or [])]
            session.execute(outbox._insert(dict(
                key=f"announce:{game_id}:letter:{message_id}:{recipient}",
                recipient=recipient, kind="announce", game_id=game_id, player=first.player,
                subject=subject, status=str(info.get("then") or "pending"),
                body="\n".join(row.body for row in rows)
                + words(language)["footer"].format(game=game_id),
                attachments=attachments or None, headers=outbox.thread_headers(game_id))))

    def _with_state(self, game_id: str, outcome: Any) -> Any:
        """The outcome with the state after it: inside the transaction, folded on the
        cached one (no read of the database, which this transaction is writing)."""
        if outcome.state is not None:
            return outcome
        before = self.outbox.commands.cached(game_id)
        if before is None:
            return outcome
        return SimpleNamespace(accepted=True, message=outcome.message, events=outcome.events,
                               state=fold(outcome.events, before.copy()))

    def _tell(self, game_id: str, actor: str, outcome: Any, language: str) -> Told:
        try:
            return self._told(game_id, outcome, language)
        except Exception:  # noqa: BLE001 - an announcement must not break its decision
            text = self.outbox._describe(game_id, outcome, language)
            what = text.split("\n", 1)[0]
            w = words(language)
            subject = (w["report"].format(game=game_id, title=what) if actor in what
                       else w["announce"].format(game=game_id, actor=actor, what=what))
            return Told(subject, text)

    def _told(self, game_id: str, outcome: Any, language: str) -> Told:
        state = outcome.state
        reads = self.outbox.reads
        said = declared_words(state, reads.engine.declarations(state), language)
        events = outcome.events or []
        narrator = Narrator(said)
        sentences = [text for event in events
                     if (text := narrator.tell(event)) and not bookkeeping(event)]
        blocks, attachments, made = self._proposals(state, events, said)
        lines = sentences[:]
        for block in blocks:
            lines += ["", block]
        after = _next_steps(state, events, said) + self._status(state)
        if after:
            lines += [""] + after
        name = said.period_variable(state.vars)
        period = period_title(said, name, state.vars[name]) if name else None
        what = ", ".join(proposal_heading(p["number"], p.get("title"), language)
                         for p in made) if made else _headline(events, said, sentences)
        subject = subject_with_period(game_id, what, period,
                                      made[0] if len(made) == 1 else None, language)
        return Told(subject, "\n".join(lines) + "\n", attachments,
                    [proposal_heading(p["number"], p.get("title"), language) for p in made])

    def _proposals(self, state: Any, events: list[dict[str, Any]], said: Words
                   ) -> tuple[list[str], list[dict[str, str]], list[dict[str, Any]]]:
        """Each proposal submitted by the events, in full; its attachments; the proposals."""
        rules = {r["id"]: r for r in state.rules_in_force()}
        blocks, attachments, made = [], [], []
        for event in events:
            if event["type"] != "proposal_submitted":
                continue
            proposal = state.proposals.get(str(event["payload"].get("number")))
            if proposal is None:
                continue
            replaces = (proposal.get("data") or {}).get("replaces")
            replaced = state.proposals.get(str(replaces)) if replaces is not None else None
            block, files = proposal_in_full(proposal, rules, said, replaced)
            blocks.append(block)
            attachments += files
            made.append(proposal)
        return blocks, attachments, made

    def _status(self, state: Any) -> list[str]:
        """What the rules say comes next (their ``status`` query), if they say it."""
        if state.ended:
            return []
        status = self.outbox.reads.rules_status(state)
        return [status.strip()] if isinstance(status, str) and status.strip() else []

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

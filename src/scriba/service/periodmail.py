"""What time makes due, queued by the outbox's sweep: each period's report when the period
ends, reminders before a deadline to the players who have not acted since the last one,
and the digests that are due."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import select

from scriba.service.announcements import Queue
from scriba.service.errors import ServiceError
from scriba.service.letters import readers_in, words
from scriba.service.periodreport import report_letter
from scriba.service.words import time_in_words
from scriba.store.mail import OutboxMessage

REMIND_BEFORE = timedelta(hours=float(os.environ.get("SCRIBA_MAIL_REMIND_HOURS", "24")))
DIGEST_EVERY = timedelta(days=1)
_ACTED = {"action_taken", "vote_cast", "proposal_submitted"}


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _parse(moment: str) -> datetime:
    return _aware(datetime.fromisoformat(moment.replace("Z", "+00:00")))


class PeriodMail:
    """The sweep's reports, reminders and digests, queued in the outbox."""

    def __init__(self, outbox: Queue) -> None:
        self.outbox = outbox
        self.reads = outbox.reads
        self._swept: dict[str, tuple[Any, int]] = {}

    def sweep(self) -> int:
        """Queue what time has made due; returns how many messages were queued."""
        before = self._count()
        for game in self.reads.games():
            # a game unchanged since the last sweep, in the same quarter hour, has no
            # new report or reminder: skip it (reports read the whole log)
            mark = (game.get("events"), int(self.outbox.clock().timestamp() // 900))
            if self._swept.get(game["id"]) == mark:
                continue
            self._swept[game["id"]] = mark
            try:
                with self.outbox._engine.connect() as connection:
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
        with self.outbox._session() as session:
            return len(session.scalars(select(OutboxMessage.id)).all())

    def _reports(self, game_id: str, seats: list[Any]) -> None:
        outbox = self.outbox
        by_language: dict[str, list[dict[str, Any]]] = {}
        letters: dict[tuple[str, Any, Any], str] = {}  # one letter per report and language
        game: dict[str, Any] = {}  # the log, state and status, read once if needed
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
                key = f"report:{game_id}:{report.get('start')}:{report.get('end')}:{seat.email}"
                if self._queued(key):
                    continue
                told = (seat.language, report.get("start"), report.get("end"))
                if told not in letters:
                    letters[told] = self._letter(game_id, report, seat.language, game)
                w = words(seat.language)
                outbox.enqueue(key=key, recipient=seat.email, kind="report", game_id=game_id,
                               player=seat.player, headers=outbox.thread_headers(game_id),
                               subject=w["period_report"].format(
                                   game=game_id, title=str(report.get("title") or "")),
                               body=letters[told] + w["footer"].format(game=game_id))

    def _letter(self, game_id: str, report: dict[str, Any], language: str,
                game: dict[str, Any]) -> str:
        """The report's letter: its decisions with their votes, its rules in full, the
        standings and what is due next; else (a rule that fails) its lines as they are."""
        try:
            if not game:
                game.update(log=self.reads.log(game_id), state=self.reads.load(game_id),
                            status=self.reads.status(game_id))
            return report_letter(report, game["log"], game["state"],
                                 self.reads.words(game_id, language, game["state"]),
                                 game["status"])
        except Exception:  # noqa: BLE001 - the report still goes, as the chronicle has it
            body = "\n".join(str(line) for line in report.get("lines") or [])
            return f"{report.get('title') or ''}\n\n{body}\n"

    def _queued(self, key: str) -> bool:
        with self.outbox._session() as session:
            return session.scalars(select(OutboxMessage.id).where(
                OutboxMessage.key == key)).first() is not None

    def _reminders(self, game_id: str, seats: list[Any]) -> None:
        outbox = self.outbox
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
            name = said.timer(status.get("deadline_name") or "")  # "ZAT", not "zat"
            when = time_in_words(deadline, seat.language)
            outbox.enqueue(key=f"remind:{game_id}:{deadline}:{seat.email}",
                           recipient=seat.email, kind="remind", game_id=game_id,
                           player=seat.player, headers=outbox.thread_headers(game_id),
                           subject=w["remind"].format(game=game_id, deadline=when),
                           body=w["remind_body"].format(name=name, deadline=when,
                                                        actions=", ".join(labels))
                           + w["footer"].format(game=game_id))

    def _digests(self) -> None:
        outbox = self.outbox
        now = outbox.clock()
        with outbox._session.begin() as session:
            rows = session.scalars(select(OutboxMessage).where(
                OutboxMessage.status == "digest").order_by(OutboxMessage.id)).all()
            groups: dict[tuple[str, str | None], list[OutboxMessage]] = {}
            for row in rows:
                groups.setdefault((row.recipient, row.game_id), []).append(row)
            languages: dict[str | None, dict[str, str]] = {}  # game → reader → language
            for (recipient, game_id), group in groups.items():
                if now - _aware(group[0].created_at) < DIGEST_EVERY:
                    continue
                if game_id not in languages:  # the subject in the reader's language
                    languages[game_id] = {r.email: r.language for r in readers_in(
                        session.connection(), game_id)} if game_id else {}
                language = languages[game_id].get(recipient, "en")
                for row in group:
                    row.status = "merged"
                body = "\n\n".join(f"{row.subject}\n{row.body}" for row in group)
                session.flush()
                session.execute(outbox._insert({
                    "key": f"digest:{recipient}:{game_id}:{group[0].id}",
                    "recipient": recipient, "kind": "digest", "game_id": game_id,
                    "subject": words(language)["digest"].format(game=game_id), "body": body,
                    "headers": outbox.thread_headers(game_id),
                    # the code of the proposals it tells, as their announcements had it
                    "attachments": [a for row in group for a in row.attachments or []]
                    or None}))

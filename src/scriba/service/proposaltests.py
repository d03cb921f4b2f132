"""Test this proposal: the lab plays the game from its state now, with the proposal adopted
and without it, and tells what differs (:mod:`.lab.proposal`, in words by :mod:`.lab.tell`).

One test per proposal and game state (the game's last event when it was asked): asking
again returns the running or finished one, and a new event in the game makes a new test
possible. Each is a row of ``proposal_tests`` with its progress and report. The job runs
beside the request, as snapshots are written: a thread that hands the runs to spawned
worker processes, writes their progress and, at the end, the report (and queues it by mail
for whoever asked by letter). A test left "running" by a process that died is seen as
failed once its bound is past, and may be started again.

The bounds are settings (environment variables, as the rate limits'):
``SCRIBA_LAB_GAMES`` (runs of each kind, default 4), ``SCRIBA_LAB_TURNS`` (turns a run, 40),
``SCRIBA_LAB_SECONDS`` (the wall time, 120), ``SCRIBA_LAB_WORKERS`` (processes, at most 2
and at most the machine's cores), ``SCRIBA_LAB_SEED`` (the bots' seed, 1) and
``SCRIBA_LAB_BOTS`` (their strategies, by comma: ``random,for``; default the lab's own).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from scriba.service.errors import InvalidInput
from scriba.service.lab import tell
from scriba.service.lab.bots import STRATEGIES
from scriba.service.letters import LetterContext
from scriba.service.messages import translate
from scriba.store.eventstore import EventStore
from scriba.store.models import ProposalTestRow

GRACE_S = 60.0  # past its bound by this much, a "running" test's process is gone
PROGRESS_EVERY_S = 1.0  # progress written at most this often

MESSAGES = {
    "closed": "Proposal {proposal} is not open: only an open proposal can be tested.",
}


class _Taken(Exception):
    """Another request started the failed test again first."""


@dataclass(frozen=True)
class Bounds:
    games: int = 4
    turns: int = 40
    seconds: float = 120.0
    workers: int = 2
    seed: int = 1
    bots: tuple[str, ...] = ()  # none: the lab's own choice

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> Bounds:
        def number(name: str, default: int, top: int) -> int:
            value = str(settings.get(name) or "").strip()
            return min(int(value), top) if value.isdigit() and int(value) > 0 else default
        workers = min(number("SCRIBA_LAB_WORKERS", 2, 2), os.cpu_count() or 1)
        bots = tuple(b.strip() for b in str(settings.get("SCRIBA_LAB_BOTS") or "").split(",")
                     if b.strip() in STRATEGIES)
        return cls(games=number("SCRIBA_LAB_GAMES", 4, 16),
                   turns=number("SCRIBA_LAB_TURNS", 40, 500),
                   seconds=float(number("SCRIBA_LAB_SECONDS", 120, 600)), workers=workers,
                   seed=number("SCRIBA_LAB_SEED", 1, 2**31), bots=bots[:8])

    def to_dict(self) -> dict[str, Any]:
        return {"games": self.games, "turns": self.turns, "seconds": self.seconds,
                "workers": self.workers, "seed": self.seed, "bots": list(self.bots)}


@dataclass(frozen=True)
class ProposalTest:
    """A test as an interface shows it; ``report`` is the lab's data (None until done),
    ``differences`` the findings of the runs with the proposal the runs without lack."""

    game: str
    proposal: int
    at_seq: int
    status: str  # running | done | failed
    done_turns: int
    total_turns: int
    started: str
    finished: str | None
    bounds: dict[str, Any]
    asked_by: str
    report: dict[str, Any] | None
    differences: list[dict[str, Any]]


class ProposalTests:
    """The proposal tests of one database (built by :func:`.assembly.open_service`).
    ``opener`` opens an in-memory service for each run (the service's own
    ``open_service``: a top-level function, so that spawned workers can be handed it)."""

    def __init__(self, store: EventStore, commands: Any, reads: Any, outbox: Any,
                 opener: Callable[[str], Any], settings: Mapping[str, str] | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.commands, self.reads, self.outbox, self.opener = commands, reads, outbox, opener
        self.bounds = Bounds.from_settings(os.environ if settings is None else settings)
        self.clock = clock or (lambda: datetime.now(UTC))
        self._session = store.session
        # An in-memory database has one connection: a test there runs within the request.
        self._inline = str(store.engine.url) in ("sqlite://", "sqlite:///:memory:")
        self._threads: dict[int, threading.Thread] = {}

    # --- asking ---------------------------------------------------------------------------
    def start(self, game_id: str, number: int | str, by: str,
              notify: LetterContext | None = None) -> ProposalTest:
        """Test proposal ``number`` of the game from its state now, or the test of that
        state already asked for (a failed one is started again). ``by``: who asks;
        ``notify``: the letter that asked, answered with the report when it is done."""
        state = self.reads.load(game_id)
        proposal = self.reads.proposal(game_id, number)
        if proposal.get("status") != "open":
            raise InvalidInput(translate(MESSAGES["closed"], state.language or "en",
                                         proposal=proposal["number"]))
        key = (game_id, int(proposal["number"]), int(state.seq))
        row = self._row(*key)
        if row is not None and self._status(row) != "failed":
            return self._view(row)
        fresh = {"status": "running", "done_turns": 0, "started_at": self.clock(),
                 "total_turns": self.bounds.games * self.bounds.turns * 2,
                 "finished_at": None, "report": None, "asked_by": by[:200],
                 "bounds": self.bounds.to_dict(),
                 "notify": _letter(notify) if notify is not None else None}
        try:
            with self._session.begin() as session:
                if row is None:
                    session.add(ProposalTestRow(game_id=key[0], proposal=key[1],
                                                at_seq=key[2], **fresh))
                else:  # failed: started again, only if nobody did meanwhile
                    claimed = session.execute(update(ProposalTestRow).where(
                        ProposalTestRow.id == row.id,
                        ProposalTestRow.started_at == row.started_at).values(**fresh))
                    if claimed.rowcount != 1:
                        raise _Taken
        except (IntegrityError, _Taken):  # asked twice at once: the other request started it
            return self._view(self._row(*key))
        row = self._row(*key)
        events = [json.loads(line) for line in self.commands.export_game(game_id)]
        if self._inline:
            self._run(row.id, events, key[1])
        else:
            thread = threading.Thread(target=self._run, args=(row.id, events, key[1]),
                                      name=f"scriba-lab-{row.id}", daemon=True)
            self._threads[row.id] = thread
            thread.start()
        return self._view(self._row(*key))

    def get(self, game_id: str, number: int | str) -> ProposalTest | None:
        """The newest test of the proposal, whatever the game's state it started from."""
        with self._session() as session:
            row = session.scalars(select(ProposalTestRow).where(
                ProposalTestRow.game_id == game_id,
                ProposalTestRow.proposal == int(number)).order_by(
                ProposalTestRow.at_seq.desc(), ProposalTestRow.id.desc())).first()
        return self._view(row) if row is not None else None

    def told(self, test: ProposalTest, language: str | None = None) -> list[str]:
        """The test in sentences in ``language`` (default: the game's)."""
        words = self.reads.words(test.game, language)
        lang = words.language
        if test.status == "running":
            return [tell.progress(test.done_turns, test.total_turns, lang)]
        if test.status == "failed" or test.report is None:
            return [tell.failed(lang)]
        return tell.told(test.report, test.differences, words, lang)

    def bound(self, language: str) -> str:
        """What a test plays, and within what time, in a sentence."""
        b = self.bounds
        return tell.bounds(b.games, b.turns, b.seconds, language)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the tests this process runs. Closing the service does not: a test cut
        short by a stopping server is seen as failed after its bound (see ``_status``)."""
        for thread in list(self._threads.values()):
            thread.join(timeout)

    # --- the job --------------------------------------------------------------------------
    def _run(self, row_id: int, events: list[dict[str, Any]], number: int) -> None:
        from scriba.service.lab.proposal import simulate_proposal  # spawns workers: on use

        last = [0.0]

        def progress(done: int, total: int) -> None:
            if time.monotonic() - last[0] >= PROGRESS_EVERY_S or done >= total:
                last[0] = time.monotonic()
                self._write(row_id, done_turns=int(done), total_turns=int(total))

        b = self.bounds
        try:
            report = simulate_proposal(self.opener, events, number, games=b.games,
                                       turns=b.turns, bots=list(b.bots) or None, seed=b.seed,
                                       workers=b.workers, seconds=b.seconds,
                                       progress=progress)
            data = {**report.to_dict(), "differences": report.differences()}
            self._write(row_id, status="done", report=data, finished_at=self.clock(),
                        done_turns=int(report.played))
        except Exception:  # noqa: BLE001 - the test failed; the game is untouched
            logging.getLogger(__name__).exception("the test of proposal %s failed", number)
            self._write(row_id, status="failed", finished_at=self.clock())
        finally:
            self._threads.pop(row_id, None)
        self._mail(row_id)

    def _mail(self, row_id: int) -> None:
        """The report to whoever asked by letter, in the outbox (once: its key)."""
        with self._session() as session:
            row = session.get(ProposalTestRow, row_id)
        if row is None or not row.notify:
            return
        letter = LetterContext(**row.notify)
        test = self._view(row)
        name = self.reads.words(test.game, letter.language).proposal(test.proposal)
        body = "\n\n".join([tell.report_head(name, letter.language),
                             *self.told(test, letter.language)])
        self.outbox.reply(letter, "lab_report", body,
                          key=f"lab:{row.game_id}:{row.proposal}:{row.at_seq}:{row.id}:"
                              f"{row.started_at.isoformat()}")

    # --- rows -----------------------------------------------------------------------------
    def _write(self, row_id: int, **values: Any) -> None:
        with self._session.begin() as session:
            session.execute(update(ProposalTestRow).where(ProposalTestRow.id == row_id)
                            .values(**values))

    def _row(self, game_id: str, number: int, at_seq: int) -> ProposalTestRow | None:
        with self._session() as session:
            return session.scalars(select(ProposalTestRow).where(
                ProposalTestRow.game_id == game_id, ProposalTestRow.proposal == number,
                ProposalTestRow.at_seq == at_seq)).first()

    def _status(self, row: ProposalTestRow) -> str:
        """A running test past its bound (and a grace) is one whose process died."""
        if row.status != "running":
            return row.status
        seconds = float((row.bounds or {}).get("seconds") or self.bounds.seconds)
        started = row.started_at if row.started_at.tzinfo else \
            row.started_at.replace(tzinfo=UTC)
        late = self.clock() - started > timedelta(seconds=seconds + GRACE_S)
        return "failed" if late and row.id not in self._threads else "running"

    def _view(self, row: ProposalTestRow | None) -> ProposalTest:
        assert row is not None  # a row just written or found
        report = dict(row.report) if row.report else None
        differences = list(report.pop("differences", [])) if report else []
        return ProposalTest(
            game=row.game_id, proposal=row.proposal, at_seq=row.at_seq,
            status=self._status(row), done_turns=row.done_turns,
            total_turns=row.total_turns, started=_iso(row.started_at),
            finished=_iso(row.finished_at) if row.finished_at else None,
            bounds=dict(row.bounds or {}), asked_by=row.asked_by, report=report,
            differences=differences)


def _letter(letter: LetterContext) -> dict[str, Any]:
    return {"message_id": letter.message_id, "reply_to": letter.reply_to,
            "language": letter.language, "subject": letter.subject,
            "references": list(letter.references)[-10:], "game_id": letter.game_id,
            "player": letter.player}


def _iso(moment: datetime) -> str:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")

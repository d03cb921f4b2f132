"""A proposal of an existing game tried over the next turns of play ("Test this
proposal", ``scriba simulate GAME --proposal N``): the game's record is imported into an
in-memory service (the one import path, as forks are made), the proposal is resolved now
— adopted in the runs "with", rejected in the runs "without" — through the kernel's own
reactions (the dry run's :func:`~scriba.service.dryrun.resolution`, recorded through the
one write path), and bots play the game's active players on. Each run with the proposal
is paired with the run without it (same seed, same bots): the report is the difference.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scriba.service.dryrun import resolution
from scriba.service.inputs import Outcome
from scriba.service.lab.findings import GameFindings, same
from scriba.service.lab.simulate import Opener, Service, Trace, pair, play_game, seated

if TYPE_CHECKING:
    from scriba.kernel.events import Event
    from scriba.kernel.state import GameState

DEFAULT_BOTS = ["random", "self", "for", "against"]
RUN_ID = "lab"  # the game's id inside a run's own in-memory database


@dataclass
class ProposalReport:
    game: str            # the game's id
    proposal: int        # the proposal's number
    at_seq: int          # the last event of the game the runs start from
    games: int           # runs of each kind asked for
    turns: int           # turns per run asked for
    seed: int
    bots: list[str]
    seconds: float = 0.0
    complete: bool = True  # False when the time bound cut the runs short
    played: int = 0        # game turns played, with and without, in all
    with_proposal: list[GameFindings] = field(default_factory=list)
    without_proposal: list[GameFindings] = field(default_factory=list)

    def differences(self) -> list[dict[str, Any]]:
        """The findings of the runs with the proposal that the paired run without it does
        not have, each with ``game``, the run's number (1…games). A runaway is told
        against its baseline already, so every runaway of a run with it is one."""
        out = []
        for found in self.with_proposal:
            baseline = next((b for b in self.without_proposal if b.game == found.game), None)
            theirs = {same(f) for f in baseline.findings()} if baseline else set()
            out += [{**f, "game": found.game} for f in found.findings()
                    if f["kind"] == "runaway" or same(f) not in theirs]
        return out

    def to_dict(self) -> dict[str, Any]:
        data = {key: getattr(self, key) for key in
                ("game", "proposal", "at_seq", "games", "turns", "seed", "bots", "seconds",
                 "complete", "played")}
        data["with_proposal"] = [f.to_dict() for f in self.with_proposal]
        data["without_proposal"] = [f.to_dict() for f in self.without_proposal]
        return json.loads(json.dumps(data))  # plain data only, as it would be stored

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProposalReport:
        given = {k: v for k, v in data.items() if k not in ("with_proposal", "without_proposal")}
        return cls(**given,
                   with_proposal=[GameFindings.from_dict(f) for f in data["with_proposal"]],
                   without_proposal=[GameFindings.from_dict(f)
                                     for f in data["without_proposal"]])


def simulate_proposal(opener: Opener, events: list[Event], number: int, *, games: int = 4,
                      turns: int = 50, bots: list[str] | None = None, seed: int = 0,
                      workers: int = 1, seconds: float | None = None,
                      progress: Callable[[int, int], None] | None = None) -> ProposalReport:
    """Play the game whose record is ``events`` (its events as :meth:`GameReads.log` or
    the store give them, oldest first; an export's lines parsed are the same) ``games``
    times on with the proposal ``number`` adopted now, and as often with it rejected,
    ``turns`` turns each, by ``bots`` (strategies given to the active players in turn),
    in ``workers`` spawned processes (1: in this one). ``seconds`` bounds the wall time:
    the runs finished by then are reported, ``complete`` False. ``progress(done, total)``
    is called here with the turns played as runs finish."""
    strategies = list(bots or DEFAULT_BOTS)
    first = events[0]
    report = ProposalReport(game=str(first["payload"].get("game_id") or first.get("game")
                                     or ""),
                            proposal=number, at_seq=int(events[-1]["seq"]), games=games,
                            turns=turns, seed=seed, bots=strategies)
    started = time.perf_counter()
    # the wall clock: the spawned workers compare it with their own
    deadline = None if seconds is None else time.time() + seconds
    jobs = [(opener, events, number, index, adopted, turns, strategies, seed, deadline)
            for index in range(1, games + 1) for adopted in (True, False)]
    total = turns * len(jobs)
    results: list[tuple[bool, GameFindings, Trace] | None] = []
    if progress is not None:
        progress(0, total)
    if workers > 1 and len(jobs) > 1:
        context = multiprocessing.get_context("spawn")  # no forked sandbox pool or database
        with context.Pool(min(workers, len(jobs))) as pool:
            pending = [pool.apply_async(run_once, job) for job in jobs]
            for handle in pending:
                left = None if deadline is None else max(0.0, deadline - time.time())
                try:
                    results.append(handle.get(left))
                except multiprocessing.TimeoutError:
                    results.append(None)
                _told(progress, results, turns, total)
            if any(r is None for r in results):
                pool.terminate()  # runs past the bound are not waited for
    else:
        for job in jobs:
            late = deadline is not None and time.time() > deadline
            results.append(None if late else run_once(*job))
            _told(progress, results, turns, total)
    _gather(report, results)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _told(progress: Callable[[int, int], None] | None,
          results: list[tuple[bool, GameFindings, Trace] | None], turns: int,
          total: int) -> None:
    if progress is not None:  # each run's share counts once it is over (ended early or cut)
        progress(turns * len(results), total)


def _gather(report: ProposalReport,
            results: list[tuple[bool, GameFindings, Trace] | None]) -> None:
    """Pair each run with the proposal with its run without it; a run cut short (by the
    time bound) is left out, with its pair."""
    report.complete = all(r is not None and CUT not in r[1].internal_errors for r in results)
    for index in range(0, len(results), 2):
        with_, without = results[index], results[index + 1]
        if with_ is None or without is None or CUT in with_[1].internal_errors \
                or CUT in without[1].internal_errors:
            continue
        pair(with_[1], with_[2], without[1], without[2])
        report.with_proposal.append(with_[1])
        report.without_proposal.append(without[1])
        report.played += with_[1].turns + without[1].turns


CUT = "the time bound was reached"


def simulate_game(opener: Opener, events: list[Event], *, games: int = 1, turns: int = 30,
                  bots: list[str] | None = None, seed: int = 0
                  ) -> tuple[list[GameFindings], float]:
    """The game whose record is ``events`` played on ``games`` times from its current
    state (no proposal decided), one run after the other: the findings and the seconds."""
    started = time.perf_counter()
    found = [run_once(opener, events, None, index, False, turns, list(bots or DEFAULT_BOTS),
                      seed, None)[1] for index in range(1, games + 1)]
    return found, time.perf_counter() - started


def run_once(opener: Opener, events: list[Event], number: int | None, index: int,
             adopted: bool,
             turns: int, strategies: list[str], seed: int,
             deadline: float | None) -> tuple[bool, GameFindings, Trace]:
    """One run: the game imported into a new in-memory service, the proposal resolved
    now (adopted or not), then played. A top-level function: spawned workers run it."""
    service = opener("sqlite://")
    try:
        state = _imported(service, events)
        ruleset = state.ruleset
        found = GameFindings(ruleset, index, seed, [])
        try:
            if number is not None:
                _resolve_now(service, number, adopted)
        except Exception as error:  # noqa: BLE001 - a finding: the proposal could not be decided
            found.internal_errors.append(f"resolving proposal {number}: {error!r}"[:300])
            return adopted, found, ({}, {}, {})
        players = list(service.reads.load(RUN_ID).active_players())
        bots = seated(players, strategies, seed, index)

        def on_turn() -> None:
            if deadline is not None and time.time() > deadline:
                raise _Cut
        try:
            trace = play_game(service, RUN_ID, found, bots, turns, on_turn)
        except _Cut:
            found.internal_errors.append(CUT)
            trace = ({}, {}, {})
        return adopted, found, trace
    finally:
        service.close()


class _Cut(BaseException):
    """The time bound passed during a run (a BaseException: the run does not report it
    as an internal error of the game)."""


def _imported(service: Service, events: list[Event]) -> GameState:
    lines = [json.dumps(e, ensure_ascii=False, sort_keys=True) for e in events]
    return service.commands.import_game(lines, RUN_ID)


def _resolve_now(service: Service, number: int, adopted: bool) -> None:
    """Record the proposal resolved now as the kernel would record it (see
    :func:`~scriba.service.dryrun.resolution`), through the write path's one way to
    record what a service decides (:meth:`Commands.record`)."""
    commands = service.commands

    def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
        _, produced = resolution(commands.engine, state, number, now, adopted)
        return produced, Outcome(True, "", produced)
    commands.record(RUN_ID, decide)

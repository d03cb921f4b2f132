"""Many writers, one game: N OS processes voting in one Agora game for a few seconds.

What it shows: with the per-game lock no command fails for contention, every input is
decided, every acknowledged command's events are stored and nothing else is, and the
throughput with N writers stays near that of one: each vote is decided and committed by
its own writer, one at a time, so N writers cannot beat one by much; the price of the
hand-over is what is measured. ``scriba bench --json`` reports it as
``writers8_votes_per_s`` / ``writers1_votes_per_s``.
"""

from __future__ import annotations

import multiprocessing
import queue
import time
import uuid
from typing import Any

PROPOSALS = 20  # open referendums the writers vote on
VOTERS = 8  # players voting, however many processes cast their votes: one game for all
START = "2026-07-06T12:00:00Z"


def _voter(index: int) -> str:
    return f"Voter{index}"


def setup_game(db_url: str, processes: int, game_id: str | None = None,
               proposals: int = PROPOSALS) -> tuple[str, int]:
    """An Agora game with one voter per process and ``proposals`` distributed proposals,
    numbered 9001…; returns the game's id and its last seq."""
    from scriba.service import open_service

    service = open_service(db_url)
    try:
        game_id = game_id or f"writers-{uuid.uuid4().hex[:8]}"
        voters = [_voter(i) for i in range(processes)]
        service.commands.create_game("agora", game_id=game_id, start=START,
                                     players=["Officer", *voters],
                                     offices={"Assessor": "Officer", "Promotor": "Officer"})
        for number in range(1, proposals + 1):
            outcome = service.commands.perform(game_id, "Officer", "submit", {
                "title": f"Proposal {number}", "text": "Amend the rules. " * 20,
                "ai": "1.0", "number": 9000 + number,
                "changes": [{"enact": {"title": f"Rule {number}", "text": "Be nice."}}]})
            assert outcome.accepted, outcome.message
            outcome = service.commands.perform(game_id, "Officer", "distribute",
                                               {"proposal": 9000 + number, "quorum": 1})
            assert outcome.accepted, outcome.message
        return game_id, service.reads.load(game_id).seq
    finally:
        service.close()


def _voters_of(index: int, processes: int, voters: int) -> list[str]:
    """The voters writer ``index`` of ``processes`` votes for, in turn: the same votes,
    by the same players, whether one process casts them or eight."""
    return [_voter(i) for i in range(index, max(voters, processes), processes)]


def _worker(db_url: str, game_id: str, index: int, seconds: float, proposals: int,
            start: Any, results: Any, processes: int = 1, voters: int = 1) -> None:
    from scriba.service import open_service

    service = open_service(db_url)
    accepted = refused = failed = events = 0
    cpu = time.process_time()
    try:
        # Warm as a running server is, before the clock starts: the rules inspected and
        # compiled in this process's sandbox worker (~0.1 s, paid once per process). A
        # read that runs the rules' reactions (a proposal's dry run), writing nothing:
        # a warm-up vote could be decided by another writer and leave this one cold.
        mine = _voters_of(index, processes, voters)
        service.reads.dry_run(game_id, 9001)
        start.wait()
        cpu = time.process_time()
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            n += 1
            try:
                outcome = service.commands.perform(
                    game_id, mine[n % len(mine)], "vote",
                    {"proposal": 9001 + (index + n) % proposals,
                     "choice": ("FOR", "AGAINST", "PRESENT")[n % 3]},
                    request_id=f"w{index}-{n}")
            except Exception:  # noqa: BLE001 - counted: the benchmark reports failures
                failed += 1
                continue
            accepted += outcome.accepted
            refused += not outcome.accepted
            events += len(outcome.events)
    finally:
        results.put({"accepted": accepted, "refused": refused, "failed": failed,
                     "events": events, "cpu_s": time.process_time() - cpu})
        service.close()


def writers_benchmark(db_url: str, processes: int, seconds: float,
                      proposals: int = PROPOSALS, voters: int = VOTERS) -> dict[str, Any]:
    """Votes per second with ``processes`` writers on one game, and the correctness facts.

    ``acknowledged_events`` counts the events of every answered command; it must equal
    ``stored_events`` (the game's log since set-up), and
    ``undecided_inbound`` must be 0. Each writer warms up before the clock starts (a
    server's start-up: its sandbox worker spawned, the rules compiled), writing nothing.
    """
    from scriba.service import open_service

    voters = max(voters, processes)
    game_id, setup_seq = setup_game(db_url, voters, proposals=proposals)
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(processes + 1)
    results = context.Queue()
    workers = [context.Process(target=_worker,
                               args=(db_url, game_id, i, seconds, proposals, start, results,
                                     processes, voters))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    start.wait(timeout=300)
    began = time.monotonic()
    totals = {"accepted": 0, "refused": 0, "failed": 0, "events": 0, "cpu_s": 0.0}
    for _ in workers:
        try:
            part = results.get(timeout=seconds + 300)
        except queue.Empty:
            break
        for key in totals:
            totals[key] += part[key]
    elapsed = time.monotonic() - began
    for worker in workers:
        worker.join(timeout=60)
    reader = open_service(db_url)
    try:
        stored = reader.commands.store.count_events(game_id) - setup_seq
        rows = reader.commands.store.inbound(game_id)
        undecided = sum(1 for row in rows if row["status"] == "received")
    finally:
        reader.close()
    return {"processes": processes, "seconds": round(elapsed, 2),
            "votes_per_s": round(totals["accepted"] / seconds, 1),
            "accepted": totals["accepted"], "refused": totals["refused"],
            "failed": totals["failed"], "undecided_inbound": undecided,
            "acknowledged_events": totals["events"], "stored_events": stored,
            # The writers' own CPU (their rule workers apart) per accepted vote: each vote
            # is read and folded by every writer, so N writers spend more than one.
            "writer_cpu_ms_per_vote": round(1000 * totals["cpu_s"]
                                            / max(totals["accepted"], 1), 2),
            "game_id": game_id}


def main(argv: list[str] | None = None) -> None:
    """``python -m scriba.bench.writers [DB_URL] [SECONDS]``: 1 writer, then 8, as JSON."""
    import json
    import sys
    import tempfile

    args = sys.argv[1:] if argv is None else argv
    url = args[0] if args and args[0] else \
        f"sqlite:///{tempfile.mkdtemp(prefix='scriba-writers-')}/w.db"
    seconds = float(args[1]) if len(args) > 1 else 4.0
    from scriba.store import migrate

    migrate(url)
    figures = {f"writers{n}": writers_benchmark(url, n, seconds) for n in (1, 8)}
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()

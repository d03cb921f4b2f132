"""Many games, one service: N threads each voting in its own Agora game for a few seconds.

What it shows: a server hosts many groups, and its sandbox workers must follow them. With
one thread per game, the total votes per second of 16 busy games should be at least that
of one (issue 18: "sixteen busy games at least as fast in total as one"): the games share
no lock, so the only thing between them is the pool of sandbox workers. Also reported:
the workers started while the clock ran (a worker started cold has none of the game's
view parts and compiles the rules again), and the p50 of votes alternating between two
games next to the same votes cast in blocks (a game that loses its warm worker to the
other at every switch pays for it).

One process, a SQLite file, the real sandbox (:class:`~scriba.rulecode.host.SandboxHost`);
the games are set up as :mod:`scriba.bench.writers` sets up its one.
"""

from __future__ import annotations

import statistics
import threading
import time
from typing import Any

from scriba.bench.writers import PROPOSALS, setup_game
from scriba.service import Service, open_service

VOTERS = 8  # players per game, voting in turn
BLOCK = 20  # votes in one game before the other's, in the block half of the comparison


def _spawns(service: Service) -> int:
    """Worker processes the service's pool has started so far."""
    return int(service.commands.host.pool.spawns)


def _vote(service: Service, game_id: str, n: int) -> float:
    """One vote (the n-th of this game's voter); its latency in seconds."""
    started = time.perf_counter()
    outcome = service.commands.perform(game_id, f"Voter{n % VOTERS}", "vote",
                              {"proposal": 9001 + n % PROPOSALS,
                               "choice": ("FOR", "AGAINST", "PRESENT")[n % 3]})
    elapsed = time.perf_counter() - started
    assert outcome.accepted, outcome.message
    return elapsed


def _rss_mb(pid: int) -> float:
    """A worker's resident memory (Linux; 0 where /proc does not say)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _warm(service: Service, game_ids: list[str]) -> None:
    """As a running server is before the clock starts: each game read and its rules
    compiled in a worker (a dry run reads and runs the reactions, writing nothing)."""
    for game_id in game_ids:
        service.reads.dry_run(game_id, 9001)


def busy_games(db_url: str, game_ids: list[str], seconds: float) -> dict[str, Any]:
    """One thread per game, voting for ``seconds``: total votes/s, the vote p50/p99 and
    the workers started meanwhile."""
    service = open_service(db_url)
    try:
        warmed = threading.Barrier(len(game_ids))
        start = threading.Barrier(len(game_ids) + 1)
        latencies: list[list[float]] = [[] for _ in game_ids]
        failures: list[str] = []

        def voter(index: int) -> None:
            # All at once, twice, as busy games are: once all are busy, each has a worker.
            _warm(service, game_ids[index:index + 1])
            warmed.wait()
            _warm(service, game_ids[index:index + 1])
            start.wait()
            deadline = time.monotonic() + seconds
            n = 0
            try:
                while time.monotonic() < deadline:
                    n += 1
                    latencies[index].append(_vote(service, game_ids[index], n))
            except Exception as exc:  # noqa: BLE001 - reported: a failure spoils the figure
                failures.append(repr(exc))

        threads = [threading.Thread(target=voter, args=(i,)) for i in range(len(game_ids))]
        for thread in threads:
            thread.start()
        start.wait()
        spawned = _spawns(service)
        began, cpu = time.monotonic(), time.process_time()
        for thread in threads:
            thread.join()
        elapsed, cpu = time.monotonic() - began, time.process_time() - cpu
        spawned = _spawns(service) - spawned
        every = sorted(x for mine in latencies for x in mine)
        rss = [_rss_mb(pid) for pid in service.commands.host.pool.pids()]
        return {"games": len(game_ids), "seconds": round(elapsed, 2),
                "votes_per_s": round(len(every) / elapsed, 1),
                "vote_p50_ms": round(1000 * every[len(every) // 2], 2) if every else None,
                "vote_p99_ms": round(1000 * every[int(0.99 * (len(every) - 1))], 2)
                if every else None,
                # The server process's CPU (all threads; its workers' not counted): with
                # one GIL, 1000 / this is about as many votes/s as it can decide.
                "server_cpu_ms_per_vote": round(1000 * cpu / len(every), 2) if every else None,
                "workers_started": spawned, "workers_at_end": len(rss),
                "worker_rss_mb": round(statistics.mean(rss), 1) if rss else None,
                "failures": failures[:3]}
    finally:
        service.close()


def alternating_games(db_url: str, first: str, second: str,
                      rounds: int = 4) -> dict[str, Any]:
    """The p50 of votes alternating between two games, one vote each in turn, and of the
    same number of votes in blocks of BLOCK per game; in one thread, so that nothing but
    the switch differs. The two halves take turns, ``rounds`` times (a noisy machine
    slows both alike)."""
    service = open_service(db_url)
    try:
        _warm(service, [first, second])
        blocks: list[float] = []
        alternating: list[float] = []
        n = 0
        for _ in range(rounds):
            for game_id in (first, second):
                for _ in range(BLOCK):
                    n += 1
                    blocks.append(_vote(service, game_id, n))
            for _ in range(BLOCK):
                for game_id in (first, second):
                    n += 1
                    alternating.append(_vote(service, game_id, n))
        return {"blocks_p50_ms": round(1000 * statistics.median(blocks), 2),
                "alternating_p50_ms": round(1000 * statistics.median(alternating), 2),
                "votes": len(blocks) + len(alternating)}
    finally:
        service.close()


def games_benchmark(db_url: str, games: int = 16, seconds: float = 4.0) -> dict[str, Any]:
    """``games1`` and ``games{games}`` (:func:`busy_games`) on the same games, and the
    alternating-games comparison (:func:`alternating_games`)."""
    game_ids = [setup_game(db_url, VOTERS, game_id=f"games-{i}")[0] for i in range(games)]
    return {"games1": busy_games(db_url, game_ids[:1], seconds),
            f"games{games}": busy_games(db_url, game_ids, seconds),
            "alternating": alternating_games(db_url, game_ids[0], game_ids[1])}


def main(argv: list[str] | None = None) -> None:
    """``python -m scriba.bench.games [DB_URL] [SECONDS] [GAMES]``: the figures as JSON."""
    import json
    import sys
    import tempfile

    args = sys.argv[1:] if argv is None else argv
    url = args[0] if args and args[0] else \
        f"sqlite:///{tempfile.mkdtemp(prefix='scriba-games-')}/g.db"
    seconds = float(args[1]) if len(args) > 1 else 4.0
    games = int(args[2]) if len(args) > 2 else 16
    from scriba.store import migrate

    migrate(url)
    print(json.dumps(games_benchmark(url, games, seconds), indent=1))


if __name__ == "__main__":
    main()

"""The sandbox's workers follow the games (issue 18, "workers sized to the work"): a game's
requests go to the worker that holds its view parts, the pool grows to the games deciding
at once (up to its maximum) and shrinks only after idling, and a worker that dies is
still replaced."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from scriba.rulecode.host import SandboxHost
from scriba.rulecode.pool import WorkerPool
from scriba.rulecode.viewparts import EncodedParts, PartStore, views_for

# Stopped by the command's time: a request that keeps its worker busy that long.
LOOP = "def check(game, command):\n    n = 0\n    for i in range(1000000000):\n        n += 1\n"
FAST = "def check(game, command):\n    return None\n"


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    workers = WorkerPool(size=2, max_size=3, wall_clock=20)
    yield workers
    workers.close()


def _view(game: str, seq: int = 1) -> dict[str, Any]:
    return {"game_id": game, "seq": seq, "players": {"Anna": {"points": seq}}}


class Sender:
    """Sends views to a pool as a host does, noting the parts each request carried."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool
        self.encoded = EncodedParts()
        self.sent: list[list[str]] = []

    def send(self, game: str, view: dict[str, Any]) -> None:
        def prepare(mirror: PartStore[None], request: dict[str, Any],
                    reset: bool = False) -> tuple[dict[str, Any], bytes]:
            views, lines = views_for([view], mirror, self.encoded, reset)
            self.sent.append(views["send"])
            return {**request, **views}, lines

        answer = self.pool.request({"op": "parts"}, prepare=prepare, affinity=game)
        assert answer.get("ok"), answer


def _pid(pool: WorkerPool, game: str | None) -> int:
    return pool.request({"op": "ping"}, affinity=game)["pid"]


def test_a_games_requests_go_to_the_worker_that_holds_its_parts(pool: WorkerPool) -> None:
    sender = Sender(pool)
    for _ in range(3):  # interleaved: neither game takes the other's worker
        sender.send("A", _view("A"))
        sender.send("B", _view("B"))
    assert [len(keys) for keys in sender.sent] == [1, 1, 0, 0, 0, 0]  # each sent once
    assert _pid(pool, "A") != _pid(pool, "B")
    assert _pid(pool, "A") == _pid(pool, "A")
    assert pool.stats().spawns == 2


def test_a_game_asked_about_once_takes_an_idle_worker_a_busy_one_gets_its_own() -> None:
    pool = WorkerPool(size=1, max_size=4, wall_clock=20)
    try:
        pids = {_pid(pool, f"G{n}") for n in range(5)}  # each asked once: one worker serves
        assert len(pids) == 1 and pool.stats().spawns == 1
        sender = Sender(pool)
        for _ in range(3):
            sender.send("A", _view("A"))
            sender.send("B", _view("B"))
        # B's first request took A's worker; A, busy, then got one of its own; since then
        # neither game has had to send its part again.
        assert [len(keys) for keys in sender.sent] == [1, 1, 1, 0, 0, 0]
        assert pool.stats().spawns == 2
    finally:
        pool.close()


def test_the_host_names_the_game_of_each_request(pool: WorkerPool) -> None:
    host = SandboxHost(pool)
    for _ in range(2):
        for game in ("A", "B"):
            [result] = host.call([("1", FAST)], ["1"], "check", _view(game), [{}])
            assert result.error is None
    # A worker for each game, holding that game's part and not the other's.
    keys = {game: views_for([_view(game)], PartStore(), EncodedParts())[0]["send"][0]
            for game in "AB"}
    held = sorted(sorted(game for game, key in keys.items() if key in worker.parts.items)
                  for worker in pool._all)
    assert held == [["A"], ["B"]]


def _busy(host: SandboxHost, games: list[str]) -> list[Any]:
    """A request for each game at once, each keeping its worker busy about a second."""
    start = threading.Barrier(len(games))
    results: list[Any] = []

    def run(game: str) -> None:
        start.wait()
        with host.command():
            results.append(host.call([("1", LOOP)], ["1"], "check", _view(game), [{}]))

    threads = [threading.Thread(target=run, args=(game,)) for game in games]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_the_pool_grows_with_the_games_deciding_and_shrinks_only_after_idling() -> None:
    pool = WorkerPool(size=1, max_size=4, wall_clock=20, idle_seconds=3600)
    host = SandboxHost(pool, budget=10 ** 12, command_steps=10 ** 12, command_seconds=1.0)
    try:
        _busy(host, ["A", "B", "C"])
        assert pool.stats().workers == 3
        for game in "ABC":  # idle, but not long enough: each game keeps its worker
            [result] = host.call([("1", FAST)], ["1"], "check", _view(game), [{}])
            assert result.error is None
        assert pool.reap() == 0 and pool.stats().workers == 3 and pool.stats().spawns == 3
        pool.idle_seconds = 0.0  # as if an hour had passed
        assert pool.reap() == 2
        assert pool.stats().workers == 1 == len(pool.pids())  # ``size`` are kept
    finally:
        pool.close()


def test_the_maximum_is_respected_a_caller_waits_or_is_told_the_server_is_busy() -> None:
    pool = WorkerPool(size=1, max_size=2, wall_clock=20)
    host = SandboxHost(pool, budget=10 ** 12, command_steps=10 ** 12, command_seconds=2.0)
    try:
        busy = threading.Thread(target=_busy, args=(host, ["A", "B"]))
        busy.start()
        while busy.is_alive() and (pool.stats().idle or pool.stats().workers < 2):
            threading.Event().wait(0.01)  # until both are taken
        refused = pool.request({"op": "ping"}, timeout=0.05, affinity="C")
        assert "server is busy" in refused["died"]
        waited = pool.request({"op": "ping"}, timeout=20, affinity="C")  # until one is free
        busy.join()
        assert waited.get("ok")
        assert pool.stats().spawns == 2 and len(pool.pids()) == 2
    finally:
        pool.close()


def test_with_the_pool_full_a_new_game_takes_the_worker_idle_longest() -> None:
    pool = WorkerPool(size=1, max_size=2, wall_clock=20)
    try:
        for _ in range(2):  # both games busy: each gets a worker
            first, second = _pid(pool, "A"), _pid(pool, "B")
        assert first != second
        assert _pid(pool, "C") == first  # A's was the least recently used
        assert _pid(pool, "B") == second  # B kept its own
        assert pool.stats().spawns == 2 == len(pool.pids())
    finally:
        pool.close()


def test_a_dead_worker_is_replaced_and_its_game_given_its_parts_again(pool: WorkerPool) -> None:
    sender = Sender(pool)
    sender.send("A", _view("A"))
    os.kill(_pid(pool, "A"), signal.SIGKILL)  # e.g. the OOM killer, while it idled
    # To a new worker, with the part again (at once, or after the dead one failed it).
    sender.send("A", _view("A"))
    assert sender.sent[-1] == sender.sent[0]
    stats = pool.stats()
    assert stats.respawns == 1 and stats.spawns == 2 and stats.workers == 1

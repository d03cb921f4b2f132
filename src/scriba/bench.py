"""Benchmarks that print numbers (``scriba bench``); nothing here asserts a speed.

1. Replay: a long EquiNomic game is played through the service, then its log is folded
   again from scratch — events per second.
2. Vote latency: every vote of that game went through the service on SQLite (a file, as
   in production) — p50 and p99.
3. Hook cost: one tally hook through the sandbox (a worker round trip, view copied in and
   out) next to the same logic in plain Python.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scriba.kernel.events import fold
from scriba.rulecode.host import SandboxHost
from scriba.service.service import Service

PLAYERS = ["Anna", "Bruno", "Carla", "Dario", "Elena"]
TALLY_CODE = """
def tally(game, number):
    votes = game["proposals"][number]["votes"]
    ayes = len([v for v in votes.values() if v["choice"] == "for"])
    noes = len([v for v in votes.values() if v["choice"] == "against"])
    return {"for": ayes, "against": noes, "adopted": ayes * 2 > len(game["active_players"])}
"""


def python_tally(game: dict[str, Any], number: str) -> dict[str, Any]:
    votes = game["proposals"][number]["votes"]
    ayes = len([v for v in votes.values() if v["choice"] == "for"])
    noes = len([v for v in votes.values() if v["choice"] == "against"])
    return {"for": ayes, "against": noes, "adopted": ayes * 2 > len(game["active_players"])}


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def play_long_game(service: Service, turns: int) -> tuple[str, list[float]]:
    game = service.create_game("equinomic", game_id="bench", start="2026-01-01T00:00:00Z",
                               players=PLAYERS).game_id
    vote_latencies: list[float] = []
    for number in range(turns):
        state = service.load(game)
        if state.ended:
            break
        author = state.vars["turn"]
        outcome = service.perform(game, author, "propose", {"changes": [
            {"enact": {"title": f"Regola {number}", "text": f"Testo {number}."}}]})
        proposal = outcome.events[0]["payload"]["number"]
        for voter in PLAYERS:
            if voter == author:
                continue
            # mostly against, so that the game lasts (and points still move)
            choice = "favorevole" if (number + PLAYERS.index(voter)) % 4 == 0 else "contrario"
            started = time.perf_counter()
            service.perform(game, voter, "vote", {"proposal": proposal, "choice": choice})
            vote_latencies.append(time.perf_counter() - started)
    return game, vote_latencies


def measure_hook(host: SandboxHost, calls: int) -> tuple[float, float]:
    game = {
        "active_players": [f"P{i}" for i in range(50)],
        "proposals": {"1": {"votes": {f"P{i}": {"choice": "for" if i % 3 else "against"}
                                      for i in range(50)}}},
        "players": {f"P{i}": {"status": "active", "vars": {"points": i}} for i in range(50)},
    }
    order = [("1", TALLY_CODE)]
    host.call(order, ["1"], "tally", game, ["1"])  # warm: compiled and cached in the worker
    started = time.perf_counter()
    for _ in range(calls):
        host.call(order, ["1"], "tally", game, ["1"])
    sandboxed = (time.perf_counter() - started) / calls
    started = time.perf_counter()
    for _ in range(calls):
        python_tally(game, "1")
    plain = (time.perf_counter() - started) / calls
    return sandboxed, plain


def run(turns: int = 150, hook_calls: int = 2000,
        say: Callable[[str], None] = print) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        service = Service(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            game, latencies = play_long_game(service, turns)
            events = service.log(game)
            started = time.perf_counter()
            replayed = fold(events)
            fold_seconds = time.perf_counter() - started
            assert replayed.to_json() == service.load(game).to_json()
            started = time.perf_counter()
            service.replay(game)
            load_seconds = time.perf_counter() - started
            sandboxed, plain = measure_hook(service.host, hook_calls)
        finally:
            service.close()
    figures = {
        "events": len(events),
        "replay_events_per_s": len(events) / fold_seconds,
        "load_and_replay_events_per_s": len(events) / load_seconds,
        "votes": len(latencies),
        "vote_p50_ms": 1000 * statistics.median(latencies),
        "vote_p99_ms": 1000 * _percentile(latencies, 0.99),
        "hook_sandbox_ms": 1000 * sandboxed,
        "hook_python_ms": 1000 * plain,
    }
    say(f"replay: {figures['events']} events, {figures['replay_events_per_s']:,.0f} events/s "
        f"folded, {figures['load_and_replay_events_per_s']:,.0f} events/s read from SQLite "
        "and folded")
    say(f"vote through the service on SQLite: {figures['votes']} votes, "
        f"p50 {figures['vote_p50_ms']:.2f} ms, p99 {figures['vote_p99_ms']:.2f} ms")
    say(f"one hook call (tally of 50 votes): sandbox {figures['hook_sandbox_ms']:.3f} ms, "
        f"plain Python {figures['hook_python_ms']:.4f} ms "
        f"({figures['hook_sandbox_ms'] / figures['hook_python_ms']:.0f}x)")
    return figures

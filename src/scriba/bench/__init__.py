"""Benchmarks that print numbers (``scriba bench``); nothing here asserts a speed. Kept
apart from the product: nothing in Scriba imports this package but the ``bench`` command.

1. Replay: a long EquiNomic game is played through the service, then its log is folded
   again from scratch — events per second.
2. Vote latency: every vote of that game went through the service on SQLite (a file, as
   in production) — p50 and p99.
3. Hook cost: one tally hook through the sandbox (a worker round trip, view copied in and
   out) next to the same logic in plain Python.
4. What a player may do now, mid-game, in five bundled rulesets (:mod:`.actions`).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scriba.bench.actions import actions_ms_by_ruleset
from scriba.kernel.events import fold
from scriba.rulecode.host import SandboxHost
from scriba.service import Service, open_service

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
    game = service.commands.create_game("equinomic", game_id="bench", start="2026-01-01T00:00:00Z",
                                        players=PLAYERS).game_id
    vote_latencies: list[float] = []
    for number in range(turns):
        state = service.reads.load(game)
        if state.ended:
            break
        author = state.vars["turn"]
        outcome = service.commands.perform(game, author, "propose", {"changes": [
            {"enact": {"title": f"Regola {number}", "text": f"Testo {number}."}}]})
        proposal = outcome.events[0]["payload"]["number"]
        for voter in PLAYERS:
            if voter == author:
                continue
            # mostly against, so that the game lasts (and points still move)
            choice = "favorevole" if (number + PLAYERS.index(voter)) % 4 == 0 else "contrario"
            started = time.perf_counter()
            service.commands.perform(game, voter, "vote", {"proposal": proposal, "choice": choice})
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
        service = open_service(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            game, latencies = play_long_game(service, turns)
            events = service.reads.log(game)
            started = time.perf_counter()
            replayed = fold(events)
            fold_seconds = time.perf_counter() - started
            assert replayed.to_json() == service.reads.load(game).to_json()
            started = time.perf_counter()
            service.reads.replay(game)
            load_seconds = time.perf_counter() - started
            actions = actions_ms_by_ruleset(service)
            sandboxed, plain = measure_hook(service.commands.host, hook_calls)
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
    figures["actions_ms_by_ruleset"] = actions
    say(f"replay: {figures['events']} events, {figures['replay_events_per_s']:,.0f} events/s "
        f"folded, {figures['load_and_replay_events_per_s']:,.0f} events/s read from SQLite "
        "and folded")
    say(f"vote through the service on SQLite: {figures['votes']} votes, "
        f"p50 {figures['vote_p50_ms']:.2f} ms, p99 {figures['vote_p99_ms']:.2f} ms")
    say(f"one hook call (tally of 50 votes): sandbox {figures['hook_sandbox_ms']:.3f} ms, "
        f"plain Python {figures['hook_python_ms']:.4f} ms "
        f"({figures['hook_sandbox_ms'] / figures['hook_python_ms']:.0f}x)")
    say("what a player may do now, mid-game, per player: " + ", ".join(
        f"{ruleset} {ms:.1f} ms" for ruleset, ms in actions.items()))
    return figures


# --- the machine-readable benchmark (``scriba bench --json``) -------------------------
SIZES = (100, 1000, 5000)


def floor_insert_ms(db_url: str, rows: int = 300) -> float:
    """p50 of one INSERT+COMMIT of an events-shaped row through SQLAlchemy Core, on a
    connection set up as the store's are (same journal mode, same durability)."""
    import json

    from sqlalchemy import JSON, Column, Integer, MetaData, String, Table

    from scriba.store.database import make_engine

    engine = make_engine(db_url)
    table = Table("bench_floor", MetaData(), Column("id", Integer, primary_key=True),
                  Column("game_id", String(64)), Column("seq", Integer),
                  Column("type", String(64)), Column("time", String(32)),
                  Column("actor", String(200)), Column("payload", JSON))
    table.create(engine, checkfirst=True)
    payload = json.loads('{"proposal": 12, "player": "Anna", "choice": "for", "data": {}}')
    samples = []
    with engine.connect() as connection:
        for seq in range(rows):
            started = time.perf_counter()
            connection.execute(table.insert(), {"game_id": "floor", "seq": seq,
                                                "type": "vote_cast", "time": "2026-01-01T00:00:00Z",
                                                "actor": "Anna", "payload": payload})
            connection.commit()
            samples.append(time.perf_counter() - started)
    table.drop(engine)
    engine.dispose()
    return 1000 * statistics.median(samples)


def vote_latencies_in_agora(service: Service, game_ids: list[str],
                            proposals: int = 10) -> dict[str, list[float]]:
    """Votes timed in Agora games: ``proposals`` new ones submitted, distributed and voted
    on in each game, the games taken in turn vote by vote, so that a slow moment of the
    machine weighs on every size alike instead of on whichever was being measured."""
    from scriba.bench.sizes import AGORA_PLAYERS

    numbers: dict[str, list[int]] = {game_id: [] for game_id in game_ids}
    for game_id in game_ids:
        for index in range(proposals):
            outcome = service.commands.perform(game_id, AGORA_PLAYERS[index % 5], "submit", {
                "title": f"Bench {index}", "text": "Amend Rule 869 to read ...", "ai": "1.0",
                "changes": [{"amend": {"rule": "869", "text": "Bench text."}}]})
            assert outcome.accepted, outcome.message
            number = outcome.events[0]["payload"]["number"]
            assert service.commands.perform(game_id, "Murphy", "distribute",
                                            {"proposal": number}).accepted
            numbers[game_id].append(number)
    samples: dict[str, list[float]] = {game_id: [] for game_id in game_ids}
    for index in range(proposals):
        for voter in AGORA_PLAYERS:
            for game_id in game_ids:
                started = time.perf_counter()
                outcome = service.commands.perform(game_id, voter, "vote", {
                    "proposal": numbers[game_id][index], "choice": "FOR"})
                samples[game_id].append(time.perf_counter() - started)
                assert outcome.accepted, outcome.message
    return samples


def replay_figures(service: Service, game_id: str, rounds: int = 5) -> dict[str, float]:
    """Events per second: read + fold, fold alone, and a raw SELECT + json decode.

    Each is timed ``rounds`` times, interleaved, and the best kept: on a shared machine a
    single timing mostly measures the neighbours, and the ratio of two single timings is
    noise."""
    import json

    from sqlalchemy import text

    from scriba.store.bulk import collector_paused

    engine = service.commands.store.engine
    events = service.reads.log(game_id)
    replay_s = fold_s = raw_s = float("inf")
    rows: list[Any] = []
    for _ in range(rounds):
        started = time.perf_counter()
        service.reads.replay(game_id)
        replay_s = min(replay_s, time.perf_counter() - started)
        started = time.perf_counter()
        fold(events)
        fold_s = min(fold_s, time.perf_counter() - started)
        started = time.perf_counter()
        # The same rows, under the same conditions as the replay (collector paused, see
        # scriba.store.bulk), so that the ratio compares the read paths, not GC pauses.
        with collector_paused(), engine.connect() as connection:
            rows = [(seq, type_, time_, actor, json.loads(payload)) for seq, type_, time_,
                    actor, payload in connection.execute(text(
                        "SELECT seq, type, time, actor, payload FROM events "
                        "WHERE game_id = :g ORDER BY seq"), {"g": game_id})]
        raw_s = min(raw_s, time.perf_counter() - started)
    assert len(rows) == len(events)  # both read the same rows
    return {"replay_events_per_s": len(events) / replay_s,
            "fold_events_per_s": len(events) / fold_s,
            "raw_read_events_per_s": len(rows) / raw_s}


def _writers_figures(db_url: str, prefix: str) -> dict[str, Any]:
    """1 and 8 writers on one game, taken in turn twice, the better of each kept (on a
    shared machine one timing of 4 s mostly measures the neighbours); and, over all four
    runs, what must be 0: votes that failed, inputs left undecided, and events stored
    that no answer acknowledged (or acknowledged and not stored)."""
    from scriba.bench.writers import writers_benchmark

    figures: dict[str, Any] = {f"{prefix}_failed": 0, f"{prefix}_undecided": 0,
                               f"{prefix}_events_unmatched": 0}
    for processes in (8, 1, 8, 1):
        result = writers_benchmark(db_url, processes, 4.0)
        key = f"{prefix}{processes}_votes_per_s"
        figures[key] = max(figures.get(key, 0.0), result["votes_per_s"])
        figures[f"{prefix}_failed"] += result["failed"]
        figures[f"{prefix}_undecided"] += result["undecided_inbound"]
        figures[f"{prefix}_events_unmatched"] += abs(result["stored_events"]
                                                     - result["acknowledged_events"])
    return figures


def run_json(turns: int = 100, hook_calls: int = 1000,
             sizes: tuple[int, ...] = SIZES, host: bool = True,
             postgres: str | None = None) -> dict[str, Any]:
    """Every figure, measured in one run: one game on one database file, then (``host``)
    many games over HTTP (:mod:`scriba.bench.host`); given a PostgreSQL URL, the writers
    and 16 games served by 1 and 2 processes on it too."""
    from scriba.bench.corrections import correction_figures
    from scriba.bench.host import run as host_figures
    from scriba.bench.host import servers_on_postgres
    from scriba.bench.open import vote_ms_by_open
    from scriba.bench.sizes import build_agora_game

    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        db_url = f"sqlite:///{Path(folder) / 'bench.db'}"
        service = open_service(db_url)
        try:
            figures["floor_insert_ms"] = floor_insert_ms(db_url)
            game, latencies = play_long_game(service, turns)
            figures.update(correction_figures(service, game, latencies))
            figures["vote_p50_ms"] = 1000 * statistics.median(latencies)
            figures["vote_p99_ms"] = 1000 * _percentile(latencies, 0.99)
            figures["votes"] = len(latencies)
            for size in sizes:
                build_agora_game(service, f"agora-{size}", size)
            by_game = vote_latencies_in_agora(service, [f"agora-{size}" for size in sizes])
            figures["vote_ms_by_size"] = {
                str(size): 1000 * statistics.median(by_game[f"agora-{size}"])
                for size in sizes}
            figures.update(replay_figures(service, f"agora-{max(sizes)}"))
            figures["actions_ms_by_ruleset"] = actions_ms_by_ruleset(service)
            sandboxed, plain = measure_hook(service.commands.host, hook_calls)
            figures["hook_sandbox_ms"] = 1000 * sandboxed
            figures["hook_python_ms"] = 1000 * plain
        finally:
            service.close()
        figures.update(_writers_figures(db_url, "writers"))
        figures["vote_ms_by_open"] = vote_ms_by_open(db_url=db_url)
    if host:  # many games over HTTP against a real server (minutes)
        figures.update(host_figures(say=lambda _line: None))
    if postgres:
        figures.update(_writers_figures(postgres, "pg_writers"))
        figures["pg_games16_votes_per_s_by_servers"] = servers_on_postgres(
            postgres, say=lambda _line: None)
    return figures

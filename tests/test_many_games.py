"""Many games at once on one database: 32 writers across 16 games, two services (as two
server processes) and their snapshot writers busy all the while — no request fails and
none waits more than a few seconds (no lock is taken holding another in the opposite
order), and every game's replay equals its live state. Real SQLite file and PostgreSQL."""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

import pytest

from scriba.rulesets import load_ruleset

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GAMES = 16
COMMANDS = 12  # per writer
# The longest any request may wait: 10 s on a quiet 2-core machine; on a machine loaded
# by other work every wait grows alike, so the bound is also 20 times the median wait.
# A lock taken in the opposite order would stall writers for the lock's whole timeout.
WAIT_BOUND_S = 10.0
WAIT_BOUND_MEDIANS = 20


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'many.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_thirty_two_writers_in_sixteen_games_never_wait_long(db_url, make_service) -> None:
    # Snapshots every 4 events: the snapshot writers work through the whole run.
    servers = [make_service(db_url, snapshot_every=4) for _ in range(2)]
    games = [f"many-{time.time_ns()}-{n}" for n in range(GAMES)]
    clockwork = load_ruleset("clockwork", root=FIXTURES)
    for game in games:
        servers[0].commands.create_game(clockwork, game_id=game, players=["Ann", "Ben"],
                                        start="2026-01-01T00:00:00Z")
    waits: list[float] = []
    failures: list[str] = []

    def write(server_index: int, game: str) -> None:
        server = servers[server_index]
        for n in range(COMMANDS):
            started = time.monotonic()
            try:
                outcome = server.commands.perform(game, ("Ann", "Ben")[server_index],
                                                  "set_alarm", {"label": f"{n}",
                                                                "after": 3600})
                if not outcome.accepted:
                    failures.append(outcome.message)
            except Exception as error:  # noqa: BLE001 - every failure is reported
                failures.append(repr(error))
            waits.append(time.monotonic() - started)

    writers = [threading.Thread(target=write, args=(index, game))
               for game in games for index in (0, 1)]
    try:
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(300)
        assert not any(writer.is_alive() for writer in writers)
        assert failures == []
        assert len(waits) == 2 * GAMES * COMMANDS
        bound = max(WAIT_BOUND_S, WAIT_BOUND_MEDIANS * statistics.median(waits))
        assert max(waits) < bound, (sorted(waits)[-5:], statistics.median(waits))
        for game in games:
            alarms = [e for e in servers[1].reads.log(game) if e["type"] == "timer_set"
                      and e["payload"]["name"] == "alarm"]
            assert len(alarms) == 2 * COMMANDS
            assert servers[1].reads.load(game).to_json() == \
                servers[0].reads.replay(game).to_json()
    finally:
        for server in servers:
            server.close()

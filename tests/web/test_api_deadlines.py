"""Deadlines fire on time inside ``scriba serve``, exactly once with two server processes
on one database (SQLite file and PostgreSQL), with no cron and no command to trigger them."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from serving import Server

from scriba.rulesets import load_ruleset
from scriba.service import open_service

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ALARMS = 6


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'deadlines.db'}"
    return request.getfixturevalue("postgres_url")


def test_two_servers_fire_each_timer_once_on_time(db_url) -> None:
    service = open_service(db_url)
    game = f"clock-{time.time_ns()}"
    service.commands.create_game(load_ruleset("clockwork", root=FIXTURES), game_id=game,
                                 players=["Ann", "Ben"], clock="real")
    servers = [Server(db_url, tick=0.1), Server(db_url, tick=0.1)]
    try:
        # Alarms set now, by another process, 2 to 4.5 s ahead: the servers must find them.
        for i in range(ALARMS):
            outcome = service.commands.perform(game, "Ann", "set_alarm",
                                               {"label": f"a{i}", "after": 2 + i // 2})
            assert outcome.accepted, outcome.message
        due = time.monotonic() + 2 + (ALARMS - 1) // 2
        while time.monotonic() < due + 4:
            rung = service.reads.load(game).vars["rung"]
            if len([r for r in rung if r.startswith("a")]) >= ALARMS:
                break
            time.sleep(0.2)
        time.sleep(1.5)  # both servers keep ticking: nothing may fire again
        assert all(s.process.poll() is None for s in servers)
        status = httpx.get(f"{servers[1].url}/api/v1/games/{game}").json()
    finally:
        outputs = [s.stop() for s in servers]
    fired = [e for e in service.reads.log(game) if e["type"] == "timer_fired"
             and e["payload"]["name"] == "alarm"]
    labels = Counter(e["payload"]["data"]["label"] for e in fired)
    assert labels == Counter({f"a{i}": 1 for i in range(ALARMS)}), outputs
    rung = service.reads.load(game).vars["rung"]
    assert sorted(r.split("@")[0] for r in rung if r.startswith("a")) == \
        [f"a{i}" for i in range(ALARMS)]
    assert status["vars"]["rung"] == rung
    service.close()

"""Rule cost is bounded per command and isolated per game (issue 8, "One game's slow rule
stalls other games"). Short wall clocks keep these tests to seconds."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from scriba.rulecode.host import SandboxHost
from scriba.rulecode.pool import WorkerPool
from scriba.rulecode.worker import code_hash
from scriba.service.service import Service

LOOP = "def check(game, command):\n    n = 0\n    for i in range(1000000000):\n        n += 1\n"
FAST = "def check(game, command):\n    return None\n"
VIEW = {"seq": 1, "players": {}}


@pytest.fixture
def slow_host():
    """A host whose steps are practically unlimited, so that only time stops a loop."""
    host = SandboxHost(WorkerPool(size=1, wall_clock=5), budget=10 ** 12,
                       command_steps=10 ** 12, command_seconds=1.0)
    yield host
    host.pool.close()


def test_a_slow_rule_is_stopped_once_by_the_wall_clock_never_retried(slow_host):
    slow_host.call([("1", FAST)], ["1"], "check", VIEW, [{}])  # a warm worker
    started = time.monotonic()
    with slow_host.command():
        [result] = slow_host.call([("1", LOOP)], ["1"], "check", VIEW, [{}])
    elapsed = time.monotonic() - started
    assert "wall-clock limit exceeded" in result.error
    assert 0.9 < elapsed < 1.9  # once: not twice the limit
    assert slow_host.pool.respawns == 0  # stopped by the worker itself, which lives on


def test_a_worker_that_does_not_answer_is_killed_at_the_deadline_not_retried():
    pool = WorkerPool(size=1, wall_clock=1.0)
    try:
        pool.request({"op": "ping"})
        started = time.monotonic()
        # No "seconds": the worker does not watch the clock itself, so the pool must.
        answer = pool.request({"op": "call", "order": [["1", code_hash(LOOP)]],
                               "targets": ["1"], "hook": "check", "args": [{}],
                               "budget": 10 ** 12, "codes": {code_hash(LOOP): LOOP},
                               "view_json": "{}"})
        elapsed = time.monotonic() - started
    finally:
        pool.close()
    assert answer["timed_out"] and "wall-clock limit exceeded" in answer["died"]
    assert 0.9 < elapsed < 1.6
    assert pool.respawns == 1  # the killed worker, and no second attempt


def test_all_the_rules_of_a_command_share_one_step_budget():
    host = SandboxHost(WorkerPool(size=1), budget=2000, command_steps=3000)
    try:
        order = [("1", LOOP), ("2", LOOP), ("3", LOOP)]
        with host.command():
            first, second, third = host.call(order, ["1", "2", "3"], "check", VIEW, [{}])
            [fourth] = host.call(order, ["3"], "check", VIEW, [{}])
    finally:
        host.pool.close()
    assert first.error.startswith("step budget exceeded")
    assert second.error.startswith("step budget of the command exceeded")
    assert third.error.startswith("step budget of the command exceeded")
    assert fourth.error.startswith("step budget of the command exceeded")


def test_a_caller_never_waits_behind_another_callers_slow_call(slow_host):
    slow_host.command_seconds = 3.0
    slow_host.call([("1", FAST)], ["1"], "check", VIEW, [{}])
    finished: dict[str, float] = {}

    def slow() -> None:
        with slow_host.command():
            slow_host.call([("1", LOOP)], ["1"], "check", VIEW, [{}])
        finished["slow"] = time.monotonic()

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.1)
    started = time.monotonic()
    with slow_host.command():
        [result] = slow_host.call([("2", FAST)], ["2"], "check", VIEW, [{}])
    finished["fast"] = time.monotonic()
    thread.join()
    assert result.error is None
    assert finished["fast"] < finished["slow"]  # answered while the slow one still ran
    assert finished["fast"] - started < 2.0  # a worker started for it, not a wait of 3 s


SLOW_CHECK = ("def check(game, command):\n    n = 0\n"
              "    for i in range(1000000000):\n        n += 1\n")


def test_a_slow_rule_in_one_game_does_not_delay_another_games_commands(tmp_path: Path):
    host = SandboxHost(WorkerPool(size=1, wall_clock=5), budget=10 ** 12,
                       command_steps=10 ** 12, command_seconds=4.0)
    service = Service(f"sqlite:///{tmp_path / 'games.db'}", host=host)
    try:
        for game in ("template", "normal"):
            service.create_game("equinomic", game_id=game, start="2026-03-01T10:00:00Z",
                                players=["Anna", "Bruno", "Carla"])
        slow = service.create_game("equinomic", game_id="slow2", start="2026-03-01T10:00:00Z",
                                   players=["Anna", "Bruno", "Carla"],
                                   rules=[*[{"id": r["id"], "title": r["title"],
                                             "text": r["text"], "code": r["code"],
                                             "attributes": r["attributes"]}
                                            for r in service.load("template").rules.values()],
                                          {"id": "199", "title": "Slow", "text": "s",
                                           "code": SLOW_CHECK}])
        finished: dict[str, float] = {}

        def play_slow() -> None:
            service.perform(slow.game_id, "Anna", "pass", {})
            finished["slow"] = time.monotonic()

        thread = threading.Thread(target=play_slow)
        thread.start()
        time.sleep(0.3)
        started = time.monotonic()
        outcome = service.perform("normal", "Anna", "pass", {})
        finished["normal"] = time.monotonic()
        thread.join()
        assert outcome.accepted, outcome.message
        assert finished["normal"] < finished["slow"]
        assert finished["normal"] - started < 3.0  # not the 4 s of its neighbour
        aborted = [e for e in service.log(slow.game_id) if e["type"] == "rule_code_aborted"]
        assert aborted and "wall-clock limit exceeded" in aborted[-1]["payload"]["reason"]
    finally:
        service.close()


def test_slow_code_in_actions_is_bounded_when_proposed(service):
    game = service.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                               players=["Anna", "Bruno", "Carla"]).game_id
    code = "def actions():\n    n = 0\n    for i in range(1000000000):\n        n += 1\n" \
           "    return []\n"
    started = time.monotonic()
    outcome = service.perform(game, "Anna", "propose", {"changes": [
        {"enact": {"title": "Slow", "text": "s", "code": code}}]})
    assert time.monotonic() - started < 3
    assert not outcome.accepted
    assert "actions()" in outcome.message and "budget exceeded" in outcome.message


TRANSFORM_FAILS = '''
def transform_proposal_number(game, value, context):
    fail("no number today")
'''


def test_an_aborted_transform_is_recorded(service):
    game = service.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                               players=["Anna", "Bruno", "Carla"]).game_id
    state = service.load(game)
    rules = [{"id": r["id"], "title": r["title"], "text": r["text"], "code": r["code"],
              "attributes": r["attributes"]} for r in state.rules.values()]
    rules.append({"id": "199", "title": "T", "text": "t", "code": TRANSFORM_FAILS})
    service.create_game("equinomic", game_id="eq2", start="2026-03-01T10:00:00Z",
                        players=["Anna", "Bruno", "Carla"], rules=rules)
    outcome = service.perform("eq2", "Anna", "propose", {"changes": [
        {"enact": {"title": "A", "text": "a"}}]})
    assert outcome.accepted, outcome.message
    aborted = [e["payload"] for e in outcome.events if e["type"] == "rule_code_aborted"]
    assert aborted and aborted[0]["hook"] == "transform_proposal_number"
    assert aborted[0]["rule"] == "199" and "no number today" in aborted[0]["reason"]

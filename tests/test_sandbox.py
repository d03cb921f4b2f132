"""Rule code runs in sandbox workers: bounded in steps, memory and time, and isolated (a
worker that must be killed costs the rule that was running, and no other)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from scriba.rulecode.cost import CALL_STEPS_TEXT, KILLED_TEXT, MEMORY_TEXT
from scriba.rulecode.host import SandboxHost
from scriba.rulecode.pool import WorkerPool


@pytest.fixture
def host():
    sandbox = SandboxHost(WorkerPool(size=1, memory_limit=512 * 1024 * 1024, wall_clock=20))
    yield sandbox
    sandbox.pool.close()


def call(host: SandboxHost, code: str, hook: str = "f", args=None):
    (result,) = host.call([("r1", code)], ["r1"], hook, {"now": ""}, args or [])
    return result


def test_compile_error_names_the_line(host):
    info = host.inspect("def f(game):\n    return 1\n\ndef g(:\n    pass\n")
    assert info.error is not None
    assert "4:7" in info.error and "Parse error" in info.error


def test_declarations_and_hooks_are_listed(host):
    info = host.inspect("def actions():\n    return [{'name': 'dance'}]\n"
                        "def on_vote_cast(game, event):\n    return []\n")
    assert info.error is None
    assert info.hooks == {"actions", "on_vote_cast"}
    assert info.declarations["actions"] == [{"name": "dance"}]


def test_runaway_loop_is_stopped_by_the_step_budget_the_same_way_every_time(host):
    code = ("def f(game):\n    n = 0\n    for i in range(1000000000):\n        n += i\n"
            "    return n\n")
    first, second = call(host, code), call(host, code)
    assert first.error is not None and "step budget" in first.error
    assert first.error == second.error


def test_bounded_loop_within_budget_completes(host):
    code = "def f(game):\n    n = 0\n    for i in range(100000):\n        n += i\n    return n\n"
    assert call(host, code).value == sum(range(100000))


def test_huge_allocation_is_stopped_and_the_worker_replaced(host):
    result = call(host, "def f(game):\n    return len('x' * 2000000000)\n")
    assert result.error is not None and "memory" in result.error
    # the next call runs on a fresh worker and works
    assert call(host, "def f(game):\n    return 41 + 1\n").value == 42


@pytest.mark.parametrize("code, expected", [
    ("load('os.star', 'system')\ndef f(game):\n    return 1\n", "load"),
    ("def f(game):\n    return open('/etc/passwd')\n", "open"),
    ("def f(game):\n    return game.__class__\n", "__class__"),
    ("def f(game):\n    return getattr(game, '__dict__')\n", "__dict__"),
    ("def f(game):\n    return __import__('os')\n", "__import__"),
])
def test_no_files_no_imports_no_host_objects(host, code, expected):
    code = code.replace("def f(", "def query_f(")  # a name the contract allows
    info = host.inspect(code)
    if info.error is None:
        result = call(host, code, hook="query_f")
        assert result.error is not None and expected in result.error
    else:
        assert expected in info.error or "not found" in info.error


def test_rule_code_cannot_change_the_state_it_is_given(host):
    view = {"players": {"A": {"vars": {"points": 1}}}}
    code = "def f(game):\n    game['players']['A']['vars']['points'] = 99\n    return 1\n"
    (result,) = host.call([("r1", code)], ["r1"], "f", view, [])
    assert view["players"]["A"]["vars"]["points"] == 1
    assert result.error is None or "frozen" in result.error or "immutable" in result.error


def test_worker_killed_mid_call_is_respawned_and_the_call_retried(host):
    host.budget = 10**7  # enough for a call that lasts a few seconds
    slow = ("def f(game):\n    n = 0\n    for i in range(100000000):\n        n += 1\n"
            "    return n\n")
    call(host, "def f(game):\n    return 0\n")  # a worker is up
    (victim,) = host.pool.pids()

    def kill_soon() -> None:
        time.sleep(0.4)
        os.kill(victim, signal.SIGKILL)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    result = call(host, slow)
    killer.join()
    assert result.error is None and result.value == 100000000
    assert victim not in host.pool.pids()
    assert host.pool.respawns >= 1


def test_transform_runs_through_every_rule_in_order(host):
    double = "def transform_weight(game, value, context):\n    return value * 2\n"
    plus = "def transform_weight(game, value, context):\n    return value + 1\n"
    value, aborts = host.transform([("a", double), ("b", plus)], "weight", {}, 5, {})
    assert (value, aborts) == (11, [])
    caller = "def f(game):\n    return transform('weight', 1, {})\n"
    (result,) = host.call([("a", double), ("c", caller)], ["c"], "f", {}, [])
    assert result.value == 2


def test_an_answer_too_large_is_refused_without_filling_the_server(host):
    host.budget = 10 ** 5  # a result of 40 million characters costs 10,000 steps
    result = call(host, "def f(game):\n    return ['y' * 1000000 for i in range(40)]\n")
    assert result.error is not None and "MiB of data" in result.error
    assert call(host, "def f(game):\n    return 7\n").value == 7


def test_top_level_code_runs_under_the_proposing_budget(host):
    looping = ("def f():\n    n = 0\n    for i in range(1000000000):\n        n += 1\n"
               "    return n\n\nX = f()\n")
    info = host.inspect(looping)
    assert info.error == CALL_STEPS_TEXT and not info.transient
    huge = "X = [0] * (len('abcd') << 24)\n"  # 512 MiB, made when the code is compiled
    info = host.inspect(huge)
    assert info.error == MEMORY_TEXT and not info.transient  # refused for what it is


SORTS = ("def f(game):\n    big = [[0] * 1000] * 3000\n    for i in range(1000):\n"
         "        sorted(big)\n    return 1\n")  # a step that cannot be interrupted


def test_a_worker_killed_in_one_rules_step_costs_that_rule_alone(host):
    host.budget = 500  # a call may take 0.5 s: killed after 1 s
    order = [("1", SORTS), ("2", "def f(game):\n    return 2\n")]
    call(host, "def f(game):\n    return 0\n")  # a worker is up
    with host.command():
        first, second = host.call(order, ["1", "2"], "f", {"now": ""}, [])
        again, other = host.call(order, ["1", "2"], "f", {"now": ""}, [])
    assert first.error == KILLED_TEXT and (second.error, second.value) == (None, 2)
    assert again.error == KILLED_TEXT and again.stopped  # not called again in the command
    assert (other.error, other.value) == (None, 2)
    assert host.pool.respawns == 1  # the worker told which rule it was running

"""The in-process host answers as the sandbox does: same budget, same plain-data checks."""

from __future__ import annotations

import os
from pathlib import Path

from scriba.rulecode.inprocess import InProcessHost

VIEW = {"settings": {}, "players": {"A": {"vars": {"points": 1}}}}


def call(host: InProcessHost, code: str) -> tuple:
    result = host.call([("9", code)], ["9"], "query_x", VIEW, [{}])[0]
    return result.value, result.error


def test_a_runaway_loop_stops_at_the_step_budget() -> None:
    host = InProcessHost(budget=200)  # and 0.2 s a call: steps, not time, stop this loop
    _, error = call(host, "def query_x(game, args):\n    n = 0\n"
                          "    for i in range(1000000000):\n        n += 1\n    return n\n")
    assert error == "step budget exceeded (the rule's code ran too long and was stopped)"
    value, error = call(host, "def query_x(game, args):\n    return 41 + 1\n")
    assert (value, error) == (42, None)  # the host goes on after an abort


def test_only_plain_data_comes_back_and_the_view_is_a_copy() -> None:
    host = InProcessHost()
    value, error = call(host, "def query_x(game, args):\n    return query_x\n")
    assert value is None and "function" in error
    value, _ = call(host, "def query_x(game, args):\n    return (1, {2: 'two'})\n")
    assert value == [1, {"2": "two"}]  # as across the pipe: tuples are lists, keys strings
    value, error = call(host, "def query_x(game, args):\n"
                              "    game['players']['A']['vars']['points'] = 99\n")
    assert value is None and "read-only" in error  # the view is the game's, not the rule's
    assert VIEW["players"]["A"]["vars"]["points"] == 1


def _workers() -> set[str]:
    """Child processes of this test run that are sandbox workers."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            ppid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmdline = (proc / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if ppid == str(os.getpid()) and b"scriba.rulecode.worker" in cmdline:
            found.add(proc.name)
    return found


def test_no_worker_process_is_started() -> None:
    before = _workers()
    host = InProcessHost()
    assert call(host, "def query_x(game, args):\n    return 1\n") == (1, None)
    assert host.pool.pids() == []
    assert _workers() <= before

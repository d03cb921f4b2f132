"""The view is decoded once per request and shared by the rules asked in it: each rule
still gets a game of its own at the top level, and nothing one rule does reaches another."""

from __future__ import annotations

import pytest

from scriba.rulecode.host import SandboxHost
from scriba.rulecode.pool import WorkerPool

VIEW = {"vars": {"round": 3}, "players": {"Anna": {"vars": {"points": 1}}}}


@pytest.fixture
def host():
    sandbox = SandboxHost(WorkerPool(size=1, memory_limit=512 * 1024 * 1024, wall_clock=20))
    yield sandbox
    sandbox.pool.close()


def test_each_rule_sees_its_own_id_and_the_same_view(host: SandboxHost):
    code = "def f(game):\n    return [game['this_rule'], game['vars']['round'], list(game)[0]]\n"
    order = [("1", code), ("2", code + "\n# another text, another module\n")]
    results = host.call(order, ["1", "2"], "f", VIEW, [])
    assert [(r.rule_id, r.value, r.error) for r in results] == [
        ("1", ["1", 3, "this_rule"], None), ("2", ["2", 3, "this_rule"], None)]


def test_a_rule_that_replaces_a_top_level_entry_does_not_change_the_next_rules_view(
        host: SandboxHost):
    writer = "def f(game):\n    game['vars'] = {'round': 99}\n    return game['vars']['round']\n"
    reader = "def f(game):\n    return game['vars']['round']\n"
    results = host.call([("1", writer), ("2", reader)], ["1", "2"], "f", VIEW, [])
    assert [r.value for r in results] == [99, 3]
    assert VIEW["vars"]["round"] == 3


def test_a_rule_writing_inside_the_view_is_aborted_with_a_sentence_and_others_still_run(
        host: SandboxHost):
    writer = "def f(game):\n    game['players']['Anna']['vars']['points'] = 99\n    return 1\n"
    reader = "def f(game):\n    return game['players']['Anna']['vars']['points']\n"
    first, second = host.call([("1", writer), ("2", reader)], ["1", "2"], "f", VIEW, [])
    assert first.value is None and "read-only" in first.error
    assert "call.star" not in first.error  # the generated call is not the rule's business
    assert second.value == 1 and second.error is None


def test_a_new_view_in_the_next_request_is_seen(host: SandboxHost):
    code = "def f(game):\n    return game['vars']['round']\n"
    assert host.call([("1", code)], ["1"], "f", VIEW, [])[0].value == 3
    assert host.call([("1", code)], ["1"], "f", {**VIEW, "vars": {"round": 4}}, [])[0].value == 4

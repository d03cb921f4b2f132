"""std's lookups in the game's big structures (std.rule, std.proposal, std.open_proposals):
Starlark helpers, so a lookup costs steps, not the size of the game."""

from __future__ import annotations

import types
from typing import Any

import pytest
import starlark as sl

from scriba.rulecode import std
from scriba.rulecode.inprocess import InProcessHost
from scriba.rulecode.std import v1


def _proposal(number: int, status: str = "adopted", label: str | None = None) -> dict[str, Any]:
    return {"number": number, "status": status, "label": label, "author": "Anna",
            "votes": {"Anna": {"choice": "for"}}, "data": {}}


def _view(count: int) -> dict[str, Any]:
    proposals = {str(n): _proposal(n, "open" if n % 3 == 0 else "adopted",
                                   f"P-{n}" if n % 2 else None) for n in range(1, count + 1)}
    rules = [{"id": str(n), "title": f"Rule {n}", "text": "x" * 200, "attributes": {}}
             for n in range(1, 40)]
    return {"seq": 1, "players": {}, "settings": {}, "proposals": proposals, "rules": rules}


def call(code: str, view: dict[str, Any], hook: str = "query_x") -> tuple[Any, str | None, float]:
    """A rule's answer, its error, and the steps its call cost."""
    host = InProcessHost()
    with host.command():
        [result] = host.call([("42", code)], ["42"], hook, view, [{}])
        ledger = host.ledger()
    assert ledger is not None
    return result.value, result.error, ledger.spent["42"][0]


LOOKUPS = """
def query_x(game, args):
    ps = game["proposals"]
    return {
        "by_number": std.proposal(ps, 4)["number"],
        "by_string": std.proposal(ps, "4")["number"],
        "by_label": std.proposal(ps, "P-5")["number"],
        "unknown": std.proposal(ps, 999),
        "unknown_label": std.proposal(ps, "P-4"),
        "none": std.proposal(ps, None),
        "open": [p["number"] for p in std.open_proposals(ps)],
        "rule": std.rule(game["rules"], 7)["title"],
        "no_rule": std.rule(game["rules"], "7a"),
        "rule_none": std.rule(game["rules"], None),
    }
"""


def test_proposals_are_found_by_number_or_label_and_rules_by_id() -> None:
    value, error, _ = call(LOOKUPS, _view(10))
    assert error is None
    assert value == {"by_number": 4, "by_string": 4, "by_label": 5, "unknown": None,
                     "unknown_label": None, "none": None, "open": [3, 6, 9],
                     "rule": "Rule 7", "no_rule": None, "rule_none": None}


def test_what_a_lookup_returns_is_a_copy_the_rule_may_change() -> None:
    code = """
def query_x(game, args):
    p = std.proposal(game["proposals"], 4)
    p["votes"]["Bruno"] = {"choice": "against"}
    r = std.rule(game["rules"], "2")
    r["attributes"]["mine"] = True
    opened = std.open_proposals(game["proposals"])
    opened[0]["status"] = "closed"
    return [sorted(game["proposals"]["4"]["votes"].keys()), sorted(p["votes"].keys()),
            game["rules"][1]["attributes"], game["proposals"]["3"]["status"]]
"""
    value, error, _ = call(code, _view(10))
    assert error is None
    assert value == [["Anna"], ["Anna", "Bruno"], {}, "open"]


def test_a_lookup_given_something_else_says_so_at_the_rules_line() -> None:
    code = "def query_x(game, args):\n    n = 1\n    return std.proposal(game['rules'], 3)\n"
    value, error, _ = call(code, _view(3))
    assert value is None and error is not None
    assert 'std.proposal: give it game["proposals"], got list' in error
    assert "rule.star:3" in error  # the line of the call in the rule's own code


def test_a_lookup_by_number_costs_the_same_steps_in_a_small_and_a_large_game() -> None:
    code = ("def query_x(game, args):\n"
            "    return [std.proposal(game['proposals'], n)['number'] for n in range(1, 9)]\n")
    value_small, error_small, small = call(code, _view(10))
    value_large, error_large, large = call(code, _view(3000))
    assert error_small is None and error_large is None
    assert value_small == value_large == list(range(1, 9))
    # Polled like the rule's own loop, whatever the game's size; a native helper would pay a
    # step per 10 values handed over: thousands here.
    assert small == large <= 1


def test_a_lookup_by_label_costs_steps_like_the_loop_it_is() -> None:
    code = "def query_x(game, args):\n    return std.proposal(game['proposals'], 'none such')\n"
    _, _, small = call(code, _view(10))
    _, _, large = call(code, _view(20000))
    assert large > small  # the search is rule code: it is polled and stopped like any loop


def test_std_binds_every_helper_once_and_dispatches_the_starlark_ones_by_version() -> None:
    assert set(std.STARLARK_NAMES) == {"rule", "proposal", "open_proposals", "cases", "case"}
    assert not set(std.STARLARK_NAMES) & set(std.NATIVE_NAMES)
    source = std.binding_source()
    for version in std.VERSIONS:
        assert f"_scriba_std_v{version}()" in source
    for name in std.NAMES:
        assert f"{name} = _scriba_std_{name}" in source


def test_a_starlark_helper_runs_in_the_calling_games_version() -> None:
    # A made-up version 2 that changes std.proposal and drops std.rule: each call is
    # answered by the version the game has, as the native helpers' calls are.
    v2 = types.ModuleType("v2")
    v2.STARLARK = "def proposal(proposals, ref):\n    return 'v2 ' + str(ref)\n"
    helpers = std.starlark_helpers({1: v1, 2: v2})
    dialect = sl.Dialect.standard()
    globals_ = sl.Globals.extended_by([sl.LibraryExtension.Json,
                                       sl.LibraryExtension.StructType])

    def run(version: int, expression: str) -> Any:
        module = sl.Module()
        module.add_callable(std.VERSION_NATIVE, lambda: version)
        sl.eval(module, sl.parse("std.star", f"{helpers}\nanswer = {expression}\n", dialect),
                globals_)
        return module["answer"]

    assert run(1, "_scriba_std_proposal({'7': {'number': 7}}, 7)") == {"number": 7}
    assert run(2, "_scriba_std_proposal({'7': {'number': 7}}, 7)") == "v2 7"
    assert run(1, "_scriba_std_rule([{'id': '3'}], 3)") == {"id": "3"}
    with pytest.raises(sl.StarlarkError, match="std.rule does not exist in std version 2"):
        run(2, "_scriba_std_rule([{'id': '3'}], 3)")

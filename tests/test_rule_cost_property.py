"""Whatever a rule's code does, the proposal repealing it is adopted with the ordinary votes,
and every vote answers within the stated bound (the security finding "rule cost turned
against the game"; see scriba.rulecode.cost).

Random rule code — loops, comprehensions over ``std`` calls, helpers calling helpers,
``transform`` calling itself, string multiplication, large literals — in a random hook
is proposed in a `suber` game, then adopted and repealed. Code that cannot even be compiled
within the proposing budget must be refused with the limit it met, and the game must play
on. What the step budget stops runs on the in-process host (the sandbox's own budgets, no
worker processes); what only a worker's memory limit stops (values up to a GiB) runs on
real sandbox workers, one pool for the whole file.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriba.kernel.limits import KILL_GRACE
from scriba.rulecode.cost import Limits
from scriba.rulecode.host import SandboxHost
from scriba.rulecode.pool import WorkerPool
from scriba.service import Service, open_service

# The stated bound: one rule adds at most its part of the command and a kill's grace; the
# rest is the ordinary work of a vote, generously (a worker restarted, a loaded machine).
VOTE_BOUND = Limits().rule_seconds + KILL_GRACE + 3.0
PLAYERS = ["P1", "P2"]
_games = itertools.count()

COUNTS = st.sampled_from([3, 2000, 300_000, 10**9])
SIZES = st.sampled_from([1 << 10, 1 << 20, 1 << 30])  # small, 1-2 MiB, past any limit
STD = 'std.add_var("points", 1, player="P1")'
STEP_KINDS = ["loop", "std", "helpers", "transform", "string"]  # stopped by steps
MEMORY_KINDS = ["literal", "top_literal"]  # stopped by a worker's memory limit


@st.composite
def bodies(draw: st.DrawFn, kinds: list[str]) -> tuple[str, str]:
    """(top-level code, the body of a hook) doing something costly, of one of ``kinds``."""
    n = draw(COUNTS)
    kind = draw(st.sampled_from(kinds))
    if kind == "loop":
        return "", f"    n = 0\n    for i in range({n}):\n        n += i\n"
    if kind == "std":
        return "", f"    x = [{STD} for i in range({n})]\n"
    if kind == "helpers":  # Starlark has no recursion: a chain of helpers, each doubling
        depth = draw(st.integers(1, 4))
        helpers = "".join(f"def _h{d}(n):\n    return _h{d + 1}(n) + _h{d + 1}(n)\n\n"
                          for d in range(depth))
        helpers += f"def _h{depth}(n):\n    return [{STD} for i in range(n)]\n\n"
        return helpers, f"    x = _h0({n})\n"
    if kind == "transform":  # transform calling the same transform, as deep as it goes
        top = ("def transform_bomb(game, value, context):\n"
               f"    return transform('bomb', value, context) + len([{STD} for i in "
               f"range({n})])\n\n")
        return top, "    x = transform('bomb', 0, {})\n"
    size = draw(SIZES)
    if kind == "literal":  # not a constant: made when the hook runs
        return "", f"    x = len('ab' * (len(game['players']) + {size}))\n"
    if kind == "string":
        return "", (f"    s = ''\n    for i in range({n}):\n"
                    f"        s = 'x' * (i % {size})\n")
    return f"X = 'ab' * {size}\nY = [0] * {size}\n\n", "    pass\n"


HOOKS = {
    "on_vote_cast": "def on_vote_cast(game, event):\n{body}    return []\n",
    "on_notice": "def on_notice(game, event):\n{body}    return []\n",
    "on_proposal_resolved": "def on_proposal_resolved(game, event):\n{body}    return []\n",
    "check": "def check(game, command):\n{body}    return None\n",
    # asked by rule 203 while it counts the votes
    "transform_votes_required":
        "def transform_votes_required(game, value, context):\n{body}    return value\n",
}


@st.composite
def rule_code(draw: st.DrawFn, kinds: list[str]) -> str:
    top, body = draw(bodies(kinds))
    return top + HOOKS[draw(st.sampled_from(sorted(HOOKS)))].format(body=body)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Service]:
    service = open_service("sqlite://", host=SandboxHost(WorkerPool(size=1)))
    yield service
    service.close()


def turn(service: Service, game: str, change: dict) -> tuple[dict | None, str]:
    """The mover proposes ``change``; both players vote for it, each vote answering within
    the bound; the mover rolls. The proposal, or None and why it was refused."""
    mover = service.reads.load(game).vars["turn"]
    outcome = service.commands.perform(game, mover, "propose", {"changes": [change]})
    if not outcome.accepted:
        return None, outcome.message
    number = service.reads.load(game).vars["turn_proposal"]
    for player in PLAYERS:
        started = time.monotonic()
        vote = service.commands.perform(game, player, "vote", {"proposal": number, "choice": "for"})
        took = time.monotonic() - started
        assert vote.accepted, vote.message
        assert took < VOTE_BOUND, f"a vote took {took:.1f} s"
    rolled = service.commands.perform(game, mover, "roll", {})
    assert rolled.accepted, rolled.message
    return service.reads.load(game).proposals[str(number)], ""


@pytest.fixture(scope="module")
def in_process(make_service) -> Iterator[Service]:
    service = make_service("sqlite://")
    yield service
    service.close()


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(code=rule_code(STEP_KINDS))
def test_whatever_a_rule_does_its_repeal_is_adopted_in_time(in_process: Service, code: str):
    repealed_in_time(in_process, code)


# Few examples: each is a worker killed or refused; the kinds are two and the sizes three,
# and which hook holds the code matters to the step budget, not to memory.
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(code=rule_code(MEMORY_KINDS))
def test_whatever_memory_a_rule_takes_its_repeal_is_adopted_in_time(sandbox: Service,
                                                                    code: str):
    repealed_in_time(sandbox, code)


def repealed_in_time(service: Service, code: str) -> None:
    game = service.commands.create_game("suber", game_id=f"cost{next(_games)}",
                                        start="2026-03-01T10:00:00Z", players=PLAYERS).game_id
    proposal, refusal = turn(service, game, {"enact": {"title": "Costly", "text": "c",
                                                       "code": code}})
    if proposal is None:  # it could not be compiled within the proposing budget
        assert "memory limit exceeded" in refusal or "step budget exceeded" in refusal, refusal
        ordinary, _ = turn(service, game, {"enact": {"title": "Plain", "text": "p"}})
        assert ordinary is not None and ordinary["status"] == "adopted"
        return
    assert proposal["status"] == "adopted"
    [rule] = [rid for rid, r in service.reads.load(game).rules.items() if r["code"] == code]
    repeal, _ = turn(service, game, {"repeal": {"rule": rule}})
    assert repeal is not None and repeal["status"] == "adopted"
    state = service.reads.load(game)
    assert not state.rules[rule]["in_force"]
    aborted = {e["payload"]["rule"] for e in service.reads.log(game)
               if e["type"] == "rule_code_aborted"}
    assert aborted <= {rule}  # no other rule was ever aborted
    assert service.reads.replay(game).to_json() == state.to_json()

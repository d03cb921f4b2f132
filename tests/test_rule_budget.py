"""Rule cost is bounded per call, per rule and per command, and isolated per rule and per
game (issue 8, "One game's slow rule stalls other games"; the security finding "rule cost
turned against the game"). Budgets are counted in steps, and asserted in steps; the only
wall-clock bounds are generous ones for the promises that a vote answers in time and that
a worker is stopped at its deadline. That a slow game never holds up another is checked
as an order of events, which a loaded machine cannot upset. Short wall clocks keep the
slow tests to seconds."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriba.kernel.limits import KILL_GRACE, STEPS_PER_CALL
from scriba.rulecode.cost import (
    CALL_STEPS_TEXT,
    COMMAND_STEPS_TEXT,
    MEMORY_TEXT,
    RULE_STEPS_TEXT,
    Limits,
)
from scriba.rulecode.host import SandboxHost
from scriba.rulecode.inprocess import InProcessHost
from scriba.rulecode.pool import WorkerPool
from scriba.rulecode.worker import code_hash
from scriba.service import Service, open_service

LOOP = "def check(game, command):\n    n = 0\n    for i in range(1000000000):\n        n += 1\n"
FAST = "def check(game, command):\n    return None\n"
VIEW = {"seq": 1, "players": {}}
# A command's time so long that only steps stop rule code, however loaded the machine.
STEPS_DECIDE = 1000.0


@pytest.fixture
def slow_host():
    """A host whose steps are practically unlimited, so that only time stops a loop."""
    host = SandboxHost(WorkerPool(size=1, wall_clock=5), budget=10 ** 12,
                       command_steps=10 ** 12, command_seconds=1.0)
    yield host
    host.pool.close()


def test_a_slow_rule_is_stopped_once_by_the_wall_clock_never_retried(slow_host):
    slow_host.call([("1", FAST)], ["1"], "check", VIEW, [{}])  # a warm worker
    asked = slow_host.calls
    with slow_host.command():
        [result] = slow_host.call([("1", LOOP)], ["1"], "check", VIEW, [{}])
        ledger = slow_host.ledger()
    assert result.error.startswith("wall-clock limit exceeded")
    assert slow_host.calls == asked + 1  # asked once: a timeout is not retried
    assert ledger is not None and 1.0 <= ledger.spent["1"][1] < 1.0 + KILL_GRACE
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
    # Not before its second (time cannot run fast); after it, only a generous bound for a
    # loaded machine: the kill itself is what the answer above shows.
    assert 0.9 < elapsed < 1.0 + KILL_GRACE + 3.0
    assert pool.respawns == 1  # the killed worker, and no second attempt


def test_all_the_rules_of_a_command_share_its_budget_and_each_keeps_its_even_part():
    # 4 rules, 3,000 steps for the command: an even part is 750 steps.
    host = InProcessHost(budget=2000)
    host.command_steps = 3000
    order = [("1", LOOP), ("2", LOOP), ("3", LOOP), ("4", FAST)]
    with host.command():
        first, second, third = host.call(order, ["1", "2", "3"], "check", VIEW, [{}])
        again, honest = host.call(order, ["3", "4"], "check", VIEW, [{}])
        ledger = host.ledger()
    assert ledger is not None
    spent = {rule: steps for rule, (steps, _) in ledger.spent.items()}
    # A call is stopped at the first step past what it may take.
    assert first.error == CALL_STEPS_TEXT and spent["1"] == 2001  # its call's 2,000
    # 999 steps are left to the command: rule 2 may take them all (past its even part)...
    assert second.error == COMMAND_STEPS_TEXT and spent["2"] == 1000
    # ... and once the command's budget is spent, a rule still gets its even part ...
    assert third.error == COMMAND_STEPS_TEXT and spent["3"] == 751
    # ... and no more: it is not called again.
    assert again.error == COMMAND_STEPS_TEXT and again.stopped
    # A rule that spent nothing runs as if nothing had happened.
    assert honest.error is None and spent["4"] < 10


def test_a_rule_that_spent_its_part_of_the_command_is_not_called_again():
    host = InProcessHost()
    host.command_seconds = STEPS_DECIDE  # 18,000 steps must not meet the rule's 2 s first
    order = [("1", LOOP), ("2", FAST)]
    part = Limits().rule_steps  # 20,000 steps: ten calls' budget
    with host.command():
        results = [host.call(order, ["1", "2"], "check", VIEW, [{}]) for _ in range(12)]
        ledger = host.ledger()
    looping = [mine for mine, _ in results]
    # Nine calls of 2,001 steps; the tenth meets the rule's part; then the rule is not run.
    assert [r.error for r in looping[:9]] == [CALL_STEPS_TEXT] * 9
    assert looping[9].error == RULE_STEPS_TEXT.format(part) and not looping[9].stopped
    assert looping[10].error == looping[11].error == RULE_STEPS_TEXT.format(part)
    assert looping[10].stopped and looping[11].stopped
    assert ledger is not None and ledger.spent["1"][0] == part + 1
    assert all(other.error is None for _, other in results)  # never another rule's abort


# The finding: calls into std were not counted, so only the command's 10 s clock stopped
# this comprehension, and that abort took the other rules' reactions with it.
BOMB = ('def on_vote_cast(game, event):\n'
        '    return [std.add_var("points", 1, player="P1") for i in range(300000)]\n')
COMPREHENSION = '[std.add_var("points", 1, player="P1") for i in range(300000)]'


def test_std_calls_are_charged_and_stop_the_bomb_at_the_same_step_every_time():
    host = InProcessHost()
    code = f"def query_bomb(game, args):\n    return {COMPREHENSION}\n"
    spent = []
    for _ in range(2):
        with host.command():
            [result] = host.call([("1", code)], ["1"], "query_bomb", VIEW, [{}])
            ledger = host.ledger()
        assert result.error == CALL_STEPS_TEXT
        assert ledger is not None
        spent.append(ledger.spent["1"][0])
    assert spent[0] == spent[1]  # deterministic: the same step on every run
    assert STEPS_PER_CALL < spent[0] <= STEPS_PER_CALL + 2  # a helper call: 1 step or 2


def test_a_helper_call_costs_a_step_and_more_by_the_size_of_what_it_handles():
    host = InProcessHost()
    code = "def query_find(game, args):\n    return std.find(args['items'], -1)\n"

    def steps(items: list[int]) -> float:
        with host.command():
            [result] = host.call([("1", code)], ["1"], "query_find", VIEW, [{"items": items}])
            ledger = host.ledger()
        assert result.error is None and ledger is not None
        return ledger.spent["1"][0]

    small, large = steps(list(range(10))), steps(list(range(2010)))
    assert 1 <= small <= 3
    assert 200 <= large - small <= 201  # a step per 10 values handled
    # Past its call's budget, the helper is not run at all.
    with host.command():
        [result] = host.call([("1", code)], ["1"], "query_find", VIEW,
                             [{"items": list(range(30000))}])
    assert result.error == CALL_STEPS_TEXT


TRANSFORM_BOMB = f"""
def transform_weight(game, value, context):
    bombs = {COMPREHENSION}
    return value * 100
"""
DOUBLE = "def transform_weight(game, value, context):\n    return value * 2\n"
ASKS = "def query_weight(game, args):\n    return transform('weight', 1, {})\n"


def test_a_nested_transform_that_runs_away_is_its_own_rules_abort():
    host = InProcessHost()
    order = [("1", DOUBLE), ("2", TRANSFORM_BOMB), ("3", ASKS)]
    with host.command():
        [result] = host.call(order, ["3"], "query_weight", VIEW, [{}])
        ledger = host.ledger()
    assert (result.error, result.value) == (None, 2)  # the caller goes on without it
    [nested] = result.aborts
    assert (nested.rule_id, nested.hook, nested.error) == ("2", "transform_weight",
                                                          CALL_STEPS_TEXT)
    assert ledger is not None and ledger.spent["2"][0] > STEPS_PER_CALL > ledger.spent["3"][0]


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
    with slow_host.command():
        [result] = slow_host.call([("2", FAST)], ["2"], "check", VIEW, [{}])
    finished["fast"] = time.monotonic()
    thread.join()
    assert result.error is None
    # Answered while the slow one still ran: a worker started for it, no wait for the 3 s.
    # (An order of events, not a window of wall time: it holds on a loaded machine.)
    assert finished["fast"] < finished["slow"]


SLOW_CHECK = ("def check(game, command):\n    n = 0\n"
              "    for i in range(1000000000):\n        n += 1\n")


def test_a_slow_rule_in_one_game_does_not_delay_another_games_commands(tmp_path: Path):
    host = SandboxHost(WorkerPool(size=1, wall_clock=5), budget=10 ** 12,
                       command_steps=10 ** 12, command_seconds=4.0)
    service = open_service(f"sqlite:///{tmp_path / 'games.db'}", host=host)
    try:
        for game in ("template", "normal"):
            service.commands.create_game("equinomic", game_id=game, start="2026-03-01T10:00:00Z",
                                         players=["Anna", "Bruno", "Carla"])
        slow = service.commands.create_game("equinomic", game_id="slow2",
                                            start="2026-03-01T10:00:00Z",
                                   players=["Anna", "Bruno", "Carla"],
                                   rules=[*[{"id": r["id"], "title": r["title"],
                                             "text": r["text"], "code": r["code"],
                                             "attributes": r["attributes"]}
                                            for r in service.reads.load("template").rules.values()],
                                          {"id": "199", "title": "Slow", "text": "s",
                                           "code": SLOW_CHECK}])
        finished: dict[str, float] = {}

        def play_slow() -> None:
            service.commands.perform(slow.game_id, "Anna", "pass", {})
            finished["slow"] = time.monotonic()

        thread = threading.Thread(target=play_slow)
        thread.start()
        time.sleep(0.3)
        outcome = service.commands.perform("normal", "Anna", "pass", {})
        finished["normal"] = time.monotonic()
        thread.join()
        assert outcome.accepted, outcome.message
        assert finished["normal"] < finished["slow"]  # not after the 4 s of its neighbour
        aborted = [e for e in service.reads.log(slow.game_id) if e["type"] == "rule_code_aborted"]
        assert aborted and "wall-clock limit exceeded" in aborted[-1]["payload"]["reason"]
    finally:
        service.close()


def test_slow_code_in_actions_is_bounded_when_proposed(service):
    game = service.commands.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                                        players=["Anna", "Bruno", "Carla"]).game_id
    code = "def actions():\n    n = 0\n    for i in range(1000000000):\n        n += 1\n" \
           "    return []\n"
    outcome = service.commands.perform(game, "Anna", "propose", {"changes": [
        {"enact": {"title": "Slow", "text": "s", "code": code}}]})
    assert not outcome.accepted
    assert "actions()" in outcome.message and CALL_STEPS_TEXT in outcome.message


TRANSFORM_FAILS = '''
def transform_proposal_number(game, value, context):
    fail("no number today")
'''


def test_an_aborted_transform_is_recorded(service):
    game = service.commands.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                                        players=["Anna", "Bruno", "Carla"]).game_id
    state = service.reads.load(game)
    rules = [{"id": r["id"], "title": r["title"], "text": r["text"], "code": r["code"],
              "attributes": r["attributes"]} for r in state.rules.values()]
    rules.append({"id": "199", "title": "T", "text": "t", "code": TRANSFORM_FAILS})
    service.commands.create_game("equinomic", game_id="eq2", start="2026-03-01T10:00:00Z",
                                 players=["Anna", "Bruno", "Carla"], rules=rules)
    outcome = service.commands.perform("eq2", "Anna", "propose", {"changes": [
        {"enact": {"title": "A", "text": "a"}}]})
    assert outcome.accepted, outcome.message
    aborted = [e["payload"] for e in outcome.events if e["type"] == "rule_code_aborted"]
    assert aborted and aborted[0]["hook"] == "transform_proposal_number"
    assert aborted[0]["rule"] == "199" and "no number today" in aborted[0]["reason"]


# --- a rule can never keep its own repeal from being adopted -----------------------------
# How long a vote may take with one rule misbehaving, however: that rule's part of the
# command and the grace of a kill (the stated bound), plus, generously, the ordinary work
# of a vote (a worker restarted, a machine loaded by other tests).
VOTE_BOUND = Limits().rule_seconds + KILL_GRACE + 3.0
START = "2026-03-01T10:00:00Z"


def suber_turn(service: Service, game: str, change: dict, choices=("for", "for")
               ) -> tuple[dict, list[float]]:
    """The mover proposes ``change``, P1 and P2 vote, the mover rolls the die: the proposal,
    and how long each vote took to answer."""
    mover = service.reads.load(game).vars["turn"]
    outcome = service.commands.perform(game, mover, "propose", {"changes": [change]})
    assert outcome.accepted, outcome.message
    number = service.reads.load(game).vars["turn_proposal"]
    took = []
    for player, choice in zip(("P1", "P2"), choices, strict=True):
        started = time.monotonic()
        vote = service.commands.perform(game, player, "vote", {"proposal": number,
                                                               "choice": choice})
        took.append(time.monotonic() - started)
        assert vote.accepted, vote.message
    rolled = service.commands.perform(game, mover, "roll", {})  # the vote is over: the turn goes on
    assert rolled.accepted, rolled.message
    return service.reads.load(game).proposals[str(number)], took


def adopt_bomb(service: Service, code: str, game_id: str = "bomb") -> tuple[str, str]:
    game = service.commands.create_game("suber", game_id=game_id, start=START,
                                        players=["P1", "P2"]).game_id
    proposal, took = suber_turn(service, game, {"enact": {"title": "Bomb", "text": "b",
                                                          "code": code}})
    assert proposal["status"] == "adopted"
    assert all(seconds < VOTE_BOUND for seconds in took), took
    [bomb] = [rid for rid, rule in service.reads.load(game).rules.items() if rule["code"] == code]
    return game, bomb


def assert_repealed_in_time(service: Service, game: str, bomb: str) -> list[dict]:
    """The bomb's repeal, voted for by both players, is adopted, each vote in time; the
    aborts recorded meanwhile (only the bomb's) are returned."""
    seq = service.reads.load(game).seq
    proposal, took = suber_turn(service, game, {"repeal": {"rule": bomb}})
    assert proposal["status"] == "adopted"
    assert all(seconds < VOTE_BOUND for seconds in took), took
    state = service.reads.load(game)
    assert not state.rules[bomb]["in_force"]
    assert service.reads.replay(game).to_json() == state.to_json()
    aborted = [e["payload"] for e in service.reads.log(game)
               if e["type"] == "rule_code_aborted" and e["seq"] > seq]
    assert {a["rule"] for a in aborted} <= {bomb}  # never another rule's
    return aborted


def test_the_reported_bomb_cannot_keep_its_repeal_from_being_adopted(sandbox_service):
    service = sandbox_service
    game, bomb = adopt_bomb(service, BOMB)
    # A vote with the bomb in force: the bomb is stopped by its step budget, and every
    # other rule reacts as ever: 105 sees the vote complete, 203 resolves the proposal
    # (rejected: not unanimous), 206 takes 10 points from its author, 202 lets them roll.
    author = service.reads.load(game).vars["turn"]
    points = service.reads.load(game).players[author]["vars"]["points"]
    seq = service.reads.load(game).seq
    proposal, took = suber_turn(service, game, {"enact": {"title": "Dull", "text": "d"}},
                                ("for", "against"))
    assert proposal["status"] == "rejected"
    assert all(seconds < VOTE_BOUND for seconds in took), took
    state = service.reads.load(game)
    assert state.players[author]["vars"]["points"] == points - 10 + state.vars["last_roll"]
    log = [e for e in service.reads.log(game) if e["seq"] > seq]
    assert [e["payload"]["proposal"] for e in log if e["type"] == "notice"
            and e["payload"].get("kind") == "vote_complete"] == [proposal["number"]]
    aborted = [e["payload"] for e in log if e["type"] == "rule_code_aborted"]
    assert [(a["rule"], a["hook"], a["reason"]) for a in aborted] == \
        [(bomb, "on_vote_cast", CALL_STEPS_TEXT)] * 2
    # And the repeal, voted for by both, is adopted.
    assert_repealed_in_time(service, game, bomb)


HELPERS = """
def _some(n):
    return [std.add_var("points", 1, player="P1") for i in range(n)]

def _more(n):
    return _some(n) + _some(n) + [round(i / 3) for i in range(n)]

def on_vote_cast(game, event):
    return _more(150000) + _more(150000)
"""
RECURSION = f"""
def transform_bomb(game, value, context):
    return transform("bomb", value, context) + len({COMPREHENSION})

def on_vote_cast(game, event):
    transform("bomb", 0, {{}})
    return []
"""


@pytest.mark.parametrize("code", [
    f"def on_proposal_resolved(game, event):\n    return {COMPREHENSION}\n",
    f"def on_rule_changed(game, event):\n    return {COMPREHENSION}\n",
    f"def check(game, command):\n    bombs = {COMPREHENSION}\n    return None\n",
    # asked by rule 203 while it counts the votes
    f"def transform_votes_required(game, value, context):\n    bombs = {COMPREHENSION}\n"
    "    return value\n",
    HELPERS,
    RECURSION,
], ids=["on_proposal_resolved", "on_rule_changed", "check", "transform", "helpers",
        "recursion"])
def test_the_bomb_in_any_hook_cannot_keep_its_repeal_from_being_adopted(service, code):
    game, bomb = adopt_bomb(service, code)
    assert_repealed_in_time(service, game, bomb)
    aborted = [e["payload"] for e in service.reads.log(game) if e["type"] == "rule_code_aborted"]
    assert aborted and {a["rule"] for a in aborted} == {bomb}
    assert all(a["reason"].startswith("step budget") or "nested deeper" in a["reason"]
               for a in aborted)


@pytest.fixture
def quick_sandbox_service() -> Iterator[Service]:
    """Real workers with a call's time cut to 0.5 s, so that a kill comes after 1 s."""
    service = open_service("sqlite://", host=SandboxHost(budget=500, command_seconds=2.5))
    yield service
    service.close()


@pytest.mark.parametrize("code, reason", [
    # One step that cannot be interrupted: sorting 3,000 lists of 1,000 elements.
    ("def on_vote_cast(game, event):\n    big = [[0] * 1000] * 3000\n"
     "    for i in range(1000):\n        sorted(big)\n    return []\n",
     "wall-clock limit exceeded (one step"),
    # One allocation past what a call may add to its worker.
    ("def on_vote_cast(game, event):\n    return [len('ab' * (event['seq'] + (1 << 29)))]\n",
     MEMORY_TEXT),
], ids=["uninterruptible-step", "allocation"])
def test_a_rule_whose_worker_must_be_killed_is_stopped_alone(quick_sandbox_service, code,
                                                             reason):
    service = quick_sandbox_service
    game, bomb = adopt_bomb(service, code)
    aborted = assert_repealed_in_time(service, game, bomb)
    assert aborted and all(a["reason"].startswith(reason) for a in aborted)
    assert service.commands.host.pool.respawns >= 1


@pytest.mark.parametrize("literal", ['"ab" * (1 << 28)', '[0] * (len("abcd") << 24)'])
def test_a_huge_top_level_value_is_refused_when_proposed(sandbox_service, literal):
    service = sandbox_service
    game = service.commands.create_game("suber", game_id="big", start=START,
                                        players=["P1", "P2"]).game_id
    code = f"X = {literal}\n\ndef on_vote_cast(game, event):\n    return []\n"
    for _ in range(2):  # refused for what it is, the same way again
        outcome = service.commands.perform(game, "P1", "propose", {"changes": [
            {"enact": {"title": "Big", "text": "b", "code": code}}]})
        assert not outcome.accepted and MEMORY_TEXT in outcome.message
    proposal, _ = suber_turn(service, game, {"enact": {"title": "Fine", "text": "f"}})
    assert proposal["status"] == "adopted"  # and the game plays on


def test_a_dry_run_costs_what_a_command_costs(service):
    code = f"def on_rule_changed(game, event):\n    return {COMPREHENSION}\n"
    game = service.commands.create_game("suber", game_id="dry", start=START,
                                        players=["P1", "P2"]).game_id
    mover = service.reads.load(game).vars["turn"]
    assert service.commands.perform(game, mover, "propose", {"changes": [
        {"enact": {"title": "Bomb", "text": "b", "code": code}}]}).accepted
    dry = service.reads.dry_run(game, service.reads.load(game).vars["turn_proposal"])
    assert dry["refused"] is None
    assert [a["reason"] for a in dry["aborted"]] == [CALL_STEPS_TEXT]

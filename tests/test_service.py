"""The service: commands in, events out; bad input is refused clearly and loses nothing."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from scriba.rulesets import load_ruleset
from scriba.service import Service
from scriba.service.scenario import ScenarioError, load_scenario

FIXTURES = Path(__file__).parent / "fixtures"
START = "2026-03-01T10:00:00Z"


def clockwork(service: Service, players=("Ann", "Ben", "Cid")) -> str:
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    return service.commands.create_game(ruleset, game_id="cw", start=START,
                                        players=list(players)).game_id


def equinomic(service: Service) -> str:
    return service.commands.create_game("equinomic", game_id="eq", start=START,
                                        players=["Anna", "Bruno", "Carla"]).game_id


def assert_replay_equal(service: Service, game: str) -> None:
    assert service.reads.replay(game).to_json() == service.reads.load(game).to_json()


ENACT = {"enact": {"title": "T", "text": "A harmless rule."}}


def test_command_by_a_non_player_is_refused_and_recorded(service):
    game = equinomic(service)
    before = service.reads.load(game).to_json()
    outcome = service.commands.perform(game, "Zoe", "propose", {"changes": [ENACT]})
    assert not outcome.accepted
    assert outcome.message == "Zoe non è un giocatore di questa partita."
    log = service.reads.log(game)
    assert log[-1]["type"] == "command_refused" and log[-1]["payload"]["message"] == outcome.message
    assert '"Zoe"' in service.commands.store.inbound(game)[-1]["raw"]
    after = service.reads.load(game)
    assert {k: v for k, v in after.to_dict().items() if k not in ("seq", "time")} == \
        {k: v for k, v in __import__("json").loads(before).items() if k not in ("seq", "time")}
    assert_replay_equal(service, game)


def test_vote_on_unknown_and_on_closed_proposal(service):
    game = clockwork(service)
    unknown = service.commands.perform(game, "Ann", "vote", {"proposal": "nope", "choice": "aye"})
    assert unknown.message == "There is no proposal nope."
    service.commands.perform(game, "Ann", "propose", {"label": "p1", "changes": [ENACT]})
    service.commands.perform(game, "Ann", "vote", {"proposal": "p1", "choice": "aye"})
    assert service.commands.perform(game, "Ben", "vote", {"proposal": "p1",
                                                          "choice": "aye"}).accepted
    closed = service.commands.perform(game, "Cid", "vote", {"proposal": "p1", "choice": "nay"})
    assert not closed.accepted
    assert closed.message == "Proposal p1 is closed (adopted): no more votes."
    assert_replay_equal(service, game)


def test_second_vote_where_the_rules_forbid_it(service):
    game = clockwork(service, players=("Ann", "Ben", "Cid", "Dan"))
    service.commands.perform(game, "Ann", "propose", {"label": "p1", "changes": [ENACT]})
    assert service.commands.perform(game, "Ben", "vote", {"proposal": "p1",
                                                          "choice": "nay"}).accepted
    again = service.commands.perform(game, "Ben", "vote", {"proposal": "p1", "choice": "aye"})
    assert again.message == "You have already voted on this proposal."
    assert service.reads.load(game).proposals["1"]["votes"]["Ben"]["choice"] == "against"


def test_unclear_vote_word_is_refused(service):
    game = clockwork(service)
    service.commands.perform(game, "Ann", "propose", {"label": "p1", "changes": [ENACT]})
    outcome = service.commands.perform(game, "Ben", "vote", {"proposal": "p1", "choice": "maybe"})
    assert outcome.message == ("'maybe' is not a vote; write one of: aye, nay, for, against, "
                               "abstain.")


def test_action_the_rules_do_not_declare(service):
    game = equinomic(service)
    outcome = service.commands.perform(game, "Anna", "fly", {})
    assert not outcome.accepted
    assert outcome.message.startswith("Non esiste l'azione 'fly' nelle regole in vigore")
    assert "Proponi un cambiamento" in outcome.message and "propose" not in outcome.message


def test_code_that_does_not_compile_is_refused_when_proposed(service):
    game = clockwork(service)
    bad = {"enact": {"title": "Broken", "text": "x", "code": "def on_vote_cast(game, e):\n"
                     "    return [\n\ndef f(:\n"}}
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [bad]})
    assert not outcome.accepted
    assert "does not compile" in outcome.message and "Line 4, column" in outcome.message
    assert service.reads.load(game).proposals == {}


def test_code_that_exhausts_memory_when_compiled_is_refused(sandbox_service):
    service = sandbox_service
    game = clockwork(service)
    hungry = {"enact": {"title": "Hungry", "text": "x", "code": "X = 'x' * 2000000000\n"}}
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [hungry]})
    assert not outcome.accepted and "memory limit exceeded" in outcome.message
    assert service.commands.perform(game, "Ann", "propose", {"changes": [ENACT]}).accepted


@pytest.mark.parametrize("body, reason", [
    ("    n = 0\n    for i in range(1000000000):\n        n += 1\n    return []\n", "step budget"),
    ("    return [{'effect': 'notice', 'text': 'x' * (event['seq'] + 2000000000)}]\n", "memory"),
    ("    return [{'effect': 'teleport'}]\n", "unknown effect"),
    ("    return [{'effect': 'add_var', 'player': 'Nobody', 'name': 'p', 'amount': 1}]\n",
     "no player"),
])
def test_misbehaving_rule_code_is_recorded_and_the_game_goes_on(request, body, reason):
    # Exhausting memory needs a worker with an address-space limit; the rest runs in-process.
    service = request.getfixturevalue("sandbox_service" if reason == "memory" else "service")
    game = clockwork(service)
    code = "def on_vote_cast(game, event):\n" + body
    service.commands.perform(game, "Ann", "propose", {"label": "p1", "changes": [
        {"enact": {"title": "Trouble", "text": "Reacts to votes.", "code": code}}]})
    service.commands.perform(game, "Ann", "vote", {"proposal": "p1", "choice": "aye"})
    service.commands.perform(game, "Ben", "vote", {"proposal": "p1", "choice": "aye"})
    assert service.reads.load(game).rules["3"]["in_force"]
    service.commands.perform(game, "Ann", "propose", {"label": "p2", "changes": [ENACT]})
    outcome = service.commands.perform(game, "Ben", "vote", {"proposal": "p2", "choice": "aye"})
    assert outcome.accepted
    aborted = [e for e in outcome.events if e["type"] == "rule_code_aborted"]
    assert aborted and aborted[0]["payload"]["rule"] == "3"
    assert reason in aborted[0]["payload"]["reason"]
    assert service.reads.load(game).proposals["2"]["votes"]["Ben"]["choice"] == "for"
    assert_replay_equal(service, game)


def test_timers_fire_once_in_order_after_downtime(service):
    game = clockwork(service)
    service.commands.perform(game, "Ann", "set_alarm", {"label": "late", "after": 7200})
    service.commands.perform(game, "Ben", "set_alarm", {"label": "early", "after": 3600})
    service.commands.advance(game, to="2026-03-04T13:00:00Z")  # three days of downtime
    rung = service.reads.load(game).vars["rung"]
    assert rung == [
        "early@2026-03-01T11:00:00Z", "late@2026-03-01T12:00:00Z",
        "bell@2026-03-01T22:00:00Z", "bell@2026-03-02T22:00:00Z", "bell@2026-03-03T22:00:00Z",
    ]
    service.commands.advance(game, to="2026-03-04T13:00:00Z")
    service.commands.perform(game, "Ann", "propose", {"changes": [ENACT]})
    assert service.reads.load(game).vars["rung"] == rung  # nothing fires twice
    assert_replay_equal(service, game)


def test_due_timers_fire_before_a_command_in_a_real_clock_game(service):
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    state = service.commands.create_game(ruleset, game_id="rt", start="2025-11-01T00:00:00Z",
                                         players=["Ann", "Ben"], clock="real")
    service.commands.perform(state.game_id, "Ann", "set_alarm", {"label": "a", "after": 60})
    rung = service.reads.load(state.game_id).vars["rung"]
    assert rung[0].startswith("bell@2025-11-01T12:00:00Z")
    assert len(rung) > 300  # a year of daily bells, each exactly once
    assert len(rung) == len(set(rung))


def test_loading_from_a_snapshot_equals_replay(tmp_path, make_service):
    url = f"sqlite:///{tmp_path / 'g.db'}"
    first = make_service(url, snapshot_every=10)
    game = clockwork(first)
    for i in range(30):
        first.commands.perform(game, "Ann", "set_alarm", {"label": f"a{i}", "after": 60 * (i + 1)})
    first.commands.advance(game, by=86400)
    first.close()
    second = make_service(url)
    assert second.commands.store.latest_snapshot(game) is not None
    assert second.reads.load(game).to_json() == second.reads.replay(game).to_json()
    second.close()


def test_export_then_import_reproduces_the_game(service):
    game = equinomic(service)
    service.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]})
    service.commands.perform(game, "Bruno", "vote", {"proposal": "p1", "choice": "favorevole"})
    lines = list(service.commands.export_game(game))
    copy = service.commands.import_game(lines, game_id="eq-copy")
    original = service.reads.load(game).to_dict()
    assert {**copy.to_dict(), "game_id": game, "name": original["name"]} == original
    with pytest.raises(ValueError, match="missing or out of order"):
        service.commands.import_game(lines[:3] + lines[4:], game_id="broken")


def test_ruleset_at_a_past_point(service):
    game = clockwork(service)
    service.commands.perform(game, "Ann", "propose", {"label": "p1",
                                                      "changes": [{"repeal": {"rule": "2"}}]})
    before = service.reads.load(game).seq
    service.commands.perform(game, "Ann", "vote", {"proposal": "p1", "choice": "aye"})
    service.commands.perform(game, "Ben", "vote", {"proposal": "p1", "choice": "aye"})
    assert not service.reads.load(game).rules["2"]["in_force"]
    assert service.reads.replay(game, upto_seq=before).rules["2"]["in_force"]


@pytest.mark.parametrize("text, message", [
    ("ruleset: equinomic\nsteps: [\n", "not valid YAML"),
    ("- just a list\n", "YAML mapping"),
    ("ruleset: equinomic\nplayerz: [A]\n", "unknown scenario keys: playerz"),
    ("ruleset: equinomic\nsteps:\n  - {by: Anna}\n", "step 0: 'by' needs 'do'"),
    ("ruleset: equinomic\nsteps:\n  - {wait: soon}\n", "step 0: not a duration"),
    ("ruleset: equinomic\nstart: yesterday\n", "start is not an ISO time"),
])
def test_malformed_scenarios_are_refused_clearly(text, message):
    with pytest.raises(ScenarioError, match=message):
        load_scenario(text)


def test_worker_killed_during_a_command_never_half_applies(sandbox_service):
    service = sandbox_service
    game = clockwork(service)
    slow = ("def on_vote_cast(game, event):\n    n = 0\n    for i in range(60000000):\n"
            "        n += 1\n    return [{'effect': 'add_var', 'player': event['player'],"
            " 'name': 'points', 'amount': 1}]\n")
    service.commands.perform(game, "Ann", "propose", {"label": "p1", "changes": [
        {"enact": {"title": "Slow", "text": "Counts slowly.", "code": slow}}]})
    service.commands.perform(game, "Ann", "vote", {"proposal": "p1", "choice": "aye"})
    service.commands.perform(game, "Ben", "vote", {"proposal": "p1", "choice": "aye"})
    service.commands.host.budget = 10**7  # let the slow rule run long enough to be killed mid-call
    service.commands.perform(game, "Ann", "propose", {"label": "p2", "changes": [ENACT]})
    victims = service.commands.host.pool.pids()

    def kill_soon() -> None:
        time.sleep(0.3)
        for pid in victims:
            os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    outcome = service.commands.perform(game, "Cid", "vote", {"proposal": "p2", "choice": "aye"})
    killer.join()
    assert outcome.accepted
    state = service.reads.load(game)
    assert state.players["Cid"]["vars"]["points"] == 1  # the retried call counted once
    assert [e["type"] for e in outcome.events].count("vote_cast") == 1
    assert service.commands.host.pool.respawns >= 1
    assert_replay_equal(service, game)


@pytest.mark.parametrize("change", [
    {"amend_paragraph": {"rule": "1", "paragraph": 1, "add": True, "text": None}},
    {"amend": {"rule": "1", "text": ["not", "text"]}},
    {"enact": {"title": {"a": 1}, "text": "x"}},
])
def test_malformed_rule_changes_are_refused_not_crashed(service, change):
    game = clockwork(service)
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [change]})
    assert not outcome.accepted and outcome.message.startswith("A rule change must look like")


def test_a_fault_in_scriba_itself_refuses_the_command_and_keeps_the_input(service,
                                                                          monkeypatch):
    game = equinomic(service)

    def broken(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(service.commands.engine, "handle", broken)
    outcome = service.commands.perform(game, "Anna", "pass", {})
    assert not outcome.accepted
    assert outcome.message.startswith("Scriba ha avuto un errore con questo comando")
    assert service.reads.log(game)[-1]["payload"]["reason"] == "internal_error"
    assert service.commands.store.inbound(game)[-1]["status"] == "refused"
    monkeypatch.undo()
    assert service.commands.perform(game, "Anna", "pass", {}).accepted  # the game goes on

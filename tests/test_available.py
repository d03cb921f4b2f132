"""What a player is offered now (``reads.actions_for``): only what the rules in force would
accept, with the values open for each parameter, the move owed first — on Suber, played
as its whole-game scenario begins (Anna, Bruno, Carla; Carla is the Judge)."""

from __future__ import annotations

import pytest

from scriba.kernel.engine import Command, Engine
from scriba.kernel.state import GameState
from scriba.rulecode import std
from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.actions import ActionInfo
from scriba.service.scenario import load_scenario, run_scenario

PROPOSAL = [{"enact": {"title": "Greetings", "text": "Players may bring greetings."}}]


def _suber(service: Service, steps: int) -> str:
    """A Suber game after the first ``steps`` steps of its whole-game scenario."""
    scenario = load_scenario(BUNDLED / "suber/scenarios/whole_game.yaml")
    scenario["steps"] = scenario["steps"][:steps]
    scenario.pop("expect", None)
    result = run_scenario(service.commands, scenario)
    assert result.errors == []
    return result.game_id


def _offered(service: Service, game: str, player: str) -> dict[str, ActionInfo]:
    return {a.name: a for a in service.reads.actions_for(game, player)}


def test_the_mover_is_offered_the_proposal_as_owed_and_the_others_no_proposal(
        service: Service) -> None:
    game = _suber(service, 1)
    anna = service.reads.actions_for(game, "Anna")
    assert anna[0].name == "propose" and anna[0].due
    assert "rule 202" in anna[0].due_reason and anna[0].deadline is None
    for other in ("Bruno", "Carla"):  # off turn (rule 202)
        offered = _offered(service, game, other)
        assert "propose" not in offered and "roll" not in offered
    # Nothing is open: nobody is offered a vote.
    assert all("vote" not in _offered(service, game, p) for p in ("Anna", "Bruno", "Carla"))


def test_a_vote_is_offered_on_the_open_proposal_until_the_player_has_voted(
        service: Service) -> None:
    game = _suber(service, 2)  # Anna proposed p301
    for player in ("Anna", "Bruno", "Carla"):
        vote = _offered(service, game, player)["vote"]
        assert vote.options["proposal"] == ["301"]
        # Suber's four words mean two choices: one of each.
        assert vote.options["choice"] == ["for", "against"]
        assert "propose" not in _offered(service, game, player)  # the turn's proposal is made
    service.commands.perform(game, "Anna", "vote", {"proposal": "p301", "choice": "for"})
    assert "vote" not in _offered(service, game, "Anna")  # rule 207: one vote each
    assert _offered(service, game, "Bruno")["vote"].options["proposal"] == ["301"]


def test_the_roll_is_owed_by_the_mover_once_the_vote_is_over(service: Service) -> None:
    game = _suber(service, 5)  # all three voted: p301 adopted, Anna must roll
    anna = service.reads.actions_for(game, "Anna")
    assert anna[0].name == "roll" and anna[0].due
    assert [a.name for a in anna if a.due] == ["roll"]
    assert "roll" not in _offered(service, game, "Bruno")
    outcome = service.commands.perform(game, "Anna", "roll", {})
    assert outcome.accepted
    bruno = service.reads.actions_for(game, "Bruno")
    assert bruno[0].name == "propose" and bruno[0].due
    assert "roll" not in _offered(service, game, "Anna")


def test_a_reader_and_a_non_player_are_offered_nothing_a_newcomer_may_join(
        service: Service) -> None:
    game = _suber(service, 1)
    assert service.reads.actions_for(game, None) == []
    assert service.reads.actions_for(game, "Zed") == []  # Suber has no joining action
    assert service.reads.permitted_actions(game, None) == []


def test_a_newcomer_is_offered_the_join_and_the_seats_find_it(service: Service) -> None:
    service.commands.create_game("agora", game_id="ag", players=["Murphy"],
                                 start="2026-01-01T00:00:00Z")
    # What an invitation joins with (seats._joining_action): Agora's register (rule 869).
    assert [a.name for a in service.reads.permitted_actions("ag", None)] == ["register"]
    assert [a.name for a in service.reads.actions_for("ag", "Zed")] == ["register"]
    assert "register" not in _offered(service, "ag", "Murphy")  # already a player
    assert service.seats._joining_action("ag") == "register"


def test_a_page_view_costs_two_requests_to_the_rule_host_at_most(service: Service) -> None:
    """Whatever the actions and their candidates: the actions asked with nothing set,
    then the candidates of those not refused."""
    host = service.reads.engine.host
    if not hasattr(host, "calls"):
        pytest.skip("a host that does not count its requests")
    game = _suber(service, 2)
    service.reads.actions_for(game, "Bruno")  # the rules' order, decided once per state
    for player in ("Anna", "Bruno", "Carla"):
        before = host.calls
        service.reads.actions_for(game, player)
        assert host.calls - before <= 2


# --- the probe in the kernel, with a rule of its own ------------------------------------

RULE = '''
def actions():
    return [{"name": "pay", "params": {"to": "player", "amount": "int"}},
            {"name": "sing"}, {"name": "boom", "params": {"to": "player"}}]

def check_pay(game, command):
    to = std.arg(command, "to")
    if to == command["actor"]:
        return "Not to yourself."
    if std.arg(command, "amount", 0) > 10:
        return "At most 10."
    return None

def check_sing(game, command):
    return "Nobody sings here."

def check_boom(game, command):
    return command["args"]["missing"]  # fails: counts as not refused while probing

def due(game):
    return [std.due("pay", "Bea", until = "2026-01-02T00:00:00Z", why = "You owe Anna.")]
'''


def _game(service: Service) -> tuple[Engine, GameState]:
    state = service.commands.create_game(
        "suber", game_id="probe", seed=1, start="2026-01-01T00:00:00Z",
        players=["Anna", "Bea"])
    state = service.reads.replay("probe")
    engine = service.reads.engine
    rule = {"id": "999", "title": "Probe", "text": "A rule to probe.", "code": RULE,
            "in_force": True, "attributes": {}, "history": [], "revision": 0}
    state.rules["999"] = rule
    return engine, state


def test_the_probe_removes_refused_values_and_actions_and_lists_the_owed_first(
        service: Service) -> None:
    engine, state = _game(service)
    before = state.to_json()
    now = "2026-01-01T01:00:00Z"
    bea = {a.action: a for a in engine.available(state, "Bea", now)}
    assert bea["pay"].options == {"to": ["Anna"]}  # not to herself
    assert bea["pay"].due and bea["pay"].deadline == "2026-01-02T00:00:00Z"
    assert bea["pay"].reason == "You owe Anna."
    assert engine.available(state, "Bea", now)[0].action == "pay"
    assert "sing" not in bea
    assert bea["boom"].options == {"to": ["Anna", "Bea"]}
    anna = {a.action: a for a in engine.available(state, "Anna", now)}
    assert not anna["pay"].due
    assert state.to_json() == before  # nothing applied
    with pytest.raises(Exception, match="At most 10"):
        engine.handle(state, Command("Bea", "pay", {"to": "Anna", "amount": 11}), now)


def test_std_arg_and_due_check_what_they_are_given() -> None:
    assert std.v1.arg({"args": {"a": 1}}, "a") == 1
    assert std.v1.arg({"args": {}}, "a", 5) == 5
    with pytest.raises(std.v1.StdError, match="std.arg"):
        std.v1.arg("nope", "a")
    assert std.v1.due("roll", "Anna") == {"action": "roll", "player": "Anna", "until": None,
                                         "why": ""}
    for bad in ({"action": None, "player": "Anna"}, {"action": "roll", "player": 3},
                {"action": "roll", "player": "Anna", "until": 5}):
        with pytest.raises(std.v1.StdError, match="std.due"):
            std.v1.due(**bad)

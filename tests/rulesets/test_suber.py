"""The `suber` ruleset: what its scenarios cannot say on their own.

Determinism of the die (same seed, same points; another seed, other points), replay of
every scenario, the precedence order of rules 110/211/213, rule 114, rule 209 against a
transmutation, rule 108's renumbering of amended rules, and the status line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scriba.rulesets import load_ruleset
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

SCENARIOS = sorted((Path(load_ruleset("suber").path) / "scenarios").glob("*.yaml"))
START = "2026-03-01T10:00:00Z"


@pytest.fixture(scope="module")
def service(make_service):
    service = make_service("sqlite://")
    yield service
    service.close()


def act(service: Service, game: str, actor: str, action: str, **args) -> None:
    outcome = service.commands.perform(game, actor, action, args)
    assert outcome.accepted, outcome.message


def play_turn(service: Service, game: str, mover: str, change: dict, players: list[str]) -> None:
    act(service, game, mover, "propose", changes=[change])
    for player in players:
        act(service, game, player, "vote", proposal=service.reads.load(game).vars["turn_proposal"],
            choice="for")
    act(service, game, mover, "roll")


def dice_game(service: Service, seed: int, turns: int = 9) -> tuple[dict, list[int]]:
    players = ["Anna", "Bruno", "Carla"]
    game = service.commands.create_game("suber", seed=seed, start=START, players=players).game_id
    rolls = []
    for turn in range(turns):
        mover = service.reads.load(game).vars["turn"]
        play_turn(service, game, mover, {"enact": {"title": f"R{turn}", "text": f"Rule {turn}."}},
                  players)
        rolls.append(service.reads.load(game).vars["last_roll"])
    points = {p: v["vars"]["points"] for p, v in service.reads.load(game).players.items()}
    return points, rolls


def test_initial_set(service):
    ruleset = load_ruleset("suber")
    ids = [rule["id"] for rule in ruleset.rules]
    assert ids == [str(n) for n in range(101, 117)] + [str(n) for n in range(201, 214)]
    for rule in ruleset.rules:
        assert rule["attributes"]["mutable"] is (rule["id"] >= "201")
        assert rule["text"].strip() and rule["title"]
    assert ruleset.language == "en"
    assert ruleset.settings["first_proposal"] == 301


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_passes_and_replays(service, path):
    result = run_scenario(service.commands, load_scenario(path.read_text(encoding="utf-8")))
    assert result.errors == []
    reads = service.reads
    assert reads.replay(result.game_id).to_dict() == reads.load(result.game_id).to_dict()


def test_same_seed_same_dice(service):
    points, rolls = dice_game(service, seed=42)
    again, rolls_again = dice_game(service, seed=42)
    assert (points, rolls) == (again, rolls_again)
    assert all(1 <= roll <= 6 for roll in rolls)
    assert points == {"Anna": sum(rolls[0::3]), "Bruno": sum(rolls[1::3]),
                      "Carla": sum(rolls[2::3])}


def test_other_seeds_other_dice(service):
    rolls = {seed: tuple(dice_game(service, seed=seed, turns=6)[1]) for seed in (1, 2, 3)}
    assert len(set(rolls.values())) > 1
    assert len({roll for sequence in rolls.values() for roll in sequence}) >= 4


def test_precedence_immutable_first_then_213(service):
    game = service.commands.create_game("suber", seed=1, start=START, players=["Anna",
                                                                               "Bruno"]).game_id
    order = service.commands.engine.precedence(service.reads.load(game))
    assert order == [str(n) for n in range(101, 117)] + ["213"] + \
        [str(n) for n in range(201, 213)]
    # A rule made mutable joins the mutable ones; 213 still comes first among them.
    play_turn(service, game, "Anna", {"transmute": {"rule": "113", "mutable": True}},
              ["Anna", "Bruno"])
    play_turn(service, game, "Bruno", {"transmute": {"rule": "210", "mutable": False}},
              ["Anna", "Bruno"])
    order = service.commands.engine.precedence(service.reads.load(game))
    immutable = [str(n) for n in range(101, 117) if n != 113] + ["302"]
    assert order == immutable + ["213"] + \
        [str(n) for n in range(201, 213) if n != 210] + ["301"]


def test_114_keeps_one_mutable_rule(service):
    rules = [dict(rule, attributes={"mutable": rule["id"] == "202"})
             for rule in load_ruleset("suber").rules]
    game = service.commands.create_game("suber", seed=1, start=START, players=["Anna", "Bruno"],
                                        rules=rules).game_id
    for change in ({"repeal": {"rule": "202"}}, {"transmute": {"rule": "202", "mutable": False}}):
        outcome = service.commands.perform(game, "Anna", "propose", {"changes": [change]})
        assert not outcome.accepted
        assert "at least one mutable rule (rule 114)" in outcome.message
    # Adding a rule is always fine.
    act(service, game, "Anna", "propose",
        changes=[{"enact": {"title": "More", "text": "Another rule."}}])


def test_209_counts_a_transmutation(service):
    extra = [{"id": str(300 + n), "title": f"Extra {n}", "text": f"Extra rule {n}.",
              "code": None, "attributes": {"mutable": True}} for n in range(1, 13)]
    game = service.commands.create_game("suber", seed=1, start=START, players=["Anna", "Bruno"],
                                        rules=load_ruleset("suber").rules + extra).game_id
    transmute = {"transmute": {"rule": "113", "mutable": True}}
    outcome = service.commands.perform(game, "Anna", "propose", {"changes": [transmute]})
    assert not outcome.accepted
    assert "more than 25 mutable rules (rule 209): this change would make 26" in outcome.message
    # Making a rule immutable frees a place.
    act(service, game, "Anna", "propose",
        changes=[{"transmute": {"rule": "301", "mutable": False}}])


def test_108_renumbers_paragraph_amendments_and_new_titles(service):
    players = ["Anna", "Bruno"]
    game = service.commands.create_game("suber", seed=1, start=START, players=players).game_id
    text = "Each player always has exactly one vote, cast openly."
    play_turn(service, game, "Anna",
              {"amend_paragraph": {"rule": "207", "paragraph": 1, "text": text}}, players)
    play_turn(service, game, "Bruno", {"retitle": {"rule": "202", "title": "A turn"}}, players)
    state = service.reads.load(game)
    assert "207" not in state.rules and "202" not in state.rules
    assert state.rules["301"]["text"].endswith("cast openly.")
    assert [h["change"] for h in state.rules["301"]["history"]] == \
        ["initial", "amend_paragraph", "renumber"]
    assert state.rules["302"]["title"] == "A turn"
    # Rule 202's code moved with it: turns go on, and a second vote is still refused (207).
    play_turn(service, game, "Anna", {"enact": {"title": "Hats", "text": "Hats on."}}, players)
    assert service.reads.load(game).rules["303"]["title"] == "Hats"
    act(service, game, "Bruno", "propose", changes=[{"repeal": {"rule": "303"}}])
    act(service, game, "Anna", "vote", proposal=304, choice="for")
    outcome = service.commands.perform(game, "Anna", "vote", {"proposal": 304, "choice": "against"})
    assert "exactly one vote (rule 301)" in outcome.message


def test_status_line(service):
    game = service.commands.create_game("suber", seed=1, start=START,
                                        players=["Anna", "Bruno", "Carla"]).game_id
    assert service.reads.query(game, "status") == \
        "Round 1, turn 1: Anna moves and must propose a rule-change. Judge: Carla."
    act(service, game, "Anna", "propose", changes=[{"repeal": {"rule": "210"}}])
    act(service, game, "Bruno", "vote", proposal=301, choice="for")
    assert service.reads.query(game,
                               "status") == ("Round 1, turn 1: Anna moves; proposal 301 awaits "
                                             "the votes of Anna, Carla. Judge: Carla.")


def test_a_leaving_judge_passes_the_question_and_a_leaving_mover_settles_the_turn(service):
    """212 on cases: the Judge who leaves is replaced by the player now before the mover,
    of the office and of the question awaiting a ruling; the mover who leaves ends the
    turn, which makes its ruling final and lets its unanswered question lapse."""
    players = ["Anna", "Bruno", "Carla", "Dora"]
    game = service.commands.create_game("suber", seed=3, start=START, players=players).game_id
    assert service.reads.load(game).offices["Judge"] == "Dora"
    act(service, game, "Anna", "propose", changes=[{"enact": {"title": "T", "text": "T."}}])
    act(service, game, "Bruno", "call_for_judgment", question="Is T a rule?", rule="202")
    case = service.reads.load(game).cases["1"]
    assert (case["judge"], case["concerns"]) == ("Dora", [{"kind": "rule", "id": "202"}])
    act(service, game, "Dora", "leave")
    state = service.reads.load(game)
    assert state.offices["Judge"] == "Carla" and state.cases["1"]["judge"] == "Carla"
    refused = service.commands.perform(game, "Bruno", "judge", {"case": 1, "judgment": "No."})
    assert not refused.accepted
    act(service, game, "Carla", "judge", case=1, judgment="Yes, T is a rule.")
    act(service, game, "Bruno", "call_for_judgment", question="May Anna leave now?")
    assert service.reads.load(game).cases["2"]["judge"] == "Carla"
    act(service, game, "Anna", "leave")
    state = service.reads.load(game)
    assert state.vars["turn"] == "Bruno" and state.offices["Judge"] == "Carla"
    first, second = state.cases["1"], state.cases["2"]
    assert (first["status"], first["steps"][-1]["note"]) == ("closed", "final")
    assert first["judgment"]["judgment"] == "Yes, T is a rule."
    assert (second["status"], second["steps"][-1]["note"]) == ("closed", "lapsed")
    assert second["judgment"] is None
    assert service.reads.replay(game).to_dict() == state.to_dict()

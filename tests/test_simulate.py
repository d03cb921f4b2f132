"""The proposal lab's engine tests itself (issue 22, item 5): bots play every bundled
ruleset, small and seeded, and nothing breaks; planted rules are found, or (harmless) not.

Each game runs in its own in-memory service with the real sandbox."""

from __future__ import annotations

import json

import pytest
from test_cli import scriba

from scriba.service import open_service
from scriba.service.lab.bots import Bot
from scriba.service.lab.findings import describe, paired_runaways, runaways
from scriba.service.lab.simulate import simulate
from scriba.service.rulesets import list_rulesets

RULESETS = sorted(r.id for r in list_rulesets())

# Planted in nomic3, in force from the start, played by bots that always vote (for,
# against): Ada, the rule's author, gains a point whenever anyone votes or changes a vote.
FARM = {"id": "900", "title": "Reward for voting", "attributes": {},
        "text": "Ada gains a point whenever a vote is cast or changed.",
        "code": 'def on_vote_cast(game, event):\n'
                '    return [std.add_var("points", 1, player = "Ada")]\n'}
HARMLESS = {"id": "900", "title": "Welcome to voters", "attributes": {},
            "text": "Every vote is welcome.",
            "code": "def on_vote_cast(game, event):\n    return []\n"}

# A rule whose check refuses every action: nothing is ever offered, no deadline is left.
BLOCKING = {"id": "900", "title": "Nothing more", "attributes": {},
            "text": "Nothing may be done.",
            "code": 'def check(game, command):\n    return "Nothing may be done."\n'}
# A rule that spends every step it may on every vote.
SPENDTHRIFT = {"id": "900", "title": "Counting", "attributes": {}, "text": "Count forever.",
               "code": 'def on_vote_cast(game, event):\n'
                       '    n = 0\n'
                       '    for i in range(100000000):\n'
                       '        n += i\n'
                       '    return []\n'}
# A rule that breaks on every vote.
BROKEN = {"id": "900", "title": "Broken", "attributes": {}, "text": "Votes break it.",
          "code": 'def on_vote_cast(game, event):\n    fail("broken on purpose")\n'}


@pytest.mark.parametrize("ruleset", RULESETS)
def test_random_bots_play_every_bundled_ruleset_without_a_fault(ruleset):
    (found,), _ = simulate(open_service, ruleset, games=1, turns=10, bots=["random"], seed=1)
    assert found.actions > 0, "the bots found nothing to do"
    assert found.internal_errors == []
    assert found.replay_matches is True
    assert found.refused == [], "\n".join(describe(found))
    assert found.invariants == [], "\n".join(describe(found))


def test_a_game_that_ends_without_a_winner_says_why():
    # Seed 7: in DecameroNomic's 19th Giornata only the King had proposed, so rule 7 can
    # crown no one and ends the game.
    (found,), _ = simulate(open_service, "decameronomic", games=1, turns=20, bots=["random"],
                           seed=7)
    assert found.ended and found.winners == [] and "(regola 7)" in found.end_reason
    told = describe(found)[0]
    assert f"ended in turn {found.end_turn} with no winner. Why: Nessun Giocatore" in told
    assert "nobody" not in told and "None" not in told


def test_the_same_seed_plays_the_same_games_in_one_process_or_two():
    first, _ = simulate(open_service, "decameronomic-rimaneggiato", 2, 4, ["random", "for"], seed=7)
    again, _ = simulate(open_service, "decameronomic-rimaneggiato", 2, 4, ["random", "for"], seed=7,
                        workers=2)
    assert [f.game for f in again] == [1, 2]
    assert [f.to_dict() for f in first] == [f.to_dict() for f in again]
    other, _ = simulate(open_service, "decameronomic-rimaneggiato", 2, 4, ["random", "for"], seed=8)
    played = [{**f.to_dict(), "seed": None} for f in first]
    assert [{**f.to_dict(), "seed": None} for f in other] != played


def test_a_rule_farming_votes_is_found_as_a_runaway():
    (found,), _ = simulate(open_service, "nomic3", 1, 12, ["for", "against"], seed=1,
                           extra_rules=[FARM])
    assert [(f["who"], f["variable"]) for f in found.findings() if f["kind"] == "runaway"] \
        == [("Ada", "points")]
    assert "Runaway: Ada's points went from" in "\n".join(describe(found))
    assert "without the proposal" in "\n".join(describe(found))


def test_a_harmless_rule_gives_no_finding():
    (found,), _ = simulate(open_service, "nomic3", 1, 12, ["for", "against"], seed=1,
                           extra_rules=[HARMLESS])
    assert found.problems == 0, "\n".join(describe(found))
    assert found.internal_errors == [] and found.replay_matches is True


def test_a_rule_refusing_everything_is_found_as_a_stall():
    (found,), _ = simulate(open_service, "suber", 1, 3, ["random"], seed=1, extra_rules=[BLOCKING])
    assert found.stall_turn == 1 and found.actions == 0
    assert {"kind": "stall", "turn": 1} in found.findings()
    assert "Stalled in turn 1" in "\n".join(describe(found))


def test_a_rule_breaking_on_votes_is_found_as_aborts():
    (found,), _ = simulate(open_service, "nomic3", 1, 6, ["for", "against"], seed=1,
                           extra_rules=[BROKEN])
    (abort,) = [f for f in found.findings() if f["kind"] == "abort"]
    assert (abort["rule"], abort["hook"]) == ("900", "on_vote_cast") and found.budget == []
    assert abort["count"] >= 1 and "broken on purpose" in abort["reason"]
    assert abort["first_turn"] >= 1
    told = "\n".join(describe(found))
    assert "Rule 900 aborted" in told and "error: fail: broken on purpose" in told
    assert "Traceback" not in told


def test_a_runaway_is_steady_growth_not_a_value_set_once():
    start = {("Ada", "points"): 2.0, ("Bo", "due"): 0.0, ("game", "day"): 0.0,
             ("Cy", "points"): 3.0}
    middle = {("Ada", "points"): 20.0, ("Bo", "due"): 100.0, ("game", "day"): 1.7e9,
              ("Cy", "points"): 9.0}
    end = {("Ada", "points"): 41.0, ("Bo", "due"): 100.0, ("game", "day"): 1.8e9,
           ("Cy", "points"): 14.0}
    assert runaways(start, middle, end) == [
        {"who": "Ada", "variable": "points", "start": 2, "end": 41, "baseline": None}]


def test_an_idle_bot_never_acts_and_a_for_bot_votes_for():
    class Offered:
        def __init__(self, name, kind, params, options):
            self.name, self.kind, self.params, self.options = name, kind, params, options
            self.choices, self.due = {"for": "for", "against": "against"}, False

    vote = Offered("vote", "vote", {"proposal": "proposal", "choice": "any"},
                   {"proposal": ["301"], "choice": ["for", "against"]})
    press = Offered("press", "plain", {"text": "str"}, {})
    assert Bot("idle", "s").choose([vote, press], ["Ada"]) is None
    assert Bot("for", "s").choose([press, vote], ["Ada"]) == (
        "vote", {"proposal": "301", "choice": "for"})
    assert Bot("against", "s").choose([vote], ["Ada"])[1]["choice"] == "against"
    name, args = Bot("random", "s").choose([press], ["Ada"])
    assert name == "press" and isinstance(args["text"], str) and args["text"]
    with pytest.raises(ValueError):
        Bot("clever", "s")


def test_the_command_tells_the_findings_in_sentences_and_as_json():
    out = scriba("simulate", "decameronomic-rimaneggiato", "--turns", "3", "--seed", "2").stdout
    assert "Game 1 (decameronomic-rimaneggiato, bots random, random, random)" in out
    assert "turns per second" in out and "{" not in out and "None" not in out
    data = json.loads(scriba("simulate", "decameronomic-rimaneggiato", "--turns", "3",
                             "--seed", "2", "--bots", "for,idle", "--json").stdout)
    assert data["games"][0]["bots"] == ["for", "idle", "for"]
    assert data["games"][0]["replay_matches"] is True
    assert [f["kind"] for f in data["games"][0]["findings"]] in ([], ["ended"])
    refused = scriba("simulate", "suber", "--bots", "clever", check=False)
    assert refused.returncode != 0 and "random, for, against, self, idle" in refused.stdout \
        + refused.stderr and "Traceback" not in refused.stderr


def test_a_rule_out_of_steps_is_told_apart_from_other_aborts():
    (found,), _ = simulate(open_service, "nomic3", 1, 4, ["for", "against"], seed=1,
                           extra_rules=[SPENDTHRIFT])
    kinds = [f["kind"] for f in found.findings()]
    assert "budget" in kinds and "abort" not in kinds
    (budget,) = [f for f in found.findings() if f["kind"] == "budget"]
    assert (budget["rule"], budget["hook"]) == ("900", "on_vote_cast") and budget["count"] >= 1
    assert "Rule 900 ran out of its budget" in "\n".join(describe(found))


# DecameroNomic's invariants (rules 7 and 2300), broken on purpose by a rule in force from
# the start: the first Giornata begins with nobody as King and the Crown in debt.
BREAKER = {"id": "900", "title": "Disorder", "attributes": {}, "text": "No King, debts.",
           "code": 'def on_game_started(game, event):\n'
                   '    return [std.set_var("day", 1), std.set_var("crown_treasury", -5)]\n'}


def test_the_invariants_a_ruleset_declares_are_reported_once_with_their_turn():
    (found,), _ = simulate(open_service, "decameronomic", 1, 2, ["idle"], seed=1,
                           extra_rules=[BREAKER])
    said = {f["rule"]: f for f in found.findings() if f["kind"] == "invariant"}
    assert set(said) == {"7", "2300"}, "\n".join(describe(found))
    assert "il Re non c'è" in said["7"]["statement"]
    assert "Tesoro della Corona non è mai negativo" in said["2300"]["statement"]
    assert [f["turn"] for f in said.values()] == [1, 1]
    assert len([f for f in found.findings() if f["kind"] == "invariant"]) == 2  # once each


def test_the_self_interested_bot_votes_for_what_raises_its_own_score():
    class Offered:
        def __init__(self, name, kind, params, options):
            self.name, self.kind, self.params, self.options = name, kind, params, options
            self.choices, self.due = {"for": "for", "against": "against"}, False

    vote = Offered("vote", "vote", {"proposal": "proposal", "choice": "any"},
                   {"proposal": ["7", "8"], "choice": ["for", "against"]})
    gains = {"7": 3.0, "8": -1.0}
    asked = []
    bot = Bot("self", "s")
    assert bot.choose([vote], ["Ada"], lambda p: asked.append(p) or gains[p]) == (
        "vote", {"proposal": "7", "choice": "for"})
    vote.options["proposal"] = ["8"]
    assert bot.choose([vote], ["Ada"], lambda p: asked.append(p) or gains[p]) == (
        "vote", {"proposal": "8", "choice": "against"})
    assert asked == ["7", "8"]


def test_a_paired_runaway_is_a_steadily_growing_excess_not_a_one_time_gift():
    ada = ("Ada", "points")
    without = ({ada: 7.0}, {ada: 7.0}, {ada: 14.0})
    farmed = ({ada: 10.0}, {ada: 13.0}, {ada: 26.0})  # 3, 6, 12 more than without
    gift = ({ada: 17.0}, {ada: 17.0}, {ada: 24.0})  # 10 more, from the start to the end
    assert paired_runaways(farmed, without) == [
        {"who": "Ada", "variable": "points", "start": 10, "end": 26, "baseline": 14}]
    assert paired_runaways(gift, without) == []

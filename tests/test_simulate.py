"""The proposal lab's engine tests itself (issue 22, item 5): bots play every bundled
ruleset, small and seeded, and nothing breaks; planted rules are found, or (harmless) not.

Each game runs in its own in-memory service with the real sandbox."""

from __future__ import annotations

import json

import pytest
from test_cli import scriba

from scriba.service import open_service
from scriba.service.lab.bots import Bot
from scriba.service.lab.findings import describe, runaways
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
    assert [(r["who"], r["name"]) for r in found.runaways] == [("Ada", "points")]
    assert "Runaway: Ada's points ended at" in "\n".join(describe(found))


def test_a_harmless_rule_gives_no_finding():
    (found,), _ = simulate(open_service, "nomic3", 1, 12, ["for", "against"], seed=1,
                           extra_rules=[HARMLESS])
    assert found.problems == 0, "\n".join(describe(found))
    assert found.internal_errors == [] and found.replay_matches is True


def test_a_rule_refusing_everything_is_found_as_a_stall():
    (found,), _ = simulate(open_service, "suber", 1, 3, ["random"], seed=1, extra_rules=[BLOCKING])
    assert found.stall_turn == 1 and found.actions == 0
    assert "Stalled in turn 1" in "\n".join(describe(found))


def test_a_rule_breaking_on_votes_is_found_as_aborts():
    (found,), _ = simulate(open_service, "nomic3", 1, 6, ["for", "against"], seed=1,
                           extra_rules=[BROKEN])
    assert [(a["rule"], a["hook"]) for a in found.aborts] == [("900", "on_vote_cast")]
    assert found.aborts[0]["count"] >= 1 and "broken on purpose" in found.aborts[0]["reason"]
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
        {"who": "Ada", "name": "points", "start": 2, "end": 41}]


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
    refused = scriba("simulate", "suber", "--bots", "clever", check=False)
    assert refused.returncode != 0 and "random, for, against, idle" in refused.stdout \
        + refused.stderr and "Traceback" not in refused.stderr

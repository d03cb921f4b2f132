"""Hooks for one action: ``check_<action>`` and ``on_action_<action>``, dispatched by the
kernel, asked only about their action, and after the rule's general hook."""

from __future__ import annotations

from pathlib import Path

from scriba.kernel import registry
from scriba.rulesets import load_ruleset
from scriba.service import Service

FIXTURES = Path(__file__).parent / "fixtures"
START = "2026-03-01T10:00:00Z"

ACTIONS = """
def actions():
    return [{"name": "roll"}, {"name": "shout"}]
"""
# Refuses every command it is asked about: asked only about votes, so only votes fail.
NO_VOTES = """
def check_vote(game, command):
    return "No voting today."
"""
# Says it saw a roll whenever it is asked: asked only about rolls.
ROLL_ONLY = """
def on_action_roll(game, event):
    return {"effect": "notice", "text": "roll seen by 12"}
"""
BOTH = """
def check(game, command):
    if command["args"].get("loud"):
        return "general check"
    return None

def check_shout(game, command):
    return "shout check"

def on_action_taken(game, event):
    return [{"effect": "notice", "text": "general " + event["action"]}]

def on_action_roll(game, event):
    return {"effect": "notice", "text": "specific roll"}
"""
LATER = """
def on_action_roll(game, event):
    return [{"effect": "notice", "text": "later rule roll"}]
"""


def game_with(service: Service, *codes: str) -> str:
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    rules = [{key: rule[key] for key in ("id", "title", "text", "code")}
             for rule in ruleset.rules]
    rules += [{"id": str(10 + i), "title": f"R{i}", "text": "x", "code": code}
              for i, code in enumerate(codes)]
    return service.commands.create_game(ruleset, game_id="hooks", start=START,
                                        players=["Ann", "Ben", "Cid"], rules=rules).game_id


def notices(events: list[dict]) -> list[str]:
    return [e["payload"]["text"] for e in events if e["type"] == "notice"]


def test_names_for_one_action_are_hooks() -> None:
    for name in ("check_vote", "check_give_nomica", "on_action_roll", "on_action_taken"):
        assert registry.hook_name_error(name) is None
    assert registry.hook_name_error("on_actoin_roll") is not None
    assert registry.action_hook("check", "vote") == "check_vote"
    assert registry.action_hook("on_action_taken", "roll") == "on_action_roll"
    assert registry.action_hook("on_action_taken", "taken") is None  # the general hook
    assert registry.action_hook("on_vote_cast", "roll") is None


def test_check_for_one_action_is_asked_about_that_action_only(service: Service) -> None:
    game = game_with(service, ACTIONS, NO_VOTES)
    assert service.commands.perform(game, "Ann", "roll").accepted
    proposed = service.commands.perform(game, "Ann", "propose", {"label": "p", "changes": [
        {"enact": {"title": "T", "text": "t"}}]})
    assert proposed.accepted, proposed.message
    vote = service.commands.perform(game, "Ben", "vote", {"proposal": "p", "choice": "aye"})
    assert not vote.accepted
    assert "No voting today." in vote.message


def test_on_action_is_asked_about_that_action_only(service: Service) -> None:
    game = game_with(service, ACTIONS, "def _x():\n    return 1\n", ROLL_ONLY)
    shout = service.commands.perform(game, "Ann", "shout")
    assert shout.accepted and notices(shout.events) == []
    roll = service.commands.perform(game, "Ann", "roll")
    assert notices(roll.events) == ["roll seen by 12"]


def test_general_hook_first_then_the_actions_then_later_rules(service: Service) -> None:
    game = game_with(service, ACTIONS, BOTH, LATER)
    roll = service.commands.perform(game, "Ann", "roll")
    assert notices(roll.events) == ["general roll", "specific roll", "later rule roll"]
    shout = service.commands.perform(game, "Ann", "shout")
    assert not shout.accepted and "shout check" in shout.message
    roll = service.commands.perform(game, "Ann", "roll")
    assert roll.accepted  # check_shout is not asked about a roll


def test_a_general_checks_refusal_wins(service: Service) -> None:
    game = game_with(service, ACTIONS.replace('"shout"}', '"shout", "params": {"loud": "bool?"}}'),
                     BOTH)
    shout = service.commands.perform(game, "Ann", "shout", {"loud": True})
    assert not shout.accepted and "general check" in shout.message
    assert "general check" not in service.commands.perform(game, "Ann", "shout").message


def test_an_action_hook_that_fails_is_recorded_under_the_kernels_hook(
        service: Service) -> None:
    game = game_with(service, ACTIONS, "def on_action_shout(game, event):\n    fail('hoarse')\n")
    shout = service.commands.perform(game, "Ann", "shout")
    assert shout.accepted
    aborts = [e["payload"] for e in shout.events if e["type"] == "rule_code_aborted"]
    assert [(a["rule"], a["hook"]) for a in aborts] == [("11", "on_action_taken")]
    assert "hoarse" in aborts[0]["reason"]
    assert service.commands.perform(game, "Ann", "roll").events[-1]["type"] == "action_taken"

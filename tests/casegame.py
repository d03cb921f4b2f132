"""A small game with a court on cases, for the interfaces' tests: the clockwork fixture
(propose, vote) and one rule that opens cases ("cfj"), has them judged in the rule's words
(VERO/FALSO) by the player before the caller, and appealed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scriba.rulesets import load_ruleset

FIXTURES = Path(__file__).parent / "fixtures"
START = "2026-03-01T10:00:00Z"
PLAYERS = ["Anna", "Bruno", "Carla"]

COURT = """
def actions():
    return [{"name": "cfj", "kind": "case", "params": {"about": "rule?"},
             "label": {"en": "Call for judgment", "it": "Chiedi un giudizio",
                       "de": "Klage erheben"},
             "param_labels": {"question": {"en": "Question", "it": "Domanda",
                                           "de": "Frage"},
                              "about": {"en": "About rule", "it": "Sulla regola",
                                        "de": "Zur Regel"}}},
            {"name": "judge", "kind": "judge", "choices": {"VERO": "true", "FALSO": "false"},
             "label": {"en": "Judge", "it": "Giudica", "de": "Urteilen"}},
            {"name": "appeal", "kind": "appeal",
             "label": {"en": "Appeal", "it": "Appella", "de": "Berufung"}}]

def on_case_opened(game, event):
    judge = std.before_in_order(game["player_order"], event["actor"])
    return [std.assign_judge(event["number"], judge)]

def on_case_appealed(game, event):
    c = std.case(game, event["case"])
    judge = std.next_in_order(game["player_order"], c["judge"], [c["opened_by"]])
    return [std.reopen_case(event["case"], "appealed"), std.assign_judge(event["case"], judge)]
"""


def court_rules() -> list[dict[str, Any]]:
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    rules = [{key: rule[key] for key in ("id", "title", "text", "code")}
             for rule in ruleset.rules]
    return rules + [{"id": "212", "title": "Judgment", "text": "Disputes are judged.",
                     "code": COURT}]


def court_game(service: Any, game_id: str = "court") -> str:
    """The game, created on ``service`` (its players: :data:`PLAYERS`)."""
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    return service.commands.create_game(ruleset, game_id=game_id, name="Court",
                                        start=START, players=list(PLAYERS),
                                        rules=court_rules()).game_id

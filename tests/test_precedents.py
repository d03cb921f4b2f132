"""Precedents: a rule's page and history list the judgments that interpret it, newest first,
each with the revision it read and whether the rule changed since (issue 21 §2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scriba.cli.main import app
from scriba.kernel.events import fold
from scriba.service import Service
from scriba.service.precedents import precedents, precedents_by_rule

START = "2026-03-02T09:00:00Z"

COURT = """
def actions():
    return [{"name": "cfj", "kind": "case", "params": {"about": "rule?"}},
            {"name": "judge", "kind": "judge", "choices": {"TRUE": "true", "FALSE": "false"}},
            {"name": "appeal", "kind": "appeal"},
            {"name": "tidy", "params": {"text": "str"}}]

def on_case_opened(game, event):
    return [std.assign_judge(event["number"], "Bea")]

def on_case_appealed(game, event):
    return [std.reopen_case(event["case"], "appealed")]

def on_action_tidy(game, event):
    return [std.change_rules([std.amend("7", event["args"]["text"])],
                             cause = {"kind": "decree", "authors": [event["actor"]]})]
"""
RULES = [{"id": "7", "title": "Hats", "text": "A hat is not a rule.", "code": COURT},
         {"id": "8", "title": "Shoes", "text": "Shoes are worn."}]


@pytest.fixture
def court(make_service, tmp_path: Path) -> Iterator[tuple[Service, str]]:
    service = make_service(f"sqlite:///{tmp_path / 'court.db'}")
    service.commands.create_game("suber", game_id="court", players=["Anna", "Bea", "Cid"],
                                 start=START, rules=RULES)
    yield service, "court"
    service.close()


def act(service: Service, game: str, who: str, action: str, **args) -> None:
    outcome = service.commands.perform(game, who, action, args)
    assert outcome.accepted, outcome.message


def test_a_rules_judgments_are_its_precedents_newest_first(court) -> None:
    service, game = court
    act(service, game, "Anna", "cfj", question="Is a hat a rule?", about="7")
    act(service, game, "Bea", "judge", case=1, judgment="true", reasons="Hats govern.",
        rules=["7"])
    act(service, game, "Cid", "appeal", case=1, reasons="Read rule 7.")
    service.commands.advance(game, by=3600)
    act(service, game, "Bea", "judge", case=1, judgment="FALSE", reasons="Rule 7 says no.",
        rules=["7", "8"])
    service.commands.advance(game, by=3600)
    act(service, game, "Cid", "cfj", question="Do shoes count?", about="8")
    act(service, game, "Bea", "judge", case=2, judgment="FALSE", rules=["8"])

    seven = service.reads.precedents(game, "7")
    assert [(p["case"], p["judgment"], p["current"]) for p in seven] == [
        (1, "FALSE", True), (1, "TRUE", False)]
    assert seven[0]["reasons"] == "Rule 7 says no." and seven[0]["by"] == "Bea"
    assert seven[1]["superseded"] == "appealed" and seven[1]["status"] == "judged"
    assert all(p["revision"] == 0 and not p["changed_since"] for p in seven)
    assert [(p["case"], p["judgment"]) for p in service.reads.precedents(game, "8")] == [
        (2, "FALSE"), (1, "FALSE")]

    # The rule is amended: its precedents read an older text now.
    act(service, game, "Anna", "tidy", text="A hat is a rule on Sundays.")
    history = service.reads.rule_history(game, "7")
    assert [(p["revision"], p["revision_now"], p["changed_since"])
            for p in history["precedents"]] == [(0, 1, True), (0, 1, True)]
    assert [p["changed_since"] for p in service.reads.precedents(game, "8")] == [False, False]

    # The CLI's rules --full shows a line per precedent under the rule.
    result = CliRunner().invoke(app, ["rules", game, "--full", "--db", service.commands.store.url])
    assert result.exit_code == 0, result.output
    assert "precedent: case 1, 2026-03-02 FALSE, revision 1, rule changed since: Is a " \
        "hat a rule?" in result.output
    assert "precedent: case 1, 2026-03-02 TRUE (superseded: appealed), revision 1" \
        in result.output


def test_a_rule_without_judgments_has_none_and_an_unknown_rule_is_refused(court) -> None:
    service, game = court
    assert service.reads.precedents(game, "8") == []
    assert service.reads.rule_history(game, "8")["precedents"] == []
    with pytest.raises(Exception, match="There is no rule 99 in this game"):
        service.reads.precedents(game, "99")


def test_the_fold_alone_gives_the_same_precedents(court) -> None:
    """Precedents are a read of the state: a replayed log gives the same list."""
    service, game = court
    act(service, game, "Anna", "cfj", question="Is a hat a rule?", about="7")
    act(service, game, "Bea", "judge", case=1, judgment="TRUE", rules=["7"])
    replayed = fold(service.commands.events(game))
    assert precedents(replayed, "7") == service.reads.precedents(game, "7")
    assert set(precedents_by_rule(replayed)) == {"7"}
    assert precedents(replayed, "nope") == []

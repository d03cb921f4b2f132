"""Sealed moves and private variables (issue 20's finding, issue 23's secret ballot).

Anderwelt's Nomiczahl (R.1(1), R.4(1)) reaches the GM alone: until the round's evaluation
reveals the numbers, no other player reads one in the chronicle, the reports or the game's
state; the mover and the officer do. A secret vote (the cookbook's secret ballot, in
Suber's Nomic) is seen by its voter and the officer until its proposal is resolved. The
log keeps everything: a replay gives the same state. Letters: tests/mail/test_sealed_letters.py;
pages over HTTP: tests/web/test_sealed_pages.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from scriba.kernel.declarations import declaration_error
from scriba.kernel.sealing import hidden
from scriba.service import Service
from scriba.service.secrets import PUBLIC, Seer
from scriba.service.summary import summarize

ANNA, BERT = 31, 43  # in no date or time of this game (no one wins with them)


def told(service: Service, game: str, **reader: Any) -> str:
    return "\n".join(e["text"] for e in service.reads.chronicle(game, **reader))


@pytest.fixture
def round_one(service: Service) -> Service:
    """An Anderwelt round: the GM sets the ZAT, Anna and Bert give their numbers."""
    service.commands.create_game("anderwelt", game_id="aw", players=["Anna", "Bert", "Cora"],
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z", seed=4)
    assert service.commands.perform("aw", "Max", "set_zat",
                                    {"deadline": "2026-03-08T18:00"}).accepted
    for player, number in (("Anna", ANNA), ("Bert", BERT)):
        outcome = service.commands.perform("aw", player, "nomic_number", {"number": number})
        assert outcome.accepted, outcome.message
    return service


@pytest.mark.parametrize(("declared", "said"), [
    ({"actions": [{"name": "bid", "sealed": "yes"}]}, "sealed must be True or False"),
    ({"variables": [{"name": "bid", "private": 1}]}, "private must be True or False"),
])
def test_sealed_and_private_are_true_or_false(declared: dict, said: str) -> None:
    assert said in (declaration_error(declared) or "")
    flag = "sealed" if "actions" in declared else "private"
    kind = "actions" if "actions" in declared else "variables"
    assert declaration_error({kind: [{"name": "bid", flag: True}]}) is None


def test_a_sealed_move_and_what_it_caused_are_marked_as_its_players(round_one: Service
                                                                     ) -> None:
    log = round_one.reads.log("aw")
    annas = [e for e in log if (e["payload"].get("sealed") or {}).get("player") == "Anna"]
    assert [e["type"] for e in annas][:1] == ["action_taken"]
    assert any(e["type"] == "var_set" and e["payload"]["name"] == "nomic_number"
               and e["payload"]["value"] == ANNA for e in annas)
    assert set(hidden(log).values()) == {"Anna", "Bert"}


def test_only_the_mover_and_the_officer_read_a_number_before_the_evaluation(
        round_one: Service) -> None:
    service = round_one
    for reader in ({}, {"viewer": "Cora"}):
        text = told(service, "aw", **reader)
        assert str(ANNA) not in text and str(BERT) not in text, reader
    bert = told(service, "aw", viewer="Bert")
    assert str(BERT) in bert and str(ANNA) not in bert
    officer = told(service, "aw", officer=True)
    assert str(ANNA) in officer and str(BERT) in officer
    reports = str(service.reads.period_reports("aw", "de"))
    assert str(ANNA) not in reports and str(BERT) not in reports
    # the state: others' private variables left out of what a reader is handed
    players = service.reads.summary("aw", ["players"], seen_by=Seer("Bert"))["players"]
    assert players["Bert"]["nomic_number"] == BERT and "nomic_number" not in players["Anna"]
    assert "nomic_number" not in service.reads.summary(
        "aw", seen_by=PUBLIC)["players"]["Bert"]
    whole = service.reads.summary("aw", seen_by=Seer(officer=True))["players"]
    assert (whole["Anna"]["nomic_number"], whole["Bert"]["nomic_number"]) == (ANNA, BERT)


def test_the_evaluation_reveals_the_numbers_to_everyone(round_one: Service) -> None:
    service = round_one
    service.commands.advance("aw", to="2026-03-08T19:00:00Z")
    log = service.reads.log("aw")
    assert [e["payload"]["action"] for e in log if e["type"] == "moves_revealed"] == \
        ["nomic_number"]
    assert hidden(log) == {}
    for reader in ({}, {"viewer": "Cora"}):
        text = told(service, "aw", **reader)
        assert f"Nomiczahlen der Runde 1: Anna {ANNA}, Bert {BERT}." in text
        assert f"Nomiczahl: {ANNA}" in text  # Anna's move itself, now shown
    # a variable declared private stays its player's: the numbers are told by the rules
    players = service.reads.summary("aw", ["players"], seen_by=Seer("Cora"))["players"]
    assert "nomic_number" not in players["Anna"]


def test_a_replay_is_the_same_state(round_one: Service) -> None:
    service = round_one
    service.commands.advance("aw", to="2026-03-08T19:00:00Z")
    assert summarize(service.reads.replay("aw")) == service.reads.summary("aw")


# --- the cookbook's secret ballot, in Suber's Nomic ----------------------------------------


def secret_ballot(service: Service) -> str:
    service.commands.create_game("suber", game_id="sb", players=["Anna", "Bruno", "Carla"],
                                 start="2026-03-01T10:00:00Z", seed=7)
    rule = service.recipes.fill("secret_ballot", {}, "en", ruleset="suber")
    steps = [("Anna", "propose", {"label": "p301", "changes": [
        {"enact": {"title": rule.title, "text": rule.text, "code": rule.code}}]})]
    steps += [(p, "vote", {"proposal": "p301", "choice": "yes"})
              for p in ("Anna", "Bruno", "Carla")]
    steps += [("Anna", "roll", {}), ("Bruno", "propose", {"label": "p302", "changes": [
        {"enact": {"title": "Kites", "text": "Players may bring kites."}}]}),
              ("Anna", "secret_vote", {"proposal": "p302", "choice": "no"}),
              ("Bruno", "vote", {"proposal": "p302", "choice": "yes"})]
    for actor, action, args in steps:
        outcome = service.commands.perform("sb", actor, action, args)
        assert outcome.accepted, (action, outcome.message)
    return "sb"


def test_a_secret_vote_is_its_voters_and_the_officers_until_the_vote_is_over(
        service: Service) -> None:
    game = secret_ballot(service)
    votes = {who: service.reads.proposal(game, "p302", seen_by=Seer(who))["votes"]
             for who in ("Anna", "Bruno", "Carla")}
    assert votes["Anna"] == {"Anna": "against", "Bruno": "for"}
    assert votes["Bruno"] == votes["Carla"] == {"Bruno": "for"}  # the open vote is seen
    assert service.reads.proposal(game, "p302", seen_by=Seer(officer=True))["votes"] == \
        votes["Anna"]
    secret = "Anna votes no on proposal 302"
    assert secret not in told(service, game, viewer="Carla")
    assert secret not in told(service, game)
    assert secret in told(service, game, viewer="Anna")
    # Carla's open vote completes it: rejected (unanimity), and the secret vote is shown
    assert service.commands.perform(game, "Carla", "vote",
                                    {"proposal": "p302", "choice": "yes"}).accepted
    assert service.reads.proposal(game, "p302")["status"] == "rejected"
    for who in ("Bruno", "Carla", None):
        seen = service.reads.proposal(game, "p302", seen_by=Seer(who))["votes"]
        assert seen["Anna"] == "against", who
        assert secret in told(service, game, viewer=who)
    assert summarize(service.reads.replay(game)) == service.reads.summary(game)


def test_a_reveal_shows_one_proposals_votes_not_anothers() -> None:
    def vote(seq: int, player: str, proposal: int) -> dict[str, Any]:
        mark = {"player": player, "action": "secret_vote", "proposal": proposal}
        return {"seq": seq, "type": "vote_cast", "time": "t", "actor": player,
                "payload": {"proposal": proposal, "player": player, "sealed": mark}}
    reveal = {"seq": 3, "type": "moves_revealed", "time": "t", "actor": None,
              "payload": {"action": "secret_vote", "proposal": 1}}
    assert hidden([vote(1, "Anna", 1), vote(2, "Bea", 2), reveal]) == {2: "Bea"}
    every = {**reveal, "payload": {"action": "secret_vote"}}
    assert hidden([vote(1, "Anna", 1), vote(2, "Bea", 2), every]) == {}
    other = {**reveal, "payload": {"action": "nomic_number"}}
    assert hidden([vote(1, "Anna", 1), other]) == {1: "Anna"}

"""Adopted proposals change how the game is played: the rules' code really governs."""

from __future__ import annotations

import pytest

from scriba.service import Service

PLAYERS = ["Anna", "Bruno", "Carla"]


@pytest.fixture
def game(service: Service) -> str:
    return service.commands.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                                        players=PLAYERS).game_id


def turn(service: Service, game: str) -> str:
    return service.reads.load(game).vars["turn"]


def play_turn(service: Service, game: str, label: str, changes: list, votes: dict[str, str]):
    """The player whose turn it is proposes; the others vote as given."""
    author = turn(service, game)
    outcome = service.commands.perform(game, author, "propose", {"label": label,
                                                                 "changes": changes})
    assert outcome.accepted, outcome.message
    for voter in PLAYERS:
        if voter != author:
            assert service.commands.perform(game, voter, "vote", {
                "proposal": label, "choice": votes.get(voter, "favorevole")}).accepted
    return service.reads.load(game).proposal_by_label(label)


def points(service: Service, game: str) -> dict[str, int]:
    return {name: p["vars"]["points"] for name, p in service.reads.load(game).players.items()}


def test_a_enacted_rule_adds_a_new_action(service, game):
    assert not service.commands.perform(game, "Bruno", "cheer", {}).accepted
    code = ('def actions():\n    return [{"name": "cheer", "help": "Applaudi"}]\n'
            'def on_action_taken(game, event):\n'
            '    if event["action"] != "cheer":\n        return []\n'
            '    return [{"effect": "add_var", "player": event["actor"], "name": "points",'
            ' "amount": 1}]\n')
    proposal = play_turn(service, game, "applause", [
        {"enact": {"title": "Applausi", "text": "Ogni giocatore può applaudire.", "code": code}}],
        {})
    assert proposal["status"] == "adopted"
    before = points(service, game)["Bruno"]
    assert service.commands.perform(game, "Bruno", "cheer", {}).accepted
    assert points(service, game)["Bruno"] == before + 1
    assert service.reads.load(game).rules["201"]["title"] == "Applausi"


def test_b_amending_the_voting_code_changes_the_next_tally(service, game):
    split = {"Bruno": "favorevole", "Carla": "contrario"}  # Anna proposes first
    first = play_turn(service, game, "p1", [{"enact": {"title": "A", "text": "a"}}], split)
    assert first["status"] == "rejected"  # 1 of 3 players in favour is no absolute majority
    voting = service.reads.load(game).rules["106"]["code"]
    lenient = voting.replace("adopted = ayes * 2 > players", "adopted = ayes >= noes")
    assert lenient != voting
    amendment = play_turn(service, game, "p2", [{"amend": {"rule": "106", "code": lenient}}], {})
    assert amendment["status"] == "adopted"
    author = turn(service, game)
    others = [p for p in PLAYERS if p != author]
    third = play_turn(service, game, "p3", [{"enact": {"title": "C", "text": "c"}}],
                      {others[0]: "favorevole", others[1]: "contrario"})
    assert third["status"] == "adopted"  # the same split now passes
    history = service.reads.load(game).rules["106"]["history"]
    assert history[-1]["change"] == "amend" and history[-1]["cause"]["proposal"] == 2


def test_c_repealing_the_scoring_rule_stops_points(service, game):
    repeal = play_turn(service, game, "p1", [{"repeal": {"rule": "109"}}], {})
    assert repeal["status"] == "adopted"
    frozen = points(service, game)
    adopted = play_turn(service, game, "p2", [{"enact": {"title": "B", "text": "b"}}], {})
    rejected = play_turn(service, game, "p3", [{"enact": {"title": "C", "text": "c"}}],
                         {p: "contrario" for p in PLAYERS})
    assert (adopted["status"], rejected["status"]) == ("adopted", "rejected")
    assert points(service, game) == frozen
    assert "109" not in [r["id"] for r in service.reads.load(game).rules_in_force()]


def test_d_amending_only_the_text_keeps_the_code_running(service, game):
    code_before = service.reads.load(game).rules["108"]["code"]
    new_text = "I turni procedono secondo l'ordine alfabetico dei nomi dei giocatori."
    proposal = play_turn(service, game, "p1", [{"amend": {"rule": "108", "text": new_text}}], {})
    assert proposal["status"] == "adopted"
    rule = service.reads.load(game).rules["108"]
    assert (rule["text"], rule["code"]) == (new_text, code_before)
    assert [h["change"] for h in rule["history"]] == ["initial", "amend"]
    assert rule["history"][-1]["cause"] == {"kind": "proposal", "proposal": 1, "label": "p1",
                                            "author": "Anna", "title": ""}
    # the alphabetical order still governs: Anna proposed, now Bruno, then Carla
    assert turn(service, game) == "Bruno"
    play_turn(service, game, "p2", [{"enact": {"title": "B", "text": "b"}}], {})
    assert turn(service, game) == "Carla"


def test_e_transmuting_an_immutable_rule_lets_it_be_amended(service):
    game = service.commands.create_game("suber", game_id="su", start="2026-03-01T10:00:00Z", seed=3,
                                        players=["Anna", "Bruno", "Carla"]).game_id
    new_text = "Players may leave the game at the end of their own turn only."
    refused = service.commands.perform(game, "Anna", "propose", {"changes": [
        {"amend": {"rule": "113", "text": new_text}}]})
    assert not refused.accepted and "immutable" in refused.message

    def turn(mover: str, changes: list) -> dict:
        assert service.commands.perform(game, mover, "propose", {"changes": changes}).accepted
        number = max(int(n) for n in service.reads.load(game).proposals)
        for voter in ("Anna", "Bruno", "Carla"):
            assert service.commands.perform(game, voter, "vote", {"proposal": number,
                                                                  "choice": "for"}).accepted
        assert service.commands.perform(game, mover, "roll", {}).accepted
        return service.reads.load(game).proposals[str(number)]

    transmutation = turn("Anna", [{"transmute": {"rule": "113", "mutable": True}}])
    assert transmutation["status"] == "adopted"
    rules = service.reads.load(game).rules
    moved = next(r for r in rules.values() if r["in_force"]
                 and any(h["change"] == "transmute" for h in r["history"]))
    assert moved["attributes"]["mutable"] is True
    assert [h["change"] for h in moved["history"]][-2:] == ["transmute", "renumber"]
    amendment = turn("Bruno", [{"amend": {"rule": moved["id"], "text": new_text}}])
    assert amendment["status"] == "adopted"
    amended = next(r for r in service.reads.load(game).rules.values()
                   if r["in_force"] and r["text"] == new_text)
    assert "amend" in [h["change"] for h in amended["history"]]

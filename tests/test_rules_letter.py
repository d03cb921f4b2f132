"""The letter a command came in, as the rules see it (``command["letter"]``): kept with the
command, passed by the kernel to the rules' checks and to the command's event, trimmed to
short arguments, refused when malformed; a command without one is a letter of itself."""

from __future__ import annotations

import pytest

from scriba.kernel.engine import Command
from scriba.rulecode import std
from scriba.service import Service
from scriba.service.deciding import decide_command, decider
from scriba.service.errors import InvalidInput
from scriba.service.rules_letter import letter, make_letter

ENACT = {"enact": {"title": "Saluti", "text": "Ogni giocatore saluta il Re."}}


def _game(service: Service) -> None:
    service.commands.create_game("decameronomic", game_id="dec",
                                 players=["Anna", "Bruno", "Carla"],
                                 offices={"King": "Anna", "Scriba": "Carla"},
                                 start="2026-03-02T09:00:00Z")


def test_the_letter_is_kept_with_the_command_and_decides_the_same_again(
        service: Service) -> None:
    _game(service)
    mail = make_letter("<m1@players.test>", [("propose", {"changes": [ENACT]}),
                                             ("propose", {"changes": [ENACT]})])
    for _ in range(2):
        assert service.commands.perform("dec", "Bruno", "propose", {"changes": [ENACT]},
                                        letter=mail).accepted
    kept = [row["command"] for row in service.commands.store.inbound("dec")]
    assert [k["letter"] for k in kept] == [mail, mail]
    submitted = [e for e in service.reads.log("dec") if e["type"] == "proposal_submitted"]
    assert [e["payload"]["letter"] for e in submitted] == [mail["id"]] * 2
    assert [p["data"]["letter"] for p in service.reads.proposals("dec")] == [1, 1]
    # deciding the kept input again, on the state before it, gives the same number
    before = service.reads.replay("dec", upto_seq=submitted[1]["seq"] - 1)
    events, outcome = decider(service.commands.engine, kept[1], "")(before, before.time)
    again = next(e for e in events if e["type"] == "proposal_updated"
                 and e["payload"]["key"] == "letter")
    assert outcome.accepted and again["payload"]["value"] == 1


def test_without_the_letter_the_same_command_opens_a_new_letter(service: Service) -> None:
    _game(service)
    for _ in range(2):
        service.commands.perform("dec", "Bruno", "propose", {"changes": [ENACT]})
    assert [p["data"]["letter"] for p in service.reads.proposals("dec")] == [1, 2]
    state = service.reads.load("dec")
    events, outcome = decide_command(service.commands.engine, state.copy(),
                                     Command("Bruno", "propose", {"changes": [ENACT]}),
                                     state.time, "")
    assert not outcome.accepted and "2 lettere" in outcome.message  # a third: rule 300


def test_a_letter_keeps_short_arguments_only_and_malformed_ones_are_refused() -> None:
    long = "x" * 5000
    kept = letter({"id": "abc", "commands": [
        {"action": "propose", "args": {"text": long, "changes": [ENACT], "label": "p1"}},
        {"action": "vote", "args": {"proposal": 3, "choice": "favorevole", "crown": True}}]})
    assert kept["commands"] == [{"action": "propose", "args": {"label": "p1"}},
                                {"action": "vote", "args": {"proposal": 3,
                                                            "choice": "favorevole",
                                                            "crown": True}}]
    for bad in (None, {"id": "", "commands": []}, {"id": "a\x00", "commands": []},
                {"id": "a", "commands": "vote"}, {"id": "a", "commands": [{"args": {}}]}):
        with pytest.raises(InvalidInput):
            letter(bad)
    assert len(letter({"id": "a", "commands": [{"action": "vote"}] * 500})["commands"]) == 50


def test_std_letter_commands_reads_the_letter_or_the_command_alone() -> None:
    alone = {"actor": "Anna", "action": "vote", "args": {"proposal": 1}}
    assert std.v1.letter_commands(alone) == [{"action": "vote", "args": {"proposal": 1}}]
    together = {**alone, "letter": {"id": "k", "commands": [
        {"action": "vote", "args": {"proposal": 1}}, {"action": "propose", "args": {}},
        {"action": "vote", "args": {"proposal": 2}}]}}
    assert [c["args"]["proposal"] for c in std.v1.letter_commands(together, "vote")] == [1, 2]
    with pytest.raises(std.v1.StdError):
        std.v1.letter_commands(together, 3)

"""nomic3: what the scenario files cannot say (exact sets, histories, precedence, table play)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scriba.rulesets import list_rulesets, load_ruleset
from scriba.service import Service

START = "2026-03-02T09:00:00Z"
IMMUTABLE = ["101", "102", "103", "104", "105", "106", "107", "108", "110", "111", "112", "113",
             "114", "115", "116", "309"]
MUTABLE = ["205", "207", "208", "209", "210", "211", "212", "213", "301", "303", "304", "306",
           "307", "310", "311"]
OUT_OF_FORCE = ["109", "201", "202", "203", "204", "206", "308"]


def _vote_all(service: Service, game: str, number: int, against: tuple[str, ...] = ()) -> None:
    for player in ("MI1", "MI2", "LS"):
        choice = "contrario" if player in against else "favorevole"
        outcome = service.commands.perform(game, player, "vote", {"proposal": number,
                                                                  "choice": choice})
        assert outcome.accepted, outcome.message


def test_listed_with_the_bundled_rulesets() -> None:
    assert "nomic3" in [r.id for r in list_rulesets()]


def test_published_state_exactly(service: Service) -> None:
    state = service.commands.create_game("nomic3", game_id="g", start=START)
    in_force = sorted(r["id"] for r in state.rules.values() if r["in_force"])
    assert in_force == sorted(IMMUTABLE + MUTABLE)
    assert sorted(r["id"] for r in state.rules.values() if not r["in_force"]) == OUT_OF_FORCE
    for rid in IMMUTABLE:
        assert state.rules[rid]["attributes"] == {"mutable": False}
    for rid in MUTABLE:
        assert state.rules[rid]["attributes"] == {"mutable": True}
    assert {p: v["vars"]["points"] for p, v in state.players.items()} == \
        {"MI1": 47, "MI2": 21, "LS": 43}
    assert state.vars["turn_order"] == ["MI1", "MI2", "LS"]
    assert (state.vars["turn"], state.vars["round"], state.vars["turn_number"]) == ("MI1", 5, 13)
    assert state.offices == {"judge": "LS"}
    statuses = {int(n): p["status"] for n, p in state.proposals.items()}
    assert statuses == {n: ("rejected" if n in (302, 305) else "adopted") for n in range(301, 313)}
    assert all(p["author"] is None for p in state.proposals.values())


@pytest.mark.parametrize(("rule", "origin", "change", "proposal"), [
    ("306", "201", "amend", 306), ("307", "202", "amend", 307), ("303", "204", "amend", 303),
    ("310", "308", "amend", 310), ("309", "203", "transmute", 309),
    ("311", "109", "transmute", 311),
])
def test_histories_of_the_changed_rules(service: Service, rule: str, origin: str, change: str,
                                        proposal: int) -> None:
    state = service.commands.create_game("nomic3", game_id="g", start=START)
    history = state.rules[rule]["history"]
    assert [e["change"] for e in history][-2:] == [change, "renumber"]
    assert history[-2]["cause"] == {"kind": "proposal", "proposal": proposal,
                                    "label": str(proposal), "author": None,
                                    "title": state.proposals[str(proposal)]["title"]}
    assert history[-1]["detail"] == {"from": origin, "to": rule}
    assert state.rules[origin]["in_force"] is False
    assert state.rules[origin]["history"] == history  # the record kept under the old number


def test_206_repealed_by_312(service: Service) -> None:
    state = service.commands.create_game("nomic3", game_id="g", start=START)
    last = state.rules["206"]["history"][-1]
    assert last["change"] == "repeal" and last["cause"]["proposal"] == 312


def test_precedence_immutable_first_then_by_number(service: Service) -> None:
    """110 and 211, before and after a transmutation."""
    service.commands.create_game("nomic3", game_id="g", start=START)
    assert service.commands.engine.precedence(service.reads.load("g")) == IMMUTABLE + MUTABLE
    assert service.commands.perform("g", "MI1", "propose", {
        "vote_now": True, "changes": [{"transmute": {"rule": "213", "mutable": False}}]}).accepted
    _vote_all(service, "g", 313)
    order = service.commands.engine.precedence(service.reads.load("g"))
    assert order == IMMUTABLE + ["313"] + [r for r in MUTABLE if r != "213"]


def test_at_least_one_mutable_rule(service: Service) -> None:
    """114: with 307 the only mutable rule left, it cannot be repealed."""
    rules = [dict(r, attributes={"mutable": r["id"] == "307"})
             for r in load_ruleset("nomic3").rules]
    service.commands.create_game("nomic3", game_id="g", start=START, rules=rules)
    outcome = service.commands.perform("g", "MI1", "propose",
                                       {"changes": [{"repeal": {"rule": "307"}}]})
    assert not outcome.accepted
    assert "almeno una regola mutabile (regola 114)" in outcome.message


def test_played_at_a_table_without_304(service: Service) -> None:
    """Without 304 a table game throws a die (307) and wins at 100 points (208)."""
    rules = [r for r in load_ruleset("nomic3").rules if r["id"] != "304"]
    players = [{"name": "MI1", "vars": {"points": 95, "surname": "I"}},
               {"name": "MI2", "vars": {"points": 21, "surname": "I"}},
               {"name": "LS", "vars": {"points": 43, "surname": "S"}}]
    service.commands.create_game("nomic3", game_id="g", start=START, rules=rules, players=players,
                                 settings={"by_computer": False}, seed=11)
    assert service.commands.perform("g", "MI1", "propose", {
        "vote_now": True, "changes": [{"enact": {"text": "Si gioca al tavolo."}}]}).accepted
    _vote_all(service, "g", 313, against=("MI2", "LS"))
    state = service.reads.load("g")
    points = state.players["MI1"]["vars"]["points"]
    assert 96 <= points <= 101  # a die, not 10 × 1/3
    assert state.winners == (["MI1"] if points >= 100 else [])
    assert service.reads.replay("g").to_json() == state.to_json()


def test_304_keeps_the_game_by_computer(service: Service) -> None:
    service.commands.create_game("nomic3", game_id="g", start=START,
                                 settings={"by_computer": False})
    assert service.commands.perform("g", "MI1", "propose", {
        "vote_now": True, "changes": [{"enact": {"text": "Si gioca al tavolo."}}]}).accepted
    _vote_all(service, "g", 313, against=("MI2", "LS"))
    assert service.reads.load("g").players["MI1"]["vars"]["points"] == 47 + 3


def test_impossible_ruling_becomes_final_when_the_next_turn_begins(service: Service) -> None:
    """213 via 212: not overruled before the next turn begins, the ruling stands."""
    service.commands.create_game("nomic3", game_id="g", start=START)
    assert service.commands.perform("g", "MI2", "appeal",
                                    {"question": "Si può continuare?"}).accepted
    assert service.commands.perform("g", "MI1", "propose", {
        "vote_now": True, "changes": [{"enact": {"text": "Una regola."}}]}).accepted
    _vote_all(service, "g", 313)
    assert service.commands.perform("g", "LS", "ruling", {"case": 1,
                                                          "judgment": "impossibile"}
                           ).accepted
    assert service.reads.load("g").winners == []
    assert service.reads.load("g").cases["1"]["status"] == "judged"
    assert service.commands.perform("g", "MI2", "consent").accepted
    assert service.commands.perform("g", "LS", "consent").accepted
    state = service.reads.load("g")
    assert state.winners == ["MI1"] and state.ended
    case = state.cases["1"]
    assert case["status"] == "closed" and case["judgment"]["judgment"] == "impossibile"
    assert case["steps"][-1]["step"] == "closed" and case["steps"][-1]["note"] == "final"
    assert service.reads.replay("g").to_json() == state.to_json()


def test_status_line(service: Service) -> None:
    service.commands.create_game("nomic3", game_id="g", start=START)
    assert service.reads.query("g", "status") == "Giro 5, turno 13: tocca a MI1. Giudice: LS."
    service.commands.perform("g", "MI1", "propose", {"changes": [{"enact": {"text": "x"}}]})
    assert "Proposta 313 in dibattito" in service.reads.query("g", "status")


def test_readme_maps_every_rule_of_the_seed() -> None:
    folder = Path(load_ruleset("nomic3").path or "")
    readme = (folder / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| \*?\*?(\d{3})", readme, re.MULTILINE))
    ids = {p.stem for p in (folder / "rules").glob("*.md")}
    assert ids <= rows, sorted(ids - rows)
    assert {"302", "305", "312"} <= rows  # the proposals the seed lists


def test_a_leaver_no_longer_needs_to_agree_to_a_newcomer(service: Service) -> None:
    service.commands.create_game("nomic3", game_id="g", start=START)
    assert service.commands.perform("g", "Rossi", "apply", {"surname": "Rossi"}).accepted
    for player in ("MI1", "MI2"):
        assert service.commands.perform("g", player, "admit", {"candidate": "Rossi",
                                                               "choice": "favorevole"}).accepted
    assert "Rossi" not in service.reads.load("g").players
    assert service.commands.perform("g", "LS", "leave").accepted
    state = service.reads.load("g")
    assert state.players["Rossi"]["vars"] == {"points": 11, "surname": "Rossi"}
    assert state.vars["turn_order"] == ["MI1", "MI2", "Rossi", "LS"]

"""The anderwelt ruleset: what its scenarios cannot show (precedence, history, log order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

START = "2026-03-01T10:00:00Z"
SCENARIOS = BUNDLED / "anderwelt" / "scenarios"
BASIC_ORDER = ["G.9", "G.8", "G.7", "G.6", "G.5", "G.4", "G.3", "G.2", "G.1",
               "G.13", "G.12", "G.11", "G.10"]


def new_game(service: Service, players: tuple[str, ...] = ("Anna", "Bert", "Cora")) -> str:
    return service.commands.create_game("anderwelt", start=START, seed=1, players=list(players),
                                        offices={"GM": "Max"}).game_id


def act(service: Service, game: str, who: str, action: str, **args: Any) -> None:
    outcome = service.commands.perform(game, who, action, args)
    assert outcome.accepted, outcome.message


def refusal(service: Service, game: str, who: str, action: str, **args: Any) -> str:
    outcome = service.commands.perform(game, who, action, args)
    assert not outcome.accepted
    return outcome.message


def play_round(service: Service, game: str, numbers: dict[str, int]) -> None:
    """Open the round (the GM sets a ZAT), give the Nomiczahlen, pass the ZAT."""
    state = service.reads.load(game)
    if state.vars["phase"] != "open" or state.vars["zat"] is None:
        act(service, game, "Max", "set_zat", days=7)
    for player, number in numbers.items():
        act(service, game, player, "nomic_number", number=number)
    service.commands.advance(game, by=8 * 86400)


def notices(service: Service, game: str, kind: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in service.reads.log(game)
            if e["type"] == "notice" and e["payload"].get("kind") == kind]


def scenario(service: Service, name: str) -> str:
    result = run_scenario(service.commands, load_scenario(Path(SCENARIOS / f"{name}.yaml")))
    assert result.errors == []
    return result.game_id


def test_precedence_classes_then_g7_then_r9(service: Service) -> None:
    game = new_game(service)
    order = service.commands.engine.precedence(service.reads.load(game))
    assert order == BASIC_ORDER + [f"R.{n}" for n in range(11, 0, -1)]


def test_court_rulings_set_precedence_and_strike_rules(service: Service) -> None:
    game = scenario(service, "gericht")
    state = service.reads.load(game)
    order = service.commands.engine.precedence(state)
    assert order.index("R.2") < order.index("R.4")  # R.9(1), against R.9(3)
    assert not state.rules["R.8"]["in_force"]
    struck = state.rules["R.8"]["history"][-1]
    assert struck["change"] == "repeal" and struck["cause"]["kind"] == "court"


def test_emergency_is_recorded_as_such(service: Service) -> None:
    game = scenario(service, "gm")
    state = service.reads.load(game)
    history = state.rules["R.12"]["history"]
    assert history[0]["cause"]["kind"] == "emergency"
    assert history[0]["cause"]["by"] == "Max"
    order = service.commands.engine.precedence(state)
    assert order.index("R.1") < order.index("S.1")  # the new class S stands below R
    assert notices(service, game, "emergency")


def test_explicit_precedence_in_a_rule(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "emergency", reason="Vorrang",
        changes=[{"set_attribute": {"rule": "R.1", "name": "explicit_precedence_over",
                                    "value": ["R.11"]}}])
    order = service.commands.engine.precedence(service.reads.load(game))
    assert order[len(BASIC_ORDER):len(BASIC_ORDER) + 2] == ["R.1", "R.11"]


def test_grundregel_changes_come_into_force_at_the_end_of_the_round(service: Service) -> None:
    game = scenario(service, "grundregeln")
    log = service.reads.log(game)
    round_end = next(e["seq"] for e in log if e["type"] == "notice"
                     and e["payload"].get("kind") == "round_end" and e["payload"]["round"] == 2)
    adopted = next(e["seq"] for e in log if e["type"] == "proposal_resolved"
                   and e["payload"]["proposal"] == 1)
    changed = next(e["seq"] for e in log if e["type"] == "rule_changed"
                   and e["payload"]["change"].get("rule") == "G.11")
    assert adopted < round_end < changed
    r_rule = next(e["seq"] for e in log if e["type"] == "rule_changed"
                  and e["payload"]["change"].get("rule") == "R.12")
    assert r_rule < round_end  # an adopted simple rule counts at once


def test_at_least_one_rule_remains(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "set_zat", days=7)
    ids = [rid for rid, rule in service.reads.load(game).rules.items() if rid.startswith("R.")]
    act(service, game, "Max", "emergency", reason="Aufräumen",
        changes=[{"repeal": {"rule": rid}} for rid in ids])
    rest = [rid for rid, rule in service.reads.load(game).rules.items() if rule["in_force"]]
    message = refusal(service, game, "Anna", "propose", title="Tabula rasa",
                      changes=[{"repeal": {"rule": rid}} for rid in rest])
    assert "mindestens eine gültige Regel" in message


def test_press_is_published_with_the_evaluation(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "set_zat", days=7)
    act(service, game, "Cora", "press", text="Extrablatt!")
    assert notices(service, game, "press") == []
    service.commands.advance(game, by=8 * 86400)
    assert [n["text"] for n in notices(service, game, "press")] == ["Presse von Cora: Extrablatt!"]


def test_status_and_open_ballots(service: Service) -> None:
    game = new_game(service)
    assert "noch keinen ZAT" in service.reads.query(game, "status")
    act(service, game, "Max", "set_zat", deadline="2026-03-08T18:00:00Z")
    assert service.reads.query(game, "status") == "Runde 1 läuft; ZAT: 2026-03-08 18:00 UTC."
    act(service, game, "Anna", "propose", title="Gruß",
        changes=[{"enact": {"title": "Gruß", "text": "Jeder grüßt."}}])
    act(service, game, "Dora", "apply")
    play_round(service, game, {"Anna": 1, "Bert": 2, "Cora": 3})
    assert "ausgewertet" in service.reads.query(game, "status")
    act(service, game, "Max", "set_zat", days=7)
    ballots = service.reads.query(game, "ballots", {"player": "Bert"})
    assert [b["ballot"] for b in ballots] == ["1", "Dora-1", "1V"]
    act(service, game, "Bert", "vote", proposal=1, choice="Ja", deferral="Nein")
    act(service, game, "Bert", "vote_admission", applicant="Dora", choice="Nein")
    assert service.reads.query(game, "ballots", {"player": "Bert"}) == []
    assert len(service.reads.query(game, "ballots", {"player": "Anna"})) == 3


def test_a_player_may_apply_again_in_the_third_round_after_leaving(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "set_zat", days=7)
    act(service, game, "Cora", "leave")
    play_round(service, game, {"Anna": 1, "Bert": 2})
    play_round(service, game, {"Anna": 1, "Bert": 2})
    assert "frühestens in Runde 4" in refusal(service, game, "Cora", "apply")
    play_round(service, game, {"Anna": 1, "Bert": 2})
    act(service, game, "Max", "set_zat", days=7)
    act(service, game, "Cora", "apply")
    play_round(service, game, {"Anna": 1, "Bert": 2})
    act(service, game, "Max", "set_zat", days=7)
    act(service, game, "Anna", "vote_admission", applicant="Cora", choice="Ja")
    act(service, game, "Bert", "vote_admission", applicant="Cora", choice="Enthaltung")
    play_round(service, game, {"Anna": 1, "Bert": 2})
    act(service, game, "Max", "set_zat", days=7)
    state = service.reads.load(game)
    assert state.players["Cora"]["status"] == "active"
    lowest = min(state.vars["standings"]["5"].values())
    assert state.players["Cora"]["vars"]["points"] == lowest


def test_an_unplayable_game_is_won_by_the_proposer(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "set_zat", days=7)
    act(service, game, "Bert", "propose", title="Chaos",
        changes=[{"enact": {"title": "Chaos", "text": "Jede Regel gilt und gilt nicht."}}])
    play_round(service, game, {"Anna": 1, "Bert": 2, "Cora": 3})
    act(service, game, "Max", "set_zat", days=7)
    for player in ("Anna", "Bert", "Cora"):
        act(service, game, player, "vote", proposal=1, choice="Ja", deferral="Nein")
    play_round(service, game, {"Anna": 1, "Bert": 2, "Cora": 3})
    act(service, game, "Anna", "call_court", question="Ist das Spiel noch spielbar?",
        position="Nein: R.12 macht jede Frage unentscheidbar.")
    act(service, game, "Max", "rule_case", case=1, judgment="stattgegeben",
        reasons="Unspielbar (G.13(2)).", unplayable=1)
    act(service, game, "Max", "set_zat", days=7)
    for player in ("Anna", "Bert", "Cora"):
        act(service, game, player, "vote_ruling", case=1, choice="Ja")
    service.commands.advance(game, by=8 * 86400)
    state = service.reads.load(game)
    assert state.winners == ["Bert"] and state.ended
    assert state.cases["1"]["status"] == "closed"


def test_without_r2_an_nmr_means_leaving_the_game(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "emergency", reason="Probe", changes=[{"repeal": {"rule": "R.2"}}])
    play_round(service, game, {"Anna": 1, "Bert": 2})
    state = service.reads.load(game)
    assert state.players["Cora"]["status"] == "excluded"  # G.2(2): no other consequence left
    assert state.players["Cora"]["vars"]["points"] == 45  # only the -5 of R.4(2)


def test_every_rule_needs_a_text(service: Service) -> None:
    game = new_game(service)
    act(service, game, "Max", "set_zat", days=7)
    message = refusal(service, game, "Anna", "propose",
                      changes=[{"enact": {"title": "Nur Code", "code": "def check(g, c):\n"
                                          "    return None\n"}}])
    assert "eindeutig bestimmten Text" in message

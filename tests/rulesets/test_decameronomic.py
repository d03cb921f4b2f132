"""DecameroNomic (February 2002): what its scenarios cannot check — the annotations the
Scriba publishes, rendered from the rules' history and compared with the seed; the
combat of gladiators; the queries; and that repealing a rule removes its mechanic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

RULESET = "decameronomic"
SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_1e586876702b88c6.txt"
DAY = 24 * 3600
ANNOTATION = re.compile(r"^\[(emendata|promulgata) su proposta di (\S+) (del |dell')"
                        r"(\d+)\.(\d+)\.(\d+)\]$")


def _game(service: Service, players: list[str] | None = None) -> str:
    return service.commands.create_game(RULESET, start="2026-03-02T09:00:00Z", seed=1,
                                        players=players or ["Anna", "Bruno", "Carla", "Dario"],
                                        offices={"King": "Anna", "Scriba": "Dario"}).game_id


def _act(service: Service, game: str, actor: str, action: str, **args: object) -> None:
    outcome = service.commands.perform(game, actor, action, dict(args))
    assert outcome.accepted, outcome.message


def _seed_annotations() -> dict[str, list[str]]:
    """Each rule's annotation lines as the seed prints them, dates without leading zeros."""
    found: dict[str, list[str]] = {}
    current = None
    for line in SEED.read_text(encoding="utf-8").splitlines():
        head = re.match(r"^(\d+)\. \S", line)
        if head:
            current = head.group(1)
            found.setdefault(current, [])
            continue
        match = ANNOTATION.match(line.strip())
        if match and current:
            kind, author, prep, day, month, year = match.groups()
            found[current].append(f"[{kind} su proposta di {author} {prep}{int(day)}."
                                  f"{int(month)}.{year}]")
    return found


@pytest.mark.skipif(not SEED.exists(), reason="seed not available")
def test_the_published_annotations_are_rendered_from_the_history(service: Service) -> None:
    game = _game(service)
    rendered = {r["id"]: r for r in service.reads.query(game, "annotated_ruleset")}
    expected = _seed_annotations()
    assert set(rendered) == set(expected)
    for rule_id, lines in expected.items():
        assert rendered[rule_id]["annotations"] == lines, rule_id
    assert rendered["100"]["annotations"] == ["[emendata su proposta di Karalis dell'1.11.2001]"]
    text = service.reads.query(game, "annotated_ruleset", {"format": "text"})
    assert text.startswith("1. Le regole\n\nTutti i giocatori devono obbedire")
    assert "2700. Tangenti\n\nAd ogni cortigiano" in text
    assert text.endswith("[promulgata su proposta di Gondor del 5.2.2002]")


def test_new_and_amended_laws_get_their_annotations(service: Service) -> None:
    result = run_scenario(service.commands, load_scenario(BUNDLED / RULESET / "scenarios" /
                                                          "lettere.yaml"))
    assert result.errors == []
    rendered = {r["id"]: r for r in service.reads.query(result.game_id, "annotated_ruleset")}
    assert rendered["2800"]["annotations"] == ["[promulgata su proposta di Carla del 16.3.2026]"]
    assert rendered["2800"]["owner"] == "Carla"
    assert rendered["2900"]["annotations"] == [
        "[promulgata su proposta di Urbino del 6.11.2001]",
        "[emendata su proposta di Bruno del 16.3.2026]"]
    assert "300" not in rendered
    assert rendered["2900"]["text"].startswith("2900. Ogni limite ha una pazienza\n\n")


@pytest.mark.parametrize(("a", "b", "winner", "scores"), [
    ("51423", "12341", "a", (13, 13)),   # tie: Crixus scored first
    ("12341", "51423", "b", (13, 13)),
    ("35251", "12341", "a", (16, 9)),
    ("51423", "12345", "b", (9, 21)),    # the trained Maximus beats Crixus
    ("11111", "33333", "b", (0, 20)),    # difference 2: the higher digit scores
    ("22222", "11111", "b", (0, 15)),    # difference 1: the lower digit scores
    ("12345", "12345", None, (0, 0)),
])
def test_combat(service: Service, a: str, b: str, winner: str | None,
                scores: tuple[int, int]) -> None:
    game = _game(service)
    answer = service.reads.query(game, "combat", {"a": a, "b": b})
    assert answer == {"a": a, "b": b, "score_a": scores[0], "score_b": scores[1],
                      "winner": winner}


def test_queries(service: Service) -> None:
    game = _game(service)
    assert service.reads.query(game, "status") == (
        "Giornata 1, Re Anna, dal 2.3.2026 alle 09:00 UTC al 16.3.2026 alle 09:00 UTC.")
    _act(service, game, "Bruno", "buy_gladiator", name="Maximus", magic_number="12341")
    assert service.reads.query(game, "gladiators") == {
        "Maximus": {"owner": "Bruno", "magic": "12341", "available_from": 2, "training": None}}
    assert service.reads.query(game, "combat", {"a": "Maximus", "b": "51423"})["winner"] == "b"
    accounts = service.reads.query(game, "accounts")
    assert accounts["crown_treasury"] == 500
    assert accounts["players"]["Bruno"] == {"treasure": 2000, "treasure_pending": -500,
                                            "economic_power": 100}
    _act(service, game, "Carla", "contest", question="Chi decide i titoli?", rule="1")
    _act(service, game, "Anna", "decree", case=1, judgment="L'autore", reasons="L'autore.",
         rules=["1"])
    assert service.reads.query(game, "decrees") == [
        {"case": 1, "question": "Chi decide i titoli?", "king": "Anna", "decree": "L'autore",
         "text": "L'autore.", "rules": ["1"]}]
    assert [p["player"] for p in service.reads.query(game, "players")] == [
        "Anna", "Bruno", "Carla", "Dario"]


def test_repealing_a_rule_removes_its_mechanic(service: Service) -> None:
    game = _game(service)
    _act(service, game, "Bruno", "propose", label="r1", changes=[{"repeal": {"rule": "1900"}}])
    _act(service, game, "Bruno", "propose", label="r2", letter=1,
         changes=[{"repeal": {"rule": "10"}}])
    _act(service, game, "Carla", "vote_letter", votes=[
        {"proposal": "r1", "choice": "favorevole"}, {"proposal": "r2", "choice": "favorevole"}])
    service.commands.advance(game, by=14 * DAY)
    state = service.reads.load(game)
    assert state.proposal_by_label("r1")["status"] == "adopted"
    assert "1900" not in [r["id"] for r in state.rules_in_force()]
    # Without rule 1900 a transfer changes the Treasures at once, and so does the income
    # earned as Giornata 2 starts (2500): Carla has 2000, + 100 earned as Giornata 1
    # started (credited now, under 1900 then), + 106 earned now (her Economic Power after
    # the +6 of Giornata 1).
    _act(service, game, "Carla", "give_nomica", to="Dario", amount=300)
    players = service.reads.load(game).players
    assert players["Carla"]["vars"]["economic_power"] == 106
    assert players["Carla"]["vars"]["treasure"] == 2000 + 100 + 106 - 300
    assert players["Dario"]["vars"]["treasure"] == 2000 + 100 + 100 + 300
    # Without rule 10 the King (now Bruno) is not a courtier and cannot vote.
    assert service.reads.load(game).offices["King"] == "Bruno"
    _act(service, game, "Carla", "propose", label="r3", changes=[{"repeal": {"rule": "1800"}}])
    refused = service.commands.perform(game, "Bruno", "vote", {"proposal": "r3",
                                                               "choice": "contrario"})
    assert not refused.accepted
    assert "Il Re non è un Cortigiano" in refused.message
    assert not service.commands.perform(game, "Bruno", "veto", {"proposal": "r3"}).accepted


def test_a_king_who_overspends_is_quarantined_then_expelled(
        service: Service) -> None:
    game = _game(service)
    _act(service, game, "Bruno", "propose", changes=[{"repeal": {"rule": "1800"}}])
    _act(service, game, "Carla", "propose", changes=[{"repeal": {"rule": "1600"}}])
    service.commands.advance(game, by=14 * DAY)
    assert service.reads.load(game).offices["King"] == "Bruno"
    # Bruno overspends during his reign: Quarantine at the start of Giornata 3 ...
    _act(service, game, "Bruno", "give_nomica", to="Anna", amount=2000)
    _act(service, game, "Bruno", "give_nomica", to="Dario", amount=2000)
    _act(service, game, "Carla", "propose", changes=[{"repeal": {"rule": "1500"}}])
    service.commands.advance(game, by=14 * DAY)
    state = service.reads.load(game)
    assert state.offices["King"] == "Carla"
    assert state.players["Bruno"]["vars"]["quarantine"] == 3
    assert not service.commands.perform(game, "Bruno", "propose",
                                        {"changes": [{"repeal": {"rule": "300"}}]}).accepted
    # ... and expelled at the start of Giornata 4.
    _act(service, game, "Dario", "propose", changes=[{"repeal": {"rule": "1400"}}])
    service.commands.advance(game, by=14 * DAY)
    state = service.reads.load(game)
    assert state.players["Bruno"]["status"] == "expelled"
    assert state.offices["King"] == "Dario"


def test_a_king_who_is_also_scriba_does_not_judge_his_own_claim(service: Service) -> None:
    """2100's claims are judged by the King, the King's by the Scriba: when one player
    holds both offices his claim waits, unjudged, for the next King."""
    game = service.commands.create_game(RULESET, start="2026-03-02T09:00:00Z", seed=1,
                                        players=["Anna", "Bruno", "Carla"],
                                        offices={"King": "Anna", "Scriba": "Anna"}).game_id
    _act(service, game, "Anna", "claim_victory", question="Nessuno può più proporre.")
    assert service.reads.load(game).cases["1"]["judge"] is None
    refused = service.commands.perform(game, "Anna", "judge_claim",
                                       {"case": 1, "judgment": "riconosciuta"})
    assert not refused.accepted
    assert refused.message == "Nessuno giudica la propria rivendicazione di vittoria."
    _act(service, game, "Bruno", "propose", changes=[{"repeal": {"rule": "1800"}}])
    service.commands.advance(game, by=14 * DAY)
    state = service.reads.load(game)
    assert state.offices["King"] == "Bruno" and state.cases["1"]["judge"] == "Bruno"
    _act(service, game, "Bruno", "judge_claim", case=1, judgment="respinta",
         reasons="Si può ancora proporre.")
    case = service.reads.load(game).cases["1"]
    assert (case["status"], case["judgment"]["judgment"], case["judgment"]["by"]) == (
        "closed", "respinta", "Bruno")
    assert not service.reads.load(game).ended

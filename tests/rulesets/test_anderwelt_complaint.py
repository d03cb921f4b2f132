"""Anderwelt G.2(3) on the docket: a complaint is a case the GM judges; a justified one
orders a correction of the record and the round is evaluated anew (issue 21, item 5).

The game: Anna, Bert and Cora play, Max is the GM (no player). Round 1 opens at
2026-03-01T10:00Z with its ZAT seven days later. Anna gives the Nomiczahl 2, Cora 3; Bert's
letter with his 1 reaches the GM on 5 March, and the GM loses it. Nobody proposes a rule
change. Evaluated as the GM did it (R.4(1), R.4(2), R.2(3)):

    Anna 50 + 4 (2 is the smallest: twice its value) - 5 (no proposal) = 49
    Cora 50 + 3 (3 is the second smallest)           - 5              = 48
    Bert 50 - 20 (NMR: no move by the ZAT)           - 5              = 25

Bert complains in round 2; the GM finds the complaint justified and adds the lost move at
the time it reached him. Evaluated anew:

    Bert 50 + 2 (1 is the smallest: twice 1)  - 5 = 47   (and no NMR)
    Anna 50 + 2 (2 is the second smallest)    - 5 = 47
    Cora 50 + 0 (3 earns nothing now)         - 5 = 45
"""

from __future__ import annotations

from typing import Any

from scriba.service import Service

START = "2026-03-01T10:00:00Z"
LOST_AT = "2026-03-05T12:00:00Z"


def act(service: Service, game: str, who: str, action: str, **args: Any) -> None:
    outcome = service.commands.perform(game, who, action, args)
    assert outcome.accepted, outcome.message


def refusal(service: Service, game: str, who: str, action: str, **args: Any) -> str:
    outcome = service.commands.perform(game, who, action, args)
    assert not outcome.accepted, (action, args)
    return outcome.message


def points(service: Service, game: str) -> dict[str, int]:
    state = service.reads.load(game)
    return {name: p["vars"]["points"] for name, p in state.players.items()}


def round_one_with_a_lost_letter(service: Service) -> str:
    game = service.commands.create_game("anderwelt", start=START, seed=1,
                                        players=["Anna", "Bert", "Cora"],
                                        offices={"GM": "Max"}).game_id
    act(service, game, "Max", "set_zat", days=7)
    act(service, game, "Anna", "nomic_number", number=2)
    act(service, game, "Cora", "nomic_number", number=3)
    service.commands.advance(game, by=8 * 86400)  # past the ZAT: round 1 is evaluated
    act(service, game, "Max", "set_zat", days=7)  # round 2
    return game


def test_an_upheld_complaint_re_evaluates_the_round(service: Service) -> None:
    game = round_one_with_a_lost_letter(service)
    assert points(service, game) == {"Anna": 49, "Bert": 25, "Cora": 48}

    act(service, game, "Bert", "complain",
        question="Meine Nomiczahl 1 lag dem GM am 5. März vor und wurde nicht gewertet.")
    case = service.reads.load(game).cases["1"]
    assert (case["status"], case["opened_by"], case["data"]["about_round"]) == \
        ("open", "Bert", 1)
    # the GM judges (G.2(3)), in the ruleset's words, and only the GM
    assert "GM" in refusal(service, game, "Anna", "decide_complaint", case=1,
                           judgment="berechtigt", reasons="Ja.")
    assert "Zeitpunkt" in refusal(service, game, "Max", "decide_complaint", case=1,
                                  judgment="berechtigt", reasons="Verloren.",
                                  lost_player="Bert", lost_action="nomic_number",
                                  lost_args={"number": 1}, lost_at="am fünften")
    assert "vor jetzt eingegangen" in refusal(service, game, "Max", "decide_complaint", case=1,
                                  judgment="berechtigt", reasons="Verloren.",
                                  lost_player="Bert", lost_action="nomic_number",
                                  lost_args={"number": 1}, lost_at="2027-01-01T00:00:00Z")
    seq_before = service.reads.load(game).seq

    act(service, game, "Max", "decide_complaint", case=1, judgment="Berechtigt",
        reasons="Berts Brief mit der Nomiczahl 1 lag am 5. März vor.",
        lost_player="Bert", lost_action="nomic_number", lost_args={"number": 1},
        lost_at=LOST_AT)

    state = service.reads.load(game)
    assert {name: p["vars"]["points"] for name, p in state.players.items()} == \
        {"Anna": 47, "Bert": 47, "Cora": 45}
    assert state.vars["standings"]["1"] == {"Anna": 47, "Bert": 47, "Cora": 45}
    assert state.players["Bert"]["vars"]["acted_round"] == 1  # no NMR any more
    case = state.cases["1"]
    assert case["status"] == "judged"
    assert (case["judgment"]["judgment"], case["judgment"]["meaning"]) == \
        ("berechtigt", "upheld")
    # the correction is on the record, made after the judgment, naming the complaint
    after = [e for e in service.reads.log(game) if e["seq"] > seq_before]
    ordered = [e for e in after if e["type"] == "correction_ordered"]
    recorded = [e for e in after if e["type"] == "record_corrected"]
    assert [e["payload"]["correction"]["actor"] for e in ordered] == ["Bert"]
    assert len(recorded) == 1 and recorded[0]["payload"]["case"] == 1
    changed = {(v["player"], v["name"]): (v["before"], v["after"])
               for v in recorded[0]["payload"]["difference"]["variables"]}
    assert changed[("Anna", "points")] == (49, 47)
    assert changed[("Bert", "points")] == (25, 47)
    assert changed[("Cora", "points")] == (48, 45)
    corrections = service.corrections.corrections(game)
    assert [c.case for c in corrections] == [1]
    # replay (the fold of the stored log) equals the live state
    assert service.reads.replay(game).to_json() == state.to_json()

    # the judgment stands once its round is over (G.2(3): "in der folgenden Runde")
    act(service, game, "Anna", "nomic_number", number=5)
    act(service, game, "Bert", "nomic_number", number=6)
    act(service, game, "Cora", "nomic_number", number=7)
    service.commands.advance(game, by=8 * 86400)
    assert service.reads.load(game).cases["1"]["status"] == "closed"


def test_a_dismissed_complaint_changes_nothing_and_is_closed(service: Service) -> None:
    game = round_one_with_a_lost_letter(service)
    act(service, game, "Cora", "complain", question="Anna hätte nur 2 Punkte bekommen dürfen.")
    assert "Nur eine berechtigte" in refusal(service, game, "Max", "decide_complaint", case=1,
                                             judgment="unberechtigt", reasons="Nein.",
                                             annul=5)
    act(service, game, "Max", "decide_complaint", case=1, judgment="unberechtigt",
        reasons="Die kleinste Nomiczahl zählt doppelt (R.4(1)).")
    state = service.reads.load(game)
    assert state.cases["1"]["status"] == "closed"
    assert {name: p["vars"]["points"] for name, p in state.players.items()} == \
        {"Anna": 49, "Bert": 25, "Cora": 48}
    assert not [e for e in service.reads.log(game) if e["type"] == "record_corrected"]
    assert "nur nach einer Korrektur" in refusal(service, game, "Cora", "request_repeat",
                                                 case=1)


def test_a_wrongly_counted_move_is_annulled(service: Service) -> None:
    """Cora's Nomiczahl reached the GM after the ZAT (G.12(4)) but he counted it: annulled,
    Cora committed an NMR and Anna's 2 is the only number — the smallest, +4; nobody is
    second. Anna 50+4-5 = 49, Bert 25 as before, Cora 50-20-5 = 25."""
    game = round_one_with_a_lost_letter(service)
    cora = next(e["seq"] for e in service.reads.log(game)
                if e["type"] == "action_taken" and e.get("actor") == "Cora")
    act(service, game, "Anna", "complain", question="Coras Nomiczahl kam nach dem ZAT.",
        event=cora)
    assert service.reads.load(game).cases["1"]["concerns"] == [{"kind": "event",
                                                                "id": str(cora)}]
    act(service, game, "Max", "decide_complaint", case=1, judgment="berechtigt",
        reasons="Coras Brief kam erst nach dem ZAT.", annul=cora)
    assert points(service, game) == {"Anna": 49, "Bert": 25, "Cora": 25}
    state = service.reads.load(game)
    assert state.cases["1"]["status"] == "judged"  # the complaint survives its own recompute
    assert state.players["Cora"]["vars"]["acted_round"] == 0


def test_a_repeat_granted_judges_the_complaint_again_with_a_second_correction(
        service: Service) -> None:
    """Cora, put at a disadvantage by the first correction, asks for the evaluation to be
    repeated; the GM halts the game, finds on looking again that Anna's 2 also came after
    the ZAT, and annuls it. Round 1 evaluated a third time: Bert's 1 the smallest (+2),
    Cora's 3 the second (+3), Anna an NMR (-20); -5 each: Anna 25, Bert 47, Cora 48."""
    game = round_one_with_a_lost_letter(service)
    act(service, game, "Bert", "complain", question="Meine Nomiczahl 1 ging verloren.")
    act(service, game, "Max", "decide_complaint", case=1, judgment="berechtigt",
        reasons="Verloren.", lost_player="Bert", lost_action="nomic_number",
        lost_args={"number": 1}, lost_at=LOST_AT)
    act(service, game, "Cora", "request_repeat", case=1, reason="Ich bin benachteiligt.")
    assert "keine Wiederholung beantragt" in refusal(service, game, "Max", "halt", case=1,
                                                     player="Anna")
    act(service, game, "Max", "halt", case=1, player="Cora")
    assert "angehalten" in refusal(service, game, "Anna", "nomic_number", number=4)
    assert "erneut" in refusal(service, game, "Max", "resume")
    anna = next(e["seq"] for e in service.reads.log(game)
                if e["type"] == "action_taken" and e.get("actor") == "Anna")
    act(service, game, "Max", "decide_complaint", case=1, judgment="berechtigt",
        reasons="Auch Annas Brief kam erst nach dem ZAT.", annul=anna)
    act(service, game, "Max", "resume")
    state = service.reads.load(game)
    assert points(service, game) == {"Anna": 25, "Bert": 47, "Cora": 48}
    assert [c.case for c in service.corrections.corrections(game)] == [1, 1]
    case = state.cases["1"]
    assert (case["status"], case["data"]["repeated"]) == ("judged", True)
    assert [j["reasons"] for j in case["earlier"]] == ["Verloren."]
    assert not state.vars["halted"]
    assert service.reads.replay(game).to_json() == state.to_json()

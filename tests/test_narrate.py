"""Events told as sentences in Italian, German and English, with the ruleset's own words;
the reply to a command (describe_outcome)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriba.kernel.events import _HANDLERS, RECORD_ONLY, make_event
from scriba.service import Service, open_service
from scriba.service.narrate import SILENT, Narrator, Words
from scriba.service.outcome import describe_outcome
from scriba.service.scenario import load_scenario, run_scenario
from scriba.service.words import time_in_words

RULESETS = Path(__file__).resolve().parents[1] / "src" / "scriba" / "rulesets"
T = "2026-03-04T10:00:00Z"
PROPOSAL = {"number": 301, "label": "p301", "author": "Anna", "title": "Zuppa",
            "changes": [{"type": "enact", "title": "Zuppa", "text": "Si porta la zuppa."}]}

# One event of every type the kernel folds or records.
SAMPLES = [
    make_event("game_created", T, None, game_id="g", name="Partita", ruleset="suber",
               rules=[{"id": "101"}], seed=0),
    make_event("player_joined", T, "Anna", player="Anna", vars={"points": 0}),
    make_event("player_status", T, "Anna", player="Anna", status="left"),
    make_event("var_set", T, None, player="Anna", name="points", delta=10, value=10,
               by_rule="109"),
    make_event("var_set", T, None, player=None, name="round", value=2, by_rule="201"),
    make_event("office_set", T, None, office="Judge", holder="Bruno", by_rule="212"),
    make_event("proposal_submitted", T, "Anna", **PROPOSAL),
    make_event("vote_cast", T, "Bruno", proposal=301, player="Bruno", choice="for"),
    make_event("vote_withdrawn", T, "Bruno", proposal=301, player="Bruno"),
    make_event("proposal_resolved", T, None, proposal=301, outcome="adopted",
               tally={"for": 2, "against": 1}, apply=True),
    make_event("rule_changed", T, None, change={"type": "repeal", "rule": "105"},
               cause={"kind": "proposal", "proposal": 301, "label": "p301", "author": "Anna"}),
    make_event("rule_change_failed", T, None, change={"type": "amend", "rule": "999"},
               cause={}, reason="change_rule_missing", details={"rule": "999", "type": "amend"}),
    make_event("timer_set", T, None, id="t1", name="fine", at="2026-03-05T10:00:00Z",
               by_rule="3"),
    make_event("timer_fired", "2026-03-05T10:00:00Z", None, id="t1", name="fine"),
    make_event("timer_cancelled", T, None, id="t1", by_rule="3"),
    make_event("asset_set", T, None, kind="gladiator", id="g1", owner="Anna", data={}),
    make_event("asset_destroyed", T, None, kind="gladiator", id="g1"),
    make_event("notice", T, None, text="Comincia il turno di Bruno."),
    make_event("moves_revealed", T, None, action="secret_vote", proposal=3, by_rule="301"),
    make_event("winner_declared", T, None, players=["Anna"], end=True),
    make_event("game_ended", T, None),
    make_event("correction_ordered", T, None, correction={"kind": "annul", "event": 7},
               by_rule="212"),
    make_event("record_corrected", T, None, number=1, correction={"kind": "annul", "event": 7},
               reason="Un voto di troppo.", by="Bruno", point=7, through=9, difference={},
               patch=[], refused_now=[], accepted_now=[]),
    make_event("case_opened", T, "Carla", number=3, question="Is a hat a rule?",
               concerns=[{"kind": "rule", "id": "212"}], parties=["Anna"], data={},
               action="cfj"),
    make_event("case_assigned", T, None, case=3, judge="Bruno", by_rule="212"),
    make_event("case_judged", T, "Bruno", case=3, judgment="VERO", reasons="Rule 212 says so.",
               rules=[{"rule": "212", "revision": 2}], data={}),
    make_event("case_appealed", T, "Anna", case=3, reasons="The judge misread it."),
    make_event("case_reopened", T, None, case=3, reason="overruled", by_rule="212"),
    make_event("case_closed", T, None, case=3, reason="", by_rule="212"),
    make_event("command_refused", T, "Carla", action="vote", args={}, raw="",
               message="Non è il tuo turno.", reason="rule"),
    make_event("action_taken", T, "Carla", action="roll", args={}),
    make_event("rule_code_aborted", T, None, rule="201", hook="on_vote_cast",
               reason="Traceback...\nerror: fail: boom\n --> rule.star:2:5"),
    make_event("clock_advanced", T, None, to=T),
]


def _tell(events: list[dict], language: str, **words: dict) -> list[str]:
    narrator = Narrator(Words(language=language, **words))
    return [narrator.tell(e) for e in events]


def test_every_event_type_of_the_kernel_has_a_sample() -> None:
    told = {e["type"] for e in SAMPLES}
    assert set(_HANDLERS) | RECORD_ONLY <= told | SILENT


@pytest.mark.parametrize("language", ["it", "de"])
def test_every_event_is_told_in_the_language(language: str) -> None:
    english = _tell(SAMPLES, "en")
    other = _tell(SAMPLES, language)
    for event, en, text in zip(SAMPLES, english, other, strict=True):
        assert en and text, event["type"]
        if event["type"] != "notice":  # a notice is the rules' own text, as it is
            assert text != en, (event["type"], text)


def test_sentences_in_three_languages() -> None:
    vote, resolved, repeal = SAMPLES[7], SAMPLES[9], SAMPLES[10]
    assert _tell([vote, resolved, repeal], "en") == [
        "Bruno votes for on proposal 301.", "Proposal 301 is adopted (for 2, against 1).",
        "Rule 105 is repealed by proposal 301 of Anna."]
    assert _tell([vote, resolved, repeal], "it") == [
        "Bruno vota a favore sulla proposta 301.",
        "La proposta 301 è approvata (a favore 2, contro 1).",
        "La regola 105 è abrogata con la proposta 301 di Anna."]
    assert _tell([vote, resolved, repeal], "de") == [
        "Bruno stimmt mit dafür über Vorschlag 301 ab.",
        "Vorschlag 301 ist angenommen (dafür 2, dagegen 1).",
        "Regel 105 wird durch den Vorschlag 301 von Anna aufgehoben."]


def test_the_games_own_words_are_used() -> None:
    words = {"variables": {"points": "punti"}, "choices": {"for": "favorevole",
                                                           "against": "contrario"},
             "proposals": {"301": "Zuppa"}}  # number → title
    told = _tell([SAMPLES[3], SAMPLES[7], SAMPLES[9]], "it", **words)
    # A proposal is named one way in every sentence: its number with its title.
    assert told == ["Anna: punti +10 (ora 10). (regola 109)",
                    "Bruno vota favorevole sulla proposta 301 “Zuppa”.",
                    "La proposta 301 “Zuppa” è approvata (favorevole 2, contrario 1)."]
    assert _tell([SAMPLES[9]], "de", proposals={"301": "Suppe"}) == [
        "Vorschlag 301 „Suppe“ ist angenommen (dafür 2, dagegen 1)."]


def test_unknown_statuses_and_reasons_are_shown_as_they_are() -> None:
    event = make_event("proposal_resolved", T, None, proposal=7, outcome="tabled",
                       tally={}, reason="the King said so")
    assert _tell([event], "en") == ["Proposal 7 is tabled. Reason: the King said so."]
    quorum = make_event("proposal_resolved", T, None, proposal=7, outcome="failed_quorum",
                        tally={}, reason="quorum")
    assert _tell([quorum], "it") == ["La proposta 7 è decaduta per mancanza del quorum. "
                                     "Motivo: mancanza del quorum."]


def test_a_tally_shows_every_count_with_the_games_words() -> None:
    agora = make_event("proposal_resolved", T, None, proposal=9402, outcome="failed_quorum",
                       tally={"voters": 2, "quorum": 3, "strength_for": 6, "present": 0},
                       apply=False)
    assert _tell([agora], "en", choices={"present": "PRESENT"}) == [
        "Proposal 9402 failed for lack of quorum (voters 2, quorum 3, strength for 6, "
        "PRESENT 0)."]
    assert _tell([agora], "de") == [
        "Vorschlag 9402 ist mangels Quorum gescheitert (Abstimmende 2, Quorum 3, "
        "strength for 6, anwesend 0)."]


def test_a_timer_cancelled_is_named_from_when_it_was_set_and_aborts_are_short() -> None:
    told = _tell(SAMPLES, "en")
    assert told[SAMPLES.index(SAMPLES[14])] == "Deadline “fine” cancelled. (rule 3)"
    assert told[-2] == "The code of rule 201 failed: Line 2, column 5: The rule stopped " \
        "itself: “boom”."
    assert _tell(SAMPLES, "it")[-2] == "Il codice della regola 201 è fallito: Riga 2, " \
        "colonna 5: La regola si è fermata da sé: «boom»."


def test_names_and_texts_stay_verbatim_and_are_never_formatted() -> None:
    hostile = "<script>{0}{player}</script> [/red]"
    events = [make_event("player_joined", T, hostile, player=hostile, vars={}),
              make_event("proposal_submitted", T, hostile, number=1, label="{label}",
                         author=hostile, title="<b>{title}</b>", changes=[]),
              make_event("notice", T, None, text=hostile)]
    told = _tell(events, "en")
    assert told[0] == f"{hostile} joins the game."
    assert told[1] == f"{hostile} submits proposal 1, “<b>{{title}}</b>”: ."
    assert told[2] == hostile


@pytest.fixture(scope="module")
def svc() -> Iterator[Service]:
    service = open_service("sqlite://")
    yield service
    service.close()


def test_describe_outcome_of_a_vote_in_suber(svc: Service) -> None:
    svc.commands.create_game("suber", game_id="s1", players=["Anna", "Bruno", "Carla"],
                             start="2026-03-01T10:00:00Z")
    change = {"enact": {"title": "Soup", "text": "Players may bring soup."}}
    proposed = svc.commands.perform("s1", "Anna", "propose", {"label": "p301", "changes": [change]})
    assert svc.reads.describe_outcome("s1", proposed).startswith(
        "Proposal recorded: Anna submits proposal 301: enact a new rule, “Soup”.")
    vote = svc.commands.perform("s1", "Bruno", "vote", {"proposal": "p301", "choice": "aye"})
    reply = svc.reads.describe_outcome("s1", vote)
    # Named as the rules' own status names it: "301", never "p301" beside it.
    assert reply.startswith("Vote recorded: Bruno votes yes on proposal 301.")
    assert reply.endswith("Proposal 301 is open. Round 1, turn 1: Anna moves; proposal 301 "
                          "awaits the votes of Anna, Carla. Judge: Carla.")  # rule 202's status
    refused = svc.commands.perform("s1", "Bruno", "vote", {"proposal": "p301", "choice": "maybe"})
    assert describe_outcome(refused, "en") == refused.message
    assert "maybe" in refused.message


def test_describe_outcome_names_the_deadline_of_a_giornata(svc: Service) -> None:
    svc.commands.create_game("decameronomic-rimaneggiato", game_id="dr1",
                             players=["Anna", "Bruno", "Carla", "Dario"],
                             offices={"King": "Anna", "Poeta": "Carla"},
                             start="2026-03-02T09:00:00Z")
    state = svc.reads.load("dr1")
    deadline = min(t["at"] for t in state.timers.values() if t["at"] > state.time)
    outcome = svc.commands.perform("dr1", "Bruno", "propose", {"changes": [
        {"enact": {"title": "Saluti", "text": "a) Ogni Giocatore saluta il Re."}}]})
    assert outcome.accepted, outcome.message
    reply = svc.reads.describe_outcome("dr1", outcome)
    assert reply.startswith("Proposta registrata: Bruno presenta la proposta"), reply
    assert "introdurre una nuova regola, “Saluti”" in reply
    # the deadline in words, as the period's report writes it
    assert f"è aperta fino a {time_in_words(deadline, 'it')}. Giornata 1" in reply, reply
    assert re.search(r"è aperta fino a \w+ \d+ \w+ 20\d\d, \d\d:\d\d UTC\.", reply), reply
    vote = svc.commands.perform("dr1", "Dario", "vote", {"proposal": outcome.events[0]["payload"]
                                                         ["number"], "choice": "favorevole"})
    assert svc.reads.describe_outcome("dr1", vote).startswith(
        "Voto registrato: Dario vota favorevole sulla proposta")


@pytest.mark.parametrize(("ruleset", "scenario", "expected"), [
    ("equinomic", "full_game", "La proposta 1 è approvata"),
    ("anderwelt", "ganzes_spiel", "Vorschlag 1 „Presse mit Überschrift“ ist angenommen"),
    ("suber", "whole_game", "Proposal 301 is adopted"),
])
def test_chronicle_of_a_whole_game_in_its_language(svc: Service, ruleset: str, scenario: str,
                                                   expected: str) -> None:
    result = run_scenario(svc.commands, load_scenario(RULESETS / ruleset / "scenarios" /
                                                      f"{scenario}.yaml"))
    assert result.ok, result.errors
    texts = [e["text"] for e in svc.reads.chronicle(result.game_id)]
    assert any(t.startswith(expected) for t in texts), texts[:40]
    winners = svc.reads.summary(result.game_id)["winners"]
    assert any(winners[0] in t for t in texts if t.startswith(winners[0]))
    english = [e["text"] for e in svc.reads.chronicle(result.game_id, language="en", limit=5)]
    assert english[0].startswith("The game ")
    reports = svc.reads.period_reports(result.game_id)
    assert len(reports) >= 2 and all(r["title"] and r["start"] for r in reports)

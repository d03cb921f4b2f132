"""The FLR's CFJ annotations import as closed cases, precedents of their rules, and the
export writes them back from the cases (issue 21 §2)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agora_corpus import CORPUS, needs_corpus

from scriba.agora.flr import parse_flr
from scriba.agora.flr.exporter import export_text
from scriba.kernel.events import fold
from scriba.service import Service
from scriba.service.flr import import_flr

pytestmark = needs_corpus
FLR = CORPUS / "flr-2026-07-05.txt"


@pytest.fixture(scope="module")
def flr_text() -> str:
    return FLR.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def agora(flr_text: str, make_service) -> Iterator[tuple[Service, str]]:
    service = make_service("sqlite://")
    import_flr(service.commands, flr_text, "agora-cases",
               offices={"Rulekeepor": "Janet"})
    yield service, "agora-cases"
    service.close()


def test_every_annotation_is_a_closed_case_numbered_by_its_cfj(agora, flr_text: str) -> None:
    service, game = agora
    cases = service.reads.load(game).cases
    annotations = [a for r in parse_flr(flr_text).ordered_rules() for a in r["annotations"]]
    assert len(cases) == len(annotations) == 225
    assert {c["status"] for c in cases.values()} == {"closed"}
    case = cases["825"]
    assert case["question"] == "Players must obey the Rules even if no Rule says so."
    assert case["opened"] == "1995-11-07T00:00:00Z" and case["opened_by"] is None
    # Rule 101 was first amended in 1999: in 1995 the CFJ read its revision 0.
    assert case["judgment"]["rules"] == [{"rule": "101", "revision": 0}]
    assert case["concerns"] == [{"kind": "rule", "id": "101"}]
    assert [s["step"] for s in case["steps"]] == ["opened", "judged", "closed"]
    # CFJ 1841 holds one thing under Rule 478, another under Rule 106: the second holding
    # is a case of its own after the others, citing the same CFJ; so is a range.
    second = [c for c in cases.values() if c["data"]["label"] == "1841" and c["number"] != 1841]
    assert len(second) == 1 and second[0]["number"] > 4103
    assert cases["1841"]["judgment"]["rules"][0]["rule"] == "478"
    assert second[0]["judgment"]["rules"][0]["rule"] == "106"
    ranged = [c for c in cases.values() if c["data"]["label"] == "1911-1914"]
    assert len(ranged) == 1 and ranged[0]["number"] > 4103


def test_a_rules_precedents_are_its_annotations_newest_first(agora) -> None:
    service, game = agora
    listed = service.reads.rule_history(game, "101")["precedents"]
    assert [(p["label"], p["date"]) for p in listed] == [
        ("3839", "2020-06-03"), ("2515", "2009-05-08"), ("1911-1914", "2008-03-18"),
        ("1848", "2007-12-21"), ("1709", "2007-07-26"), ("825", "1995-11-07"),
        ("24", None)]
    assert listed[0]["question"].startswith("The game of Agora cannot end now")
    assert listed[0]["judgment"] is None  # the FLR prints the holding, not the word
    # Only a judgment read before the rule's last amendment is about an older text.
    assert [p["changed_since"] for p in listed] == [False, True, True, True, True, True,
                                                    False]
    assert listed[-1]["revision"] is None  # CFJ 24 gives no day


def test_a_replay_and_a_ruling_after_import_keep_the_cases(agora, flr_text: str) -> None:
    service, game = agora
    assert fold(service.commands.events(game)).cases == service.reads.load(game).cases
    # A game exported and imported again keeps its cases, precedents included.
    service.commands.import_game(list(service.commands.export_game(game)), game_id="again")
    assert service.reads.load("again").cases == service.reads.load(game).cases
    assert service.reads.precedents("again", "101") == service.reads.precedents(game, "101")
    # The Rulekeepor records an amendment of Rule 101: its precedents now read an older
    # text, and the export still prints every annotation under it.
    outcome = service.commands.perform(game, "Janet", "record_change", {
        "changes": [{"amend": {"rule": "101", "text": "Agora is a game."}}],
        "mechanism": "a test"})
    assert outcome.accepted, outcome.message
    assert all(p["changed_since"] for p in service.reads.precedents(game, "101")
               if p["revision"] is not None)
    exported = export_text(service.reads.load(game))
    block = flr_text.split("Annotations:\n", 1)[1].split("\n\n", 1)[0]  # Rule 101's
    assert block.startswith("CFJ 24: Players must obey the Rules")
    assert "Rule 101/18 (Power=4)" in exported and block in exported

"""The service's reads of cases in the reader's words (service/cases.py) for a case that
came into the game whole, as an imported record's precedent does: no events of its own, no
judge, a holding without a judgment word."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from casegame import START, court_rules

from scriba.rulesets import load_ruleset
from scriba.service import errors, open_service

IMPORTED = {
    "number": 825, "question": "A hat is not a rule.", "parties": [],
    "concerns": [{"kind": "rule", "id": "212"}], "opened_by": None,
    "opened": "1995-11-07T00:00:00Z", "status": "closed", "judge": None,
    "judgment": {"judgment": None, "reasons": None, "by": None, "at": "1995-11-07T00:00:00Z",
                 "rules": [{"rule": "212", "revision": 0}]},
    "earlier": [], "data": {"label": "825-826"},
    "steps": [{"step": "opened", "by": None, "at": "1995-11-07T00:00:00Z", "note": "imported"},
              {"step": "closed", "by": None, "at": "1995-11-07T00:00:00Z"}]}


def test_an_imported_case_is_told_from_its_steps_in_the_readers_words() -> None:
    service = open_service("sqlite://")
    try:
        ruleset = load_ruleset("clockwork", root=Path(__file__).parent / "fixtures")
        game = service.commands.create_game(ruleset, game_id="imp", start=START,
                                            players=["Anna", "Bruno"], rules=court_rules(),
                                            cases=[IMPORTED]).game_id
        [line] = service.cases.docket(game, "de")
        assert line["label"] == "825-826" and line["status_word"] == "abgeschlossen, endgültig"
        assert line["concerns"] == [{"kind": "rule", "id": "212",
                                     "text": "Regel 212 – Judgment"}]
        case = service.cases.case(game, "825", "it")
        assert [s["text"] for s in case["steps"]] == ["Aperto: dagli atti importati.",
                                                      "Chiuso."]
        assert case["judgment"]["word"] == "" and case["judgment"]["rules"][0]["revision"] == 0
        assert service.cases.actions(game, 825, "Anna") == []  # a closed case: nothing to do
        with pytest.raises(errors.NotFound) as refused:
            service.cases.case(game, 7)
        assert errors.told(refused.value, "de") == "In dieser Partie gibt es keinen Fall 7."
    finally:
        service.close()


def test_the_static_site_holds_the_docket_each_case_and_the_corrections(tmp_path: Path
                                                                        ) -> None:
    from casegame import court_game

    from scriba.web.publish import publish

    service = open_service("sqlite://")
    try:
        game = court_game(service, "pub")
        service.commands.perform(game, "Bruno", "cfj", {"question": "Un cappello?",
                                                        "about": "212"})
        service.commands.perform(game, "Anna", "judge", {"case": 1, "judgment": "vero",
                                                         "rules": ["212"]})
        publish(service, game, tmp_path, "it")
    finally:
        service.close()
    folder = tmp_path / "games" / "pub"
    case = (folder / "cases" / "1" / "index.html").read_text(encoding="utf-8")
    assert "VERO" in case and "Anna giudica il caso 1: VERO" in case
    assert "Caso 1" in (folder / "cases" / "index.html").read_text(encoding="utf-8")
    assert "Gli atti non sono mai stati corretti." in (
        folder / "corrections" / "index.html").read_text(encoding="utf-8")
    rule = (folder / "rules" / "212" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../cases/1/index.html"' in rule
    for page in folder.rglob("*.html"):  # every link leads to a file of the site
        for href in re.findall(r'(?:href|src)="([^"#]+)"', page.read_text(encoding="utf-8")):
            assert (page.parent / href).resolve().is_file(), (page, href)

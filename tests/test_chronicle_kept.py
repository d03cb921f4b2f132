"""The chronicle's pages and the period reports as the reads keep them (issue 18: a page
costs the page, not the game): told from the log's index and added to event by event,
they must read exactly as told anew from the whole log, at every step of a game."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriba.kernel.sealing import hidden
from scriba.service import open_service
from scriba.service.narrate import Narrator
from scriba.service.periods import PeriodReports, period_reports_of
from scriba.service.scenario import _run_step, load_scenario, run_scenario

RULESETS = Path(__file__).parents[1] / "src" / "scriba" / "rulesets"
# Periods, deadlines, things owned, a renumbered rule; Italian rules, three languages.
GAMES = ["decameronomic/scenarios/partita.yaml", "anderwelt/scenarios/spieler.yaml",
         "nomic3/scenarios/transmutation.yaml"]


def _told_anew(service, game: str, language: str) -> list[str]:
    """Every sentence of the log, each told by a narrator that heard all before it."""
    state = service.reads.load(game)
    narrator = Narrator(service.reads.words(game, language, state))
    return [narrator.tell(event) for event in service.reads.log(game)]


@pytest.mark.parametrize("path", GAMES)
def test_kept_reports_and_pages_read_as_told_anew_at_every_step(path: str) -> None:
    scenario = load_scenario(RULESETS / path)
    steps = scenario["steps"]
    service = open_service("sqlite://")
    try:
        game = run_scenario(service.commands, {**scenario, "steps": steps[:1]}).game_id
        for index, step in enumerate(steps[1:], 1):
            _run_step(service.commands, game, index, step, [], [])
            state = service.reads.load(game)
            log = service.reads.log(game)
            for language in ("it", "en"):
                words = service.reads.words(game, language, state)
                assert service.reads.period_reports(game, language) == \
                    period_reports_of(log, state, words), f"step {index}"
            if index % 5:
                continue
            # The newest page and an earlier one, told from the index, against the
            # sentences of a narrator that walked the whole log.
            sentences = {e["seq"]: t for e, t in zip(log, _told_anew(service, game, "de"),
                                                      strict=True)}
            middle = log[len(log) // 2]["seq"]
            for before in (2**62, middle):
                page = service.reads.chronicle(game, "de", before_seq=before, limit=20,
                                               officer=True)
                assert page and all(e["seq"] < before for e in page)
                assert [e["text"] for e in page] == [sentences[e["seq"]] for e in page]
        assert len(service.reads.period_reports(game, "it")) > 1  # periods were told
    finally:
        service.close()


def test_reports_added_to_in_pieces_are_the_reports_told_at_once() -> None:
    scenario = load_scenario(RULESETS / GAMES[0])
    service = open_service("sqlite://")
    try:
        game = run_scenario(service.commands, scenario).game_id
        state, log = service.reads.load(game), service.reads.log(game)
        words = service.reads.words(game, "it", state)
        whole = period_reports_of(log, state, words)
        for cut in range(0, len(log), 7):
            kept = PeriodReports(words, state)
            kept.add(log[:cut], hidden(log))
            kept.as_of(state)  # what a page saw then changes nothing kept
            kept.add(log[cut:], hidden(log))
            assert kept.as_of(state) == whole, cut
    finally:
        service.close()

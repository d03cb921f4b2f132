"""Agora's self-ratifying reports (Rule 2201): a report undoubted for two weeks becomes the
record through a correction the rule orders, as of the report's publication (issue 21 §4)."""

from __future__ import annotations

from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

SCENARIO = BUNDLED / "agora" / "scenarios" / "ratification.yaml"


def test_an_undoubted_report_is_ratified_by_a_correction_as_of_its_publication(
        service: Service) -> None:
    result = run_scenario(service.commands, load_scenario(SCENARIO))
    assert result.errors == []
    game = result.game_id
    reports = service.reads.load(game).vars["reports"]
    made = service.corrections.corrections(game)
    # Reports 1 and 3 ratified, each by one correction the rule ordered; report 2, found
    # in error, never was.
    assert [c.reason for c in made] == [
        f"Report {n} of the Assessor, undoubted for two weeks, is ratified (Rules 2201, 1551)."
        for n in (1, 3)]
    assert [c.correction["at"] for c in made] == [reports["1"]["published"],
                                                  reports["3"]["published"]]
    assert all(c.by is None and c.correction["kind"] == "set" for c in made)
    # What the first report said and nobody had recorded: G.'s strength became 7; the
    # third gave Kate 4. Told to the players in these words.
    assert made[0].sentences == ["voting strength of G.: was –, now 7."]
    assert made[1].sentences == ["voting strength of Kate: was –, now 4."]
    # The judgement on report 3's doubt survived the recompute that ratified it.
    case = service.reads.load(game).cases["2"]
    assert (case["status"], case["judgment"]["judgment"]) == ("judged", "FALSE")
    assert service.reads.replay(game).to_json() == service.reads.load(game).to_json()

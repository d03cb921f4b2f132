"""A proposal of an existing game tried over the next turns of play (issue 22): the four
planted proposals (tests/lab_planted.py), each submitted in a real game, are classified
through ``scriba simulate GAME --proposal N`` — the vote farm as a runaway of its
author's points, the endless turn as a period that no longer moves, the late abort as
rule-code aborts that begin after some turns, the harmless one as no difference at all.

Fixed seed and bots, one pair of runs of 12 turns each: the same every time."""

from __future__ import annotations

import json
from pathlib import Path

from lab_planted import AUTHOR, plant
from test_cli import scriba

from scriba.service import open_service
from scriba.service.lab.findings import GameFindings
from scriba.service.lab.proposal import ProposalReport, simulate_proposal

BOUNDS = ("--turns", "12", "--seed", "5", "--bots", "random,for")


def planted(tmp_path: Path, name: str) -> tuple[str, str, int]:
    """The database's URL, the game and the proposal's number."""
    url = f"sqlite:///{tmp_path / 'lab.db'}"
    service = open_service(url)
    try:
        game, number = plant(service, name)
    finally:
        service.close()
    return url, game, number


def differences(tmp_path: Path, name: str, told: bool = False) -> tuple[dict, str]:
    """The report as data, and (``told``: the same runs again) as the developer reads it."""
    url, game, number = planted(tmp_path, name)
    data = json.loads(scriba("simulate", game, "--proposal", str(number), *BOUNDS, "--json",
                             "--db", url).stdout)
    assert data["game"] == game and data["proposal"] == number and data["complete"]
    assert data["played"] == 24  # 12 turns with it, 12 without
    if not told:
        return data, ""
    return data, scriba("simulate", game, "--proposal", str(number), *BOUNDS,
                        "--db", url).stdout


def kinds(data: dict) -> list[str]:
    return [d["kind"] for d in data["differences"]]


def test_the_vote_farm_is_a_runaway_of_its_authors_points(tmp_path):
    data, told = differences(tmp_path, "farm", told=True)
    assert kinds(data) == ["runaway"]
    (runaway,) = data["differences"]
    assert (runaway["who"], runaway["variable"]) == (AUTHOR, "points")
    assert runaway["end"] > 1.5 * runaway["baseline"] and runaway["game"] == 1
    assert f"Runaway: {AUTHOR}'s points went from" in told
    assert "without the proposal" in told and "{" not in told


def test_the_endless_turn_is_a_period_that_stops_moving(tmp_path):
    data, _ = differences(tmp_path, "endless")
    assert kinds(data) == ["period_stuck"]
    (stuck,) = data["differences"]
    assert stuck["variable"] == "turn" and stuck["turns"] == 12
    assert stuck["baseline_moves"] >= 3  # without it, the turn went round


def test_the_late_abort_is_found_with_the_turn_it_begins(tmp_path):
    data, _ = differences(tmp_path, "late_abort")
    assert kinds(data) == ["abort"]
    (abort,) = data["differences"]
    assert abort["hook"] == "on_vote_cast" and abort["count"] >= 2
    assert abort["first_turn"] > 1  # not from the start: after some turns of play
    assert "troppi turni" in abort["reason"]


def test_the_harmless_proposal_gives_no_alarm(tmp_path):
    data, _ = differences(tmp_path, "harmless")
    assert data["differences"] == []
    for run in data["with_proposal"] + data["without_proposal"]:
        assert run["replay_matches"] is True and run["internal_errors"] == []


def test_a_proposal_report_is_plain_data_and_the_time_bound_cuts_it_short(tmp_path):
    url, game, number = planted(tmp_path, "harmless")
    service = open_service(url)
    try:
        events = service.reads.log(game)
    finally:
        service.close()
    seen: list[tuple[int, int]] = []
    report = simulate_proposal(open_service, events, number, games=2, turns=3,
                               bots=["self", "for"], seed=1, seconds=0.0,
                               progress=lambda done, total: seen.append((done, total)))
    assert report.complete is False and report.with_proposal == [] and report.played == 0
    assert seen[0] == (0, 12) and report.at_seq == events[-1]["seq"]
    report = simulate_proposal(open_service, events, number, games=1, turns=2,
                               bots=["self", "for"], seed=1, progress=lambda d, t:
                               seen.append((d, t)))
    assert report.complete and report.played == 4 and seen[-1] == (4, 4)
    assert report.with_proposal[0].bots == ["self", "for", "self"]
    again = ProposalReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report and isinstance(again.with_proposal[0], GameFindings)


def test_the_command_refuses_what_it_cannot_simulate(tmp_path):
    url, game, number = planted(tmp_path, "harmless")
    for args, says in [
            ((game, "--proposal", "999"), "no open proposal 999"),
            (("nowhere", "--proposal", str(number)), "no ruleset or game nowhere"),
            (("equinomic", "--proposal", "1"), "give the game's id")]:
        refused = scriba("simulate", *args, "--turns", "1", "--db", url, check=False)
        assert refused.returncode != 0 and says in refused.stdout + refused.stderr
        assert "Traceback" not in refused.stderr


def test_the_game_plays_on_from_its_state_without_a_proposal(tmp_path):
    url, game, _ = planted(tmp_path, "harmless")
    data = json.loads(scriba("simulate", game, "--turns", "2", "--bots", "self",
                             "--json", "--db", url).stdout)
    (run,) = data["games"]
    assert run["bots"] == ["self"] * 3 and run["turns"] == 2
    assert run["replay_matches"] is True and run["actions"] > 0


def test_the_command_tells_a_proposal_without_differences_in_a_sentence(tmp_path):
    url, game, number = planted(tmp_path, "harmless")
    told = scriba("simulate", game, "--proposal", str(number), "--turns", "1", "--seed", "5",
                  "--db", url).stdout
    assert f"Proposal {number} of {game}: 1 games of 1 turns" in told
    assert "No difference found." in told and "{" not in told and "None" not in told

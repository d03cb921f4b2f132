"""The scriba command, run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scriba.rulesets import BUNDLED

SCRIBA = [sys.executable, "-m", "scriba.cli.main"]


def scriba(*args: str, db: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    if db is not None:
        env["SCRIBA_DB"] = f"sqlite:///{db}"
    result = subprocess.run([*SCRIBA, *args], capture_output=True, text=True, env=env,
                            timeout=300)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_lists_bundled_rulesets():
    out = scriba("rulesets").stdout
    assert "equinomic" in out


def test_a_game_played_from_the_command_line(tmp_path):
    db = tmp_path / "scriba.db"
    scriba("new", "equinomic", "--game", "g1", "-p", "Carla", "-p", "Anna", "-p", "Bruno",
           "--start", "2026-03-01T10:00:00Z", db=db)
    assert "g1" in scriba("games", db=db).stdout
    actions = scriba("actions", "g1", db=db).stdout
    assert "propose" in actions and "vote" in actions
    changes = tmp_path / "changes.yaml"
    changes.write_text("- enact: {title: Saluti, text: Ogni giocatore saluta.}\n")
    scriba("act", "g1", "Anna", "propose", "label=p1", "--changes", str(changes), db=db)
    refused = scriba("act", "g1", "Anna", "vote", "proposal=p1", "choice=favorevole", db=db,
                     check=False)
    assert refused.returncode == 1 and "non l'autore" in refused.stdout
    scriba("act", "g1", "Bruno", "vote", "proposal=p1", "choice=favorevole", db=db)
    scriba("act", "g1", "Carla", "vote", "proposal=p1", "choice=favorevole", db=db)
    scriba("advance", "g1", "--by", "2d", db=db)
    state = json.loads(scriba("state", "g1", "--json", db=db).stdout)
    assert state["players"]["Anna"]["points"] == 10
    assert state["time"] == "2026-03-03T10:00:00Z"
    assert "201" in scriba("rules", "g1", db=db).stdout
    past = scriba("rules", "g1", "--seq", "3", db=db).stdout
    assert "201" not in past and "112" in past
    log = scriba("log", "g1", db=db).stdout
    assert "command_refused" in log and "rule_changed" in log
    exported = tmp_path / "g1.jsonl"
    scriba("export", "game", "g1", "--out", str(exported), db=db)
    other = tmp_path / "other.db"
    scriba("import", "game", str(exported), "--game", "g2", db=other)
    copy = json.loads(scriba("state", "g2", "--json", db=other).stdout)
    assert copy["players"] == state["players"] and copy["rules"] == state["rules"]


def test_scenario_run_prints_json_and_exits_by_outcome(tmp_path):
    good = BUNDLED / "equinomic" / "scenarios" / "basic.yaml"
    result = scriba("scenario", "run", str(good), "--json")
    summary = json.loads(result.stdout)
    assert set(summary) >= {"time", "players", "offices", "rules", "proposals", "winner",
                            "refusals"}
    assert all("step" in r and "message" in r for r in summary["refusals"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("ruleset: equinomic\nstart: 2026-03-01T10:00:00Z\nplayers: [Anna, Bruno]\n"
                   "steps:\n  - {by: Bruno, do: propose, label: x, changes: "
                   "[{enact: {title: T, text: t}}]}\n"
                   "  - {expect_refusal: 'nope', by: Anna, do: propose, label: y, changes: "
                   "[{enact: {title: T, text: t}}]}\n")
    failed = scriba("scenario", "run", str(bad), "--json", check=False)
    assert failed.returncode == 1
    summary = json.loads(failed.stdout)
    assert summary["refusals"][0]["step"] == 0
    assert "step 0: refused" in failed.stderr and "step 1: expected a refusal" in failed.stderr


@pytest.mark.parametrize("text", ["ruleset: equinomic\nsteps: [\n", "ruleset: nosuch\n"])
def test_scenario_errors_are_reported(tmp_path, text):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    result = scriba("scenario", "run", str(path), "--json", check=False)
    assert result.returncode != 0
    assert result.stdout.strip() and ("error" in result.stdout or "Error" in result.stderr)

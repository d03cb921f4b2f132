"""The scriba command, run as a user runs it."""

from __future__ import annotations

import json
import os
import re
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
    # Each ruleset's name and language, not the seed files they were made from.
    assert "EquiNomic" in out and "Italian" in out and "German" in out
    assert ".txt" not in out and "_1e586876702b88c6" not in out


# What a developer writes, never a player: Python or JSON values, braces, ISO times.
DEVELOPER = re.compile(r"\b(None|True|False|null|true|false)\b|[{}]|\[\]|\d{4}-\d\d-\d\dT\d")


def test_state_scenario_and_demo_print_sentences_and_tables(tmp_path):
    db = tmp_path / "scriba.db"
    suber = BUNDLED / "suber" / "scenarios" / "amended_203.yaml"
    run_out = scriba("scenario", "run", str(suber)).stdout
    assert "No winner yet." in run_out and "winner: None" not in run_out
    assert "Anna: points 4, status active" in run_out
    demo = scriba("demo", db=db).stdout
    assert "Anna won." in demo and "Proposal 1 is adopted" in demo
    state = scriba("state", "demo-1", db=db).stdout
    assert "Anna won." in state and "2026-03-03 10:00 UTC" in state
    assert "votes: Bruno favorevole, Carla favorevole." in state  # the ruleset's vote words
    for out in (run_out, demo, state):
        assert not DEVELOPER.search(out), DEVELOPER.search(out)


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


# --- the CLI speaks to people (issue 8) ---------------------------------------------------

def run(*args: str | bytes, db: Path, columns: int = 200) -> subprocess.CompletedProcess:
    """Run scriba with arguments as a shell would pass them (bytes allowed: a byte that is
    not UTF-8 in argv)."""
    env = {**os.environ, "COLUMNS": str(columns), "SCRIBA_DB": f"sqlite:///{db}"}
    argv = [os.fsencode(a) if isinstance(a, str) else a for a in [*SCRIBA, *args]]
    result = subprocess.run(argv, capture_output=True, env=env, timeout=300)
    result.stdout = result.stdout.decode("utf-8", "replace")
    result.stderr = result.stderr.decode("utf-8", "replace")
    return result


def one_clear_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def game_db(tmp_path) -> Path:
    db = tmp_path / "scriba.db"
    scriba("new", "equinomic", "--game", "g1", "-p", "Carla", "-p", "Anna", "-p", "Bruno",
           "--start", "2026-03-01T10:00:00Z", db=db)
    return db


def test_every_mistake_is_one_clear_line(game_db, tmp_path):
    db = game_db
    assert "yesterday" in one_clear_line(run("rules", "g1", "--at", "yesterday", db=db))
    assert "2026-03-01" in one_clear_line(run("rules", "g1", "--at", "2020-01-01", db=db))
    assert "3x" in one_clear_line(run("advance", "g1", "--by", "3x", db=db))
    assert "g1" in one_clear_line(run("new", "equinomic", "--game", "g1", db=db))
    assert "nogame" in one_clear_line(run("state", "nogame", db=db))
    assert "nogame" in one_clear_line(run("log", "nogame", db=db))
    assert "nosuchquery" in one_clear_line(run("query", "g1", "nosuchquery", db=db))
    missing = tmp_path / "missing.yaml"
    assert "missing.yaml" in one_clear_line(run("act", "g1", "Anna", "propose",
                                                "--changes", str(missing), db=db))
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("- enact: {title: Città, text: Perché}\n".encode("latin-1"))
    assert "UTF-8" in one_clear_line(run("act", "g1", "Anna", "propose",
                                         "--changes", str(latin1), db=db))
    broken = tmp_path / "broken.yaml"
    broken.write_text("- enact: {title: [\n")
    assert "YAML" in one_clear_line(run("act", "g1", "Anna", "propose",
                                        "--changes", str(broken), db=db))
    assert "UTF-8" in one_clear_line(run("player", "add", "g1", b"Ren\xe9", db=db))
    assert "somiglia" in one_clear_line(run("player", "add", "g1", "\u0410nna", db=db))
    assert "vuoto" in one_clear_line(run("player", "add", "g1", "\u200b", db=db))
    assert "missing.yaml" in one_clear_line(run("import", "game", str(missing), db=db))
    state = json.loads(scriba("state", "g1", "--json", db=db).stdout)
    assert set(state["players"]) == {"Carla", "Anna", "Bruno"}


def test_a_megabyte_title_is_refused_at_once(game_db, tmp_path):
    changes = tmp_path / "big.yaml"
    changes.write_text(json.dumps([{"enact": {"title": "t" * 1_000_000, "text": "x"}}]))
    line = one_clear_line(run("act", "g1", "Anna", "propose", "--changes", str(changes),
                              db=game_db))
    assert "200" in line
    assert scriba("rules", "g1", db=game_db).stdout.count("\n") > 5


def test_player_text_is_shown_never_interpreted(game_db):
    db = game_db
    for name in ("[/red]", "[white]Dora[/]"):
        assert run("player", "add", "g1", name, db=db).returncode == 0
    state = scriba("state", "g1", db=db).stdout
    assert "[/red]" in state and "[white]Dora[/]" in state
    log = scriba("log", "g1", db=db).stdout
    assert "[/red]" in log and "[white]Dora[/]" in log
    assert "[/red]" in scriba("actions", "g1", "[/red]", db=db).stdout


def test_control_characters_are_made_visible():
    import io

    from rich.console import Console

    from scriba.cli.output import safe, safe_block

    def shown(markup: str) -> str:
        console = Console(file=io.StringIO(), width=1000, color_system=None)
        console.print(markup)
        return console.file.getvalue().rstrip("\n")

    assert shown(safe("\x1b[31mred")) == "\\x1b[31mred"
    assert shown(safe("a\u200bb\u202ec")) == "a\\u200bb\\u202ec"
    assert shown(safe("[/red]")) == "[/red]"
    assert shown(safe("[white]Anna[/]")) == "[white]Anna[/]"
    assert shown(safe_block("one\ntwo\x07 [b]")) == "one\ntwo\\x07 [b]"
    assert len(safe("t" * 1_000_000)) < 300


def test_arguments_are_text_and_act_answers_in_sentences(game_db, tmp_path):
    db = game_db
    changes = tmp_path / "changes.yaml"
    changes.write_text("- enact: {title: Saluti, text: Ogni giocatore saluta.}\n")
    answer = run("act", "g1", "Anna", "propose", "label=yes", "title=Rule 301: does it bind?",
                 "--changes", str(changes), db=db)
    assert answer.returncode == 0, answer.stderr
    assert "proposal_submitted" not in answer.stdout and "{" not in answer.stdout
    assert "Anna" in answer.stdout
    exported = scriba("export", "game", "g1", db=db).stdout.splitlines()
    submitted = [e for e in map(json.loads, exported) if e["type"] == "proposal_submitted"][0]
    assert submitted["payload"]["label"] == "yes"
    assert submitted["payload"]["title"] == "Rule 301: does it bind?"
    vote = run("act", "g1", "Bruno", "vote", "proposal=yes", "choice=favorevole", db=db)
    assert vote.returncode == 0 and vote.stdout.strip() and "vote_cast" not in vote.stdout
    refused = run("act", "g1", "Bruno", "vote", "proposal=yes", "choice=maybe", db=db)
    assert refused.returncode == 1 and "maybe" in refused.stdout


def test_actions_show_parameters_and_vote_words(game_db):
    out = scriba("actions", "g1", db=game_db).stdout
    assert "changes" in out and "label" in out
    assert "favorevole = for" in out


def test_a_players_actions_are_what_they_may_do_now_the_owed_move_first(tmp_path):
    db = tmp_path / "scriba.db"
    scriba("new", "suber", "--game", "s", "-p", "Anna", "-p", "Bruno", db=db)
    anna = scriba("actions", "s", "Anna", db=db).stdout
    first = anna.split("\n")[1]
    assert first.startswith("propose") and "you must do this now" in anna
    assert "rule 202" in anna and "vote" not in anna  # nothing is open
    bruno = scriba("actions", "s", "Bruno", db=db).stdout
    assert "propose" not in bruno and "roll" not in bruno  # not his turn
    assert "None" not in anna + bruno and "{" not in anna + bruno


def test_ids_are_never_cut_at_80_columns(tmp_path):
    db = tmp_path / "scriba.db"
    long_id = "decameronomic-rimaneggiato-" + "x" * 36
    scriba("new", "decameronomic-rimaneggiato", "--game", long_id, "-p", "Anna", "-p", "Bruno",
           db=db)
    games = run("games", db=db, columns=80).stdout
    assert long_id in games
    assert "decameronomic-rimaneggiato" in run("rulesets", db=db, columns=80).stdout


def test_player_add_with_an_email_seats_an_account(game_db):
    added = run("player", "add", "g1", "Dora", "--email", "dora@example.org", db=game_db)
    assert added.returncode == 0, added.stderr
    assert "dora@example.org" in added.stdout


def test_an_operator_backs_up_and_restores_the_games(tmp_path):
    db = tmp_path / "scriba.db"
    scriba("new", "suber", "--game", "kept", db=db)
    copy = tmp_path / "backup.db"
    assert "backup written" in scriba("backup", str(copy), db=db).stdout
    scriba("new", "suber", "--game", "after", db=db)
    again = scriba("backup", str(copy), db=db, check=False)
    assert again.returncode == 1 and "exists already" in again.stderr  # never overwritten
    scriba("restore", str(copy), db=db)
    games = scriba("games", db=db).stdout
    assert "kept" in games and "after" not in games
    wrong = tmp_path / "notes.txt"
    wrong.write_text("not a database")
    refused = scriba("restore", str(wrong), db=db, check=False)
    assert refused.returncode == 1 and "not a SQLite database" in refused.stderr
    assert "kept" in scriba("games", db=db).stdout


def test_a_no_break_space_is_a_space_not_an_escape():
    from scriba.cli.output import visible

    assert visible("10\xa0punti") == "10\xa0punti"  # never "10\\xa0punti"
    assert visible("a\x1bb") == "a\\x1bb"  # a terminal's control character stays harmless

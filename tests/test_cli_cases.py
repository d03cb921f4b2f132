"""``scriba cases GAME [N]``, run as a user runs it: the docket and one case told in
sentences in the game's language or ``--lang``'s — no JSON, no internal names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from casegame import court_game

from scriba.service import open_service

SCRIBA = [sys.executable, "-m", "scriba.cli.main"]
DEVELOPER = re.compile(r"\b(None|True|False|null)\b|[{}]|\[\]|\d{4}-\d\d-\d\dT\d|\bseq\b")


def scriba(*args: str, db: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "SCRIBA_DB": f"sqlite:///{db}"}
    return subprocess.run([*SCRIBA, *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_cases_lists_the_docket_and_tells_one_case(tmp_path: Path) -> None:
    db = tmp_path / "scriba.db"
    service = open_service(f"sqlite:///{db}")
    game = court_game(service, "tribunale")
    empty = scriba("cases", game, "--lang", "it", db=db)
    service.commands.perform(game, "Bruno", "cfj", {"question": "Un cappello è una regola?",
                                                    "about": "212"})
    service.commands.perform(game, "Anna", "judge", {"case": 1, "judgment": "falso",
                                                     "reasons": "No [davvero].",
                                                     "rules": ["212"]})
    service.commands.perform(game, "Carla", "cfj", {"question": "Seconda?"})
    service.close()
    assert empty.returncode == 0 and empty.stdout.strip() == "Ancora nessun caso."

    docket = scriba("cases", game, "--lang", "it", db=db)
    assert docket.returncode == 0, docket.stderr
    lines = docket.stdout.strip().splitlines()
    assert lines == [
        "Caso 2 · in attesa di giudizio · giudice: Bruno — Seconda?",
        "Caso 1 · giudicato · giudice: Anna · giudizio: FALSO — Un cappello è una regola?"]

    one = scriba("cases", game, "1", "--lang", "de", db=db)
    assert one.returncode == 0, one.stderr
    told = one.stdout
    assert told.startswith("Fall 1 · entschieden · Richter: Anna · Urteil: FALSO")
    assert "Betrifft: Regel 212 – Judgment" in told and "No [davvero]." in told
    assert "Anna entscheidet den Fall 1: FALSO" in told
    assert not DEVELOPER.search(told), told

    missing = scriba("cases", game, "7", db=db)
    assert missing.returncode == 1
    assert "There is no case 7 in this game." in missing.stdout + missing.stderr

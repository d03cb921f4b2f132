"""Test this proposal, the service's part (:mod:`scriba.service.proposaltests`) and its
sentences (:mod:`scriba.service.lab.tell`): a planted proposal tested from a real game's
state in a real database, the job beside the caller (a thread and the lab's worker
processes), one test per proposal and game state, a test whose process died seen as
failed after its bound and started again, and every kind of finding told in Italian,
German and English with the game's own words (never a variable's internal name)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from lab_planted import plant

from scriba.service import Service, open_service
from scriba.service.errors import ServiceError
from scriba.service.lab import tell
from scriba.service.proposaltests import ProposalTests
from scriba.store.models import ProposalTestRow

# Small bounds, set as a host sets them (the settings): one run of each kind, few turns.
SMALL = {"SCRIBA_LAB_GAMES": "1", "SCRIBA_LAB_TURNS": "6", "SCRIBA_LAB_SECONDS": "240",
         "SCRIBA_LAB_WORKERS": "2"}
DEVELOPER = re.compile(r"[{}\[\]]|\bNone\b|\bTrue\b|\bFalse\b|\bpoints\b|_")


@pytest.fixture
def service(tmp_path, monkeypatch) -> Iterator[Service]:
    for name, value in SMALL.items():
        monkeypatch.setenv(name, value)
    opened = open_service(f"sqlite:///{tmp_path / 'lab.db'}")
    yield opened
    opened.close()


def _finished(service: Service, game: str, number: int, timeout: float = 240) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        test = service.proposal_tests.get(game, number)
        if test is not None and test.status != "running":
            return test
        time.sleep(0.1)
    raise AssertionError("the test did not finish within its bound")


def test_a_proposal_is_tested_beside_the_caller_once_per_game_state(service: Service) -> None:
    game, number = plant(service, "harmless")
    before = list(service.commands.export_game(game))
    started = time.monotonic()
    test = service.proposal_tests.start(game, number, by="MI1")
    assert time.monotonic() - started < 10  # the caller is answered; the runs go on beside
    assert test.status == "running" and test.total_turns == 2 * 6
    assert test.bounds["games"] == 1 and test.bounds["turns"] == 6
    assert service.proposal_tests.told(test, "it")[0].startswith("La prova è in corso:")
    again = service.proposal_tests.start(game, number, by="MI2")
    assert (again.started, again.asked_by) == (test.started, "MI1")  # the same test
    done = _finished(service, game, number)
    assert done.status == "done" and done.report is not None
    assert done.report["proposal"] == number and done.report["games"] == 1
    told = service.proposal_tests.told(done, "en")
    assert told[0] == "Tested in one game of 6 turns from the game as it stands now."
    assert list(service.commands.export_game(game)) == before  # the game is untouched
    # Asked again with the game as it stands: the finished test, not a new one.
    assert service.proposal_tests.start(game, number, by="MI2").started == done.started
    with service.commands.store.session() as session:
        assert session.query(ProposalTestRow).count() == 1


def test_an_unknown_proposal_is_refused_in_the_games_language(
        service: Service) -> None:
    game, number = plant(service, "harmless")
    with pytest.raises(ServiceError) as refused:
        service.proposal_tests.start(game, number + 50, by="MI1")
    assert str(refused.value) == f"Non esiste la proposta {number + 50}."  # equinomic's
    assert service.proposal_tests.get(game, number) is None


def test_a_test_whose_process_died_is_failed_after_its_bound_and_may_start_again(
        service: Service, tmp_path) -> None:
    game, number = plant(service, "harmless")
    seq = service.reads.load(game).seq
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    with service.commands.store.session.begin() as session:  # as a killed server left it
        session.add(ProposalTestRow(game_id=game, proposal=number, at_seq=seq,
                                    status="running", done_turns=3, total_turns=12,
                                    started_at=long_ago, bounds={"seconds": 240},
                                    asked_by="MI1"))
    stale = service.proposal_tests.get(game, number)
    assert stale.status == "failed"
    assert service.proposal_tests.told(stale, "de") == [
        "Der Test konnte nicht abgeschlossen werden; er kann neu gestartet werden."]
    restarted = service.proposal_tests.start(game, number, by="MI2")
    assert restarted.status == "running" and restarted.asked_by == "MI2"
    assert _finished(service, game, number).status == "done"


# --- the sentences -------------------------------------------------------------------------
EVERY_KIND = [
    {"kind": "runaway", "who": "MI1", "variable": "points", "start": 3, "end": 41,
     "baseline": 14, "game": 1},
    {"kind": "runaway", "who": "MI1", "variable": "points", "start": 2, "end": 30,
     "baseline": 12, "game": 2},
    {"kind": "runaway", "who": "game", "variable": "points", "start": 1, "end": 90,
     "baseline": None, "game": 1},
    {"kind": "stall", "turn": 7, "game": 1},
    {"kind": "period_stuck", "variable": "round", "value": 2, "since_turn": 3, "turns": 9,
     "baseline_moves": 4, "game": 1},
    {"kind": "ended", "turn": 5, "winners": ["MI2"], "game": 1},
    {"kind": "abort", "rule": "313", "hook": "on_vote_cast", "count": 4, "first_turn": 10,
     "reason": "fail() called: troppi turni", "game": 1},
    {"kind": "budget", "rule": "313", "hook": "check", "count": 2, "first_turn": 3, "game": 1},
    {"kind": "refused", "turn": 4, "player": "MI3", "action": "skip_turn",
     "why": "Il turno non finisce mai.", "game": 1},
    {"kind": "invariant", "statement": "Il tesoro non è mai negativo", "turn": 6,
     "rule": "101", "game": 1},
    {"kind": "internal_error", "text": "KeyError at engine.py line 3: 'x'", "game": 1},
    {"kind": "replay_differs", "game": 1},
]
REPORT = {"games": 4, "turns": 40, "complete": True, "played": 320}


@pytest.fixture(scope="module")
def words_game() -> Iterator[tuple[Service, str]]:
    """A game of a ruleset that labels its score (points: "punti"), its period (round:
    "giro") and its actions in Italian and English only."""
    memory = open_service("sqlite://")
    memory.commands.create_game("nomic3", game_id="words", seed=3, start="2026-03-02T09:00:00Z")
    yield memory, "words"
    memory.close()


@pytest.mark.parametrize("language", ["en", "it", "de"])
def test_every_finding_is_told_in_the_readers_language_with_the_games_words(
        words_game: tuple[Service, str], language: str) -> None:
    memory, game = words_game
    words = memory.reads.words(game, language)
    lines = tell.told(REPORT, EVERY_KIND, words, language)
    assert len(lines) == 1 + len(EVERY_KIND) - 1  # the head; the two runaways of MI1 are one
    for line in lines:
        assert not DEVELOPER.search(line), line  # no braces, Python values, internal names
    text = "\n".join(lines)
    # the ruleset's label of points, and its round named by its title, as its reports do
    assert "punti" in text and "Giro 2" in text
    assert "KeyError" not in text and "engine.py" not in text
    first = {"en": "Tested in 4 games of 40 turns from the game as it stands now.",
             "it": "Provata in 4 partite di 40 turni a partire dalla partita com'è ora.",
             "de": "Getestet in 4 Partien zu 40 Durchgängen, ausgehend von der Partie, wie "
                   "sie jetzt steht."}[language]
    assert lines[0] == first
    farm = {"en": "With the proposal, MI1's punti grew from 3 to 41 (without it, 14). This "
                  "happened in 2 of the 4 games.",
            "it": "Con la proposta, «punti» di MI1: da 3 a 41 (senza la proposta: 14). È "
                  "successo in 2 delle 4 partite.",
            "de": "Mit dem Vorschlag: „punti“ von MI1 von 3 auf 41 (ohne ihn: 14). Das "
                  "geschah in 2 der 4 Partien."}[language]
    assert lines[1] == farm
    label = {"en": "Skip your turn", "it": "Salta il turno", "de": "Salta il turno"}[language]
    assert f"“{label}”" in text or f"«{label}»" in text or f"„{label}“" in text


def test_no_finding_is_no_alarm_and_a_cut_run_says_so(
        words_game: tuple[Service, str]) -> None:
    memory, game = words_game
    lines = tell.told({**REPORT, "complete": False, "played": 100}, [],
                      memory.reads.words(game, "en"), "en")
    assert lines == ["Tested in 4 games of 40 turns from the game as it stands now.",
                     "The time ran out: 100 of the 320 turns were played.",
                     "No problem found: the games went on as they do without it."]
    assert tell.bounds(4, 40, 120, "en") == "4 games of 40 turns, within 2 minutes."
    assert tell.bounds(1, 10, 30, "it") == "Una partita di 10 turni, entro 30 secondi."


def test_the_bounds_are_settings_kept_within_limits() -> None:
    memory = open_service("sqlite://")
    try:
        parts = (memory.commands.store, memory.commands, memory.reads, memory.outbox,
                 open_service)
        default = ProposalTests(*parts, settings={})
        assert (default.bounds.games, default.bounds.turns, default.bounds.seconds) == \
            (4, 40, 120.0)
        assert default.bounds.workers <= 2
        hostile = ProposalTests(*parts, settings={
            "SCRIBA_LAB_GAMES": "10000", "SCRIBA_LAB_TURNS": "-3", "SCRIBA_LAB_SECONDS": "x",
            "SCRIBA_LAB_WORKERS": "64"})
        assert hostile.bounds.games == 16 and hostile.bounds.turns == 40
        assert hostile.bounds.seconds == 120.0 and hostile.bounds.workers <= 2
    finally:
        memory.close()

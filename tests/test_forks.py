"""Forks (issue 22, item 1): a new game with another game's history up to a point, marked
as its fork, playable on its own — votes, deadlines, corrections — while the original's
export stays byte-identical; refusals in the game's language; ``scriba fork`` as a user
runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriba.kernel.events import fold
from scriba.service import Service, open_service
from scriba.service.errors import GameExists, InvalidInput, UnknownGame

START = "2026-03-02T09:00:00Z"  # Giornata 1 starts; it ends two weeks later
PROPOSED = "2026-03-03T09:00:00Z"
SCRIBA = [sys.executable, "-m", "scriba.cli.main"]
DEVELOPER = re.compile(r"\b(None|True|False|null)\b|[{}]|\[\]|\d{4}-\d\d-\d\dT\d|\bseq\b")


@pytest.fixture
def svc() -> Iterator[Service]:
    service = open_service("sqlite://")
    yield service
    service.close()


def decameronomic(svc: Service, game: str = "deca") -> int:
    """Four players; Bruno proposes p1 on 3.3 (the last event before any vote), then Carla
    and Dario vote on it on 4.3. Returns the seq of Bruno's proposal's last event."""
    svc.commands.create_game("decameronomic", game_id=game, players=["Anna", "Bruno", "Carla",
                                                                     "Dario"],
                             offices={"King": "Anna", "Scriba": "Bruno"}, start=START, seed=1)
    proposed = svc.commands.perform(game, "Bruno", "propose", {"label": "p1", "changes": [
        {"enact": {"title": "Saluti", "text": "Ogni Giocatore saluta il Re."}}]}, at=PROPOSED)
    assert proposed.accepted
    for voter, choice in (("Carla", "favorevole"), ("Dario", "contrario")):
        assert svc.commands.perform(game, voter, "vote", {"proposal": "p1", "choice": choice},
                                    at="2026-03-04T09:00:00Z").accepted
    return proposed.events[-1]["seq"]


def _export(svc: Service, game: str) -> bytes:
    return "\n".join(svc.commands.export_game(game)).encode()


def _votes(svc: Service, game: str) -> dict[str, str]:
    return {voter: vote["choice"] for voter, vote in
            svc.commands.load(game).proposals["1"]["votes"].items()}


def test_a_fork_has_the_history_up_to_the_point_and_plays_apart(svc: Service) -> None:
    point = decameronomic(svc)
    before = _export(svc, "deca")
    origin_votes = _votes(svc, "deca")
    assert set(origin_votes) >= {"Carla", "Dario"}

    fork = svc.forks.fork("deca", seq=point, new_id="bivio")
    assert fork.game_id == "bivio" and fork.name == "deca (diramazione)"
    assert fork.seq == point and set(fork.players) == {"Anna", "Bruno", "Carla", "Dario"}
    assert svc.forks.origin("bivio") == {"game": "deca", "seq": point}
    assert svc.forks.origin("deca") is None
    # the same events, numbered as they were, but for the first's id, name and mark
    copied, original = svc.commands.events("bivio"), svc.commands.events("deca", upto=point)
    assert copied[1:] == original[1:]
    assert {k: v for k, v in copied[0]["payload"].items()
            if k not in ("game_id", "name", "forked_from")} == \
        {k: v for k, v in original[0]["payload"].items() if k not in ("game_id", "name")}

    # a point inside a decision takes the whole decision: Bruno's proposal and the
    # reactions to it (its first event is the proposal)
    first = next(e["seq"] for e in svc.commands.events("deca") if e["type"] ==
                 "proposal_submitted")
    assert first < point
    assert svc.forks.fork("deca", seq=first, new_id="intera").seq == point

    # a vote in the fork changes the fork, not the origin
    assert "Carla" not in _votes(svc, "bivio")
    assert svc.commands.perform("bivio", "Carla", "vote", {"proposal": "p1",
                                                          "choice": "contrario"}).accepted
    assert _votes(svc, "bivio")["Carla"] == "against"
    assert _votes(svc, "deca") == origin_votes
    # its deadlines fire in the fork alone: Giornata 2 begins there
    svc.commands.advance("bivio", to="2026-03-17T09:00:00Z")
    assert svc.commands.load("bivio").vars["day"] == 2
    assert svc.commands.load("deca").vars["day"] == 1
    # and a correction is the fork's own
    vote_seq = next(e["seq"] for e in svc.commands.events("bivio", after=point)
                    if e["type"] == "vote_cast")
    svc.corrections.confirm("bivio", {"kind": "annul", "event": vote_seq}, None,
                            svc.commands.load("bivio").seq, reason="Prova.")
    assert "Carla" not in _votes(svc, "bivio")

    assert _export(svc, "deca") == before  # the original, byte for byte
    assert _votes(svc, "deca") == origin_votes


def test_a_fork_at_a_time_copies_every_event_until_then_and_replays(svc: Service) -> None:
    decameronomic(svc)
    # a bare date: the game as it stood that day, after its events
    fork = svc.forks.fork("deca", at="2026-03-02", new_id="al-due", name="Al due marzo")
    events = svc.commands.events("deca")
    assert fork.seq == sum(1 for e in events if e["time"] <= "2026-03-02T23:59:59Z")
    assert fork.name == "Al due marzo" and "1" not in fork.proposals  # before Bruno's
    last_day = svc.forks.fork("deca", at="2026-03-04", new_id="al-quattro")
    assert last_day.seq == events[-1]["seq"]
    later = svc.forks.fork("deca", at=PROPOSED, new_id="al-tre-bis")
    assert later.proposals["1"]["votes"].keys() <= {"Bruno"}  # his own, not Carla's
    # replay = live, and the mark survives an export and an import
    replayed = fold(svc.commands.events("al-tre-bis"))
    assert replayed.to_dict() == svc.commands.load("al-tre-bis").to_dict()
    copy = svc.commands.import_game(list(svc.commands.export_game("al-tre-bis")), "copia")
    assert svc.forks.origin(copy.game_id) == {"game": "deca", "seq": later.seq}
    # without a point: the whole record so far, under a name no other game has
    whole = svc.forks.fork("deca", new_id="tutto")
    assert whole.seq == events[-1]["seq"]
    # a time left empty (a form's or an API body's) is no time given: the whole record
    # (schemathesis found it a server error)
    empty = svc.forks.fork("deca", at="", new_id="vuoto")
    assert empty.seq == events[-1]["seq"]
    assert last_day.name == "deca (diramazione)" and later.name == "deca (diramazione 2)"
    assert whole.name == "deca (diramazione 3)"
    assert empty.name == "deca (diramazione 4)"


def test_a_fork_admits_players_of_its_own(svc: Service) -> None:
    decameronomic(svc)
    fork = svc.forks.fork("deca", new_id="con-eva", players=["Eva"])
    assert "Eva" in fork.players and "Eva" not in svc.commands.load("deca").players
    with pytest.raises(InvalidInput):
        svc.forks.fork("deca", new_id="doppio", players=["Anna"])
    assert not svc.commands.store.has_game("doppio")  # nothing written


def test_refusals_in_the_games_language(svc: Service) -> None:
    decameronomic(svc)
    started = next(e["seq"] for e in svc.commands.events("deca")
                   if e["type"] == "game_started")
    last = svc.commands.load("deca").seq
    refusals = {
        "inizio": lambda: svc.forks.fork("deca", seq=started - 1, new_id="x"),
        "fine": lambda: svc.forks.fork("deca", seq=last + 1, new_id="x"),
        "prima": lambda: svc.forks.fork("deca", at="2026-03-01", new_id="x"),
        "dopo": lambda: svc.forks.fork("deca", at="2026-03-05", new_id="x"),
        "entrambi": lambda: svc.forks.fork("deca", at=PROPOSED, seq=last, new_id="x"),
        "data": lambda: svc.forks.fork("deca", at="ieri <b>", new_id="x"),
    }
    told = {}
    for key, attempt in refusals.items():
        with pytest.raises(InvalidInput) as refused:
            attempt()
        told[key] = str(refused.value)
    assert told["inizio"] == (f"La partita deca comincia con l'evento {started}: una "
                              "diramazione non può cominciare prima.")
    assert told["fine"] == (f"Il registro della partita deca finisce con l'evento {last}: "
                            "una diramazione non può cominciare dopo.")
    assert told["prima"] == ("La partita deca comincia lunedì 2 marzo 2026, 09:00 UTC: una "
                             "diramazione non può cominciare prima.")
    assert told["dopo"].startswith("Il registro della partita deca finisce mercoledì 4 "
                                   "marzo 2026, 09:00 UTC")
    assert told["entrambi"].startswith("Indica dove comincia la diramazione")
    assert "ieri" in told["data"]
    with pytest.raises(UnknownGame):
        svc.forks.fork("nessuna", new_id="x")
    svc.forks.fork("deca", new_id="preso")
    with pytest.raises(GameExists) as taken:
        svc.forks.fork("deca", new_id="preso")
    assert "preso" in str(taken.value)
    with pytest.raises(InvalidInput):
        svc.forks.fork("deca", new_id="../etc\x00")
    assert not svc.commands.store.has_game("x")


def scriba(*args: str, db: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "SCRIBA_DB": f"sqlite:///{db}"}
    return subprocess.run([*SCRIBA, *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_scriba_fork_answers_in_a_sentence(tmp_path: Path) -> None:
    db = tmp_path / "scriba.db"
    service = open_service(f"sqlite:///{db}")
    point = decameronomic(service)
    before = _export(service, "deca")
    service.close()

    done = scriba("fork", "deca", "--seq", str(point), "--game", "bivio", db=db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"bivio è una diramazione di deca fino all'evento {point}, "
                                   "chiamata «deca (diramazione)».")
    by_time = scriba("fork", "deca", "--at", "2026-03-02", "--game", "prima", "--lang", "de",
                     db=db)
    assert by_time.returncode == 0, by_time.stderr
    assert by_time.stdout.strip().startswith("prima ist eine Abzweigung von deca bis zum "
                                             "Ereignis ")

    taken = scriba("fork", "deca", "--game", "bivio", db=db)
    late = scriba("fork", "deca", "--at", "2027-01-01", "--game", "tardi", db=db)
    for refused in (taken, late):
        assert refused.returncode != 0
        told = (refused.stdout + refused.stderr).strip()
        assert told and "Traceback" not in told and not DEVELOPER.search(told), told
    assert "bivio" in taken.stdout + taken.stderr
    assert "non può cominciare dopo" in late.stdout + late.stderr

    service = open_service(f"sqlite:///{db}")
    try:
        assert _export(service, "deca") == before
        assert service.forks.origin("bivio") == {"game": "deca", "seq": point}
    finally:
        service.close()


def test_a_fork_on_postgresql_plays_apart(postgres_url: str) -> None:
    service = open_service(postgres_url)
    try:
        point = decameronomic(service, "fork-pg")
        before = _export(service, "fork-pg")
        service.forks.fork("fork-pg", seq=point, new_id="fork-pg-bivio")
        assert service.commands.perform("fork-pg-bivio", "Anna", "vote",
                                        {"proposal": "p1", "choice": "favorevole"}).accepted
        assert "Anna" in _votes(service, "fork-pg-bivio")
        assert "Anna" not in _votes(service, "fork-pg")
        assert _export(service, "fork-pg") == before
        with pytest.raises(GameExists):
            service.forks.fork("fork-pg", new_id="fork-pg-bivio")
    finally:
        service.close()

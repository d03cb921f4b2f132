"""``prova 12`` by mail (``test 12``, ``teste 12``, ``prüfe 12``), through Scriba's SMTP
intake and out through a real SMTP server: the planted vote farm of issue 22
(tests/lab_planted.py) tested with the host's small bounds; the letter's answer says the
test has started, and the report follows by mail, threaded under the letter, in the
player's language with the game's words. A stranger may not start a test; a letter with
no number is told how to write it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from lab_planted import AUTHOR, PLAYERS, plant

from scriba.service import Service

from .conftest import DOMAIN, Keys, seat_all
from .test_games_by_mail import Post

BOUNDS = {"SCRIBA_LAB_GAMES": "1", "SCRIBA_LAB_TURNS": "12", "SCRIBA_LAB_SEED": "5",
          "SCRIBA_LAB_SECONDS": "300", "SCRIBA_LAB_WORKERS": "2",
          "SCRIBA_LAB_BOTS": "random,for"}


@pytest.fixture
def lab_service(tmp_path, monkeypatch, make_service: Callable[..., Service]
                ) -> Iterator[Service]:
    for name, value in BOUNDS.items():
        monkeypatch.setenv(name, value)  # read when the service is assembled
    service = make_service(f"sqlite:///{tmp_path / 'mail.db'}")
    yield service
    service.close()


def _report(post: Post, service: Service, address: str, count: int,
            timeout: float = 300) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        post.deliver()
        if len(post.inbox(address)) >= count:
            return post.inbox(address)
        time.sleep(0.1)
    raise AssertionError(f"no report by mail within {timeout} s: {post.inbox(address)}")


def test_a_player_tests_the_vote_farm_by_mail(lab_service: Service, keys: Keys) -> None:
    service = lab_service
    game, number = plant(service, "farm")
    mail = seat_all(service, game, PLAYERS)
    address = f"scriba+{game}@{DOMAIN}"
    before = list(service.commands.export_game(game))
    with Post.running(service, keys) as post:
        post.send(mail[AUTHOR], address, f"Ciao,\n\nprova {number}\n\nAda\n",
                  subject="Una prova")
        assert post.deliver()["failed"] == 0
        started = post.inbox(mail[AUTHOR])[-1]
        assert f"La prova della proposta {number} “Premio al voto” è cominciata (Una " \
               "partita di 12 turni, entro 5 minuti). Il resoconto seguirà per posta." \
               in started, started
        report = _report(post, service, mail[AUTHOR], 2)[-1]
        assert report.startswith("R: Una prova\n"), report  # threaded under the letter
        assert f"La prova della proposta {number} “Premio al voto”:" in report
        assert "Provata in una partita di 12 turni a partire dalla partita com'è ora." \
            in report, report
        assert f"Con la proposta, «punti» di {AUTHOR}: da" in report, report
        assert "points" not in report and "{" not in report
        # Asked again, the game as it stands: told at once, no second test.
        post.send(mail["Bruno"], address, f"prova {number}\n")
        again = _report(post, service, mail["Bruno"], 1)[-1]
        assert f"La proposta {number} “Premio al voto” è già stata provata" in again, again
        assert f"«punti» di {AUTHOR}: da" in again
        # No number: how to write it.
        post.send(mail["Carla"], address, "prova la proposta\n")
        assert "per esempio: prova 12" in _report(post, service, mail["Carla"], 1)[-1]
    assert list(service.commands.export_game(game)) == before


def test_a_stranger_may_not_start_a_test(lab_service: Service, keys: Keys) -> None:
    service = lab_service
    game, number = plant(service, "harmless")
    with Post.running(service, keys) as post:
        post.send("zoe@players.test", f"scriba+{game}@{DOMAIN}", f"test {number}\n")
        assert post.deliver()["failed"] == 0
        answer = post.inbox("zoe@players.test")[-1]
        assert f"Solo i giocatori della partita {game} possono provare una proposta." \
            in answer, answer
    assert service.proposal_tests.get(game, number) is None

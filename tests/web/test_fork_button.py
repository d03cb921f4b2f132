"""The "Fork this game" button against a real ``scriba serve``: a player of a game forks it
from its page (the form as a browser sends it), becomes the fork's officer, lands on the
fork's officer page, and the fork's page says whose fork it is, linking back; a reader
without a seat sees no button and may not fork; the original's export is unchanged."""

from __future__ import annotations

import re
from html import unescape

from serving import csrf_of, seated_game, signed_in

from scriba.service import open_service
from scriba.web.i18n import LANGUAGE_COOKIE

PASSWORD = "fork-button-pass-1"
PLAYERS = ("Anna", "Bruno", "Carla")


def email(player: str) -> str:
    return f"{player.lower()}.fork@example.org"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_a_player_forks_the_game_from_its_page_and_runs_the_fork(tmp_path) -> None:
    server = seated_game(tmp_path, "nomic3", "torre", "La torre", PLAYERS, email, PASSWORD)
    db = f"sqlite:///{tmp_path / 'torre.db'}"
    service = open_service(db)
    before = list(service.commands.export_game("torre"))
    service.accounts.create_account("ospite.fork@example.org", "Ospite", PASSWORD)
    service.close()
    try:
        anna = signed_in(server.url, email("Anna"), PASSWORD)
        anna.cookies.set(LANGUAGE_COOKIE, "it")
        page = anna.get("/games/torre").text
        assert "Una copia della partita" in text_of(page)
        made = anna.post("/games/torre/fork", data={
            "csrf_token": csrf_of(page), "name": "La torre, prova", "at": ""})
        assert made.status_code == 303, made.text[:500]
        assert made.headers["location"] == "/games/torre-fork/officer"
        officer_page = anna.get("/games/torre-fork/officer")
        assert officer_page.status_code == 200
        told = text_of(officer_page.text)
        assert re.search(r"torre-fork è una diramazione di torre fino all.evento \d+", told)
        fork_page = text_of(anna.get("/games/torre-fork").text)
        assert "La torre, prova" in fork_page and "Apri la partita originale" in fork_page
        again = anna.post("/games/torre/fork", data={"csrf_token": csrf_of(page)})
        assert again.headers["location"] == "/games/torre-fork-2/officer"
        forged = anna.post("/games/torre/fork", data={"csrf_token": "forged"})
        assert forged.status_code in (400, 403)

        guest = signed_in(server.url, "ospite.fork@example.org", PASSWORD)
        guest.cookies.set(LANGUAGE_COOKIE, "de")
        guest_page = guest.get("/games/torre").text
        assert "Auf einer Kopie ausprobieren" not in text_of(guest_page)
        refused = guest.post("/games/torre/fork", data={"csrf_token": csrf_of(guest_page)})
        assert refused.status_code == 403
        assert "Nur die Spieler der Partie und ihre Spielleitung" in text_of(refused.text)
    finally:
        server.stop()
    service = open_service(db)
    try:
        assert list(service.commands.export_game("torre")) == before
        assert service.forks.origin("torre-fork")["game"] == "torre"
        assert not any(g["id"] == "torre-fork-3" for g in service.commands.games())
    finally:
        service.close()

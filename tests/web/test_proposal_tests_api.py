"""``POST``/``GET /api/v1/games/{game}/proposals/{n}/test`` against a real ``scriba serve``:
the four planted proposals of issue 22 (tests/lab_planted.py), each in a game of its own,
tested by a player with the host's small bounds (settings), and classified as a player
reads them: the vote farm's author's score running away, the endless turn stuck, the late
abort's rule failing, the harmless one with no alarm; each proposal's page tells the
same sentences to whoever reads it. Nobody without a seat may start a test; the answers
are in the reader's language; hostile paths are refused."""

from __future__ import annotations

import re
import time
from html import unescape

import httpx
import pytest
from lab_planted import AUTHOR, plant_all
from serving import Server

from scriba.service import open_service

# One run with the proposal and one without, a few turns each: what the planted ones need.
BOUNDS = {"SCRIBA_LAB_GAMES": "1", "SCRIBA_LAB_TURNS": "12", "SCRIBA_LAB_SEED": "5",
          "SCRIBA_LAB_SECONDS": "300", "SCRIBA_LAB_WORKERS": "2",
          "SCRIBA_LAB_BOTS": "random,for"}


def _findings_on_page(html: str) -> list[str]:
    """The lines of the page's findings (its ``ul.lab-findings``), as a reader sees them."""
    found = re.search(r'<ul class="lab-findings"[^>]*>(.*?)</ul>', html, re.S)
    assert found, "the page shows no findings"
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", item)).split())
            for item in re.findall(r"<li>(.*?)</li>", found.group(1), re.S)]


def _done(url: str, timeout: float = 400) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = httpx.get(url, timeout=30)
        assert answer.status_code == 200, answer.text
        if answer.json()["status"] != "running":
            return answer.json()
        time.sleep(0.1)
    raise AssertionError(f"{url} still running after {timeout} s")


@pytest.fixture
def lab_server(tmp_path, monkeypatch):
    for name, value in BOUNDS.items():
        monkeypatch.setenv(name, value)  # the server reads them at start
    db = f"sqlite:///{tmp_path / 'scriba.db'}"
    service = open_service(db)
    planted = plant_all(service)
    tokens = {name: {"Authorization": f"Bearer {service.seats.new_token(game, AUTHOR)}"}
              for name, (game, _number) in planted.items()}
    before = {game: list(service.commands.export_game(game)) for game, _n in planted.values()}
    service.close()
    server = Server(db)
    try:
        yield server, planted, tokens
    finally:
        server.stop()
    service = open_service(db)
    try:  # testing wrote nothing into the games
        assert {game: list(service.commands.export_game(game))
                for game in before} == before
    finally:
        service.close()


def test_the_four_planted_proposals_are_classified_through_the_api(lab_server) -> None:
    server, planted, tokens = lab_server
    urls = {name: f"{server.url}/api/v1/games/{game}/proposals/{number}/test"
            for name, (game, number) in planted.items()}
    farm = urls["farm"]
    assert httpx.get(farm).status_code == 404  # not tested yet
    assert httpx.post(farm).status_code == 401  # nobody signed in
    other = tokens["harmless"]  # a token of another game
    assert httpx.post(farm, headers=other).status_code == 403
    for name, url in urls.items():
        started = httpx.post(url, headers=tokens[name], timeout=30)
        assert started.status_code == 202, started.text
        assert started.json()["status"] in ("running", "done")
        assert started.json()["bounds"]["turns"] == 12
    again = httpx.post(farm, headers=tokens["farm"], timeout=30).json()
    assert again["started"] == httpx.get(farm).json()["started"]  # the same test
    done = {name: _done(url) for name, url in urls.items()}
    told = {name: "\n".join(d["sentences"]) for name, d in done.items()}
    kinds = {name: {f["kind"] for f in d["findings"]} for name, d in done.items()}
    assert all(d["status"] == "done" for d in done.values()), told
    for text in told.values():
        assert text.startswith("Provata in una partita di 12 turni"), text  # the game's language
    # The farm: its author's score ran away from the same game without it.
    assert "runaway" in kinds["farm"], told["farm"]
    assert any(f["kind"] == "runaway" and f["who"] == AUTHOR and f["variable"] == "points"
               for f in done["farm"]["findings"])
    assert f"«punti» di {AUTHOR}: da" in told["farm"]
    # The endless turn: the game stuck where without it it moves on.
    assert kinds["endless"] & {"period_stuck", "stall"}, told["endless"]
    assert "«Turno di Bruno» non finisce: dura" in told["endless"] or \
        "si blocca" in told["endless"]  # the period by its title, as the game names it
    # The late abort: its rule's code fails, told with the rule's number.
    assert "abort" in kinds["late_abort"], told["late_abort"]
    assert "il codice della regola" in told["late_abort"]
    assert "La regola si è fermata da sé: «troppi turni»." in told["late_abort"]  # not "fail:"
    # The harmless one: no finding, no false alarm.
    assert done["harmless"]["findings"] == [], told["harmless"]
    assert "Nessun problema trovato" in told["harmless"]
    # Each proposal's page tells what the API told, to any reader, in the game's language.
    for name, (game, number) in planted.items():
        page = httpx.get(f"{server.url}/games/{game}/proposals/{number}", timeout=30)
        assert page.status_code == 200
        assert _findings_on_page(page.text) == done[name]["sentences"], name
    # The same report in the reader's language, and as data.
    german = httpx.get(farm, params={"lang": "de"}).json()
    assert german["sentences"][0].startswith("Getestet in einer Partie zu 12 Durchgängen")
    assert f"„punti“ von {AUTHOR} von" in "\n".join(german["sentences"])
    assert german["report"]["games"] == 1 and german["report"]["proposal"] == \
        planted["farm"][1]


def test_hostile_paths_are_refused(lab_server) -> None:
    server, planted, tokens = lab_server
    game, _number = planted["harmless"]
    base = f"{server.url}/api/v1/games"
    for path in (f"{game}/proposals/abc/test", f"{game}/proposals/{'9' * 40}/test",
                 f"{game}/proposals/%00%1b/test", f"{game}/proposals/999/test"):
        for method in ("GET", "POST"):
            refused = httpx.request(method, f"{base}/{path}", headers=tokens["harmless"])
            assert refused.status_code in (404, 422), (method, path, refused.text)
            assert refused.headers["content-type"].startswith("application/problem+json")
    unknown = httpx.get(f"{base}/nessuna/proposals/1/test")
    assert unknown.status_code == 404

"""``POST /api/v1/games/{game}/forks`` against a real ``scriba serve``: a player of the game
forks it (nobody else may), is answered the fork's id and address, and the original's
export is byte-identical after; refusals are problem documents in the game's words."""

from __future__ import annotations

import httpx
from serving import Server

from scriba.service import open_service

START = "2026-03-02T09:00:00Z"


def test_a_player_forks_the_game_over_http(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("decameronomic", game_id="deca", start=START, seed=1,
                                 players=["Anna", "Bruno", "Carla", "Dario"],
                                 offices={"King": "Anna", "Scriba": "Bruno"})
    assert service.commands.perform("deca", "Bruno", "propose", {"label": "p1", "changes": [
        {"enact": {"title": "Saluti", "text": "Ogni Giocatore saluta il Re."}}]},
        at="2026-03-03T09:00:00Z").accepted
    before = list(service.commands.export_game("deca"))
    anna = {"Authorization": f"Bearer {service.seats.new_token('deca', 'Anna')}"}
    service.close()
    server = Server(db)
    try:
        url = f"{server.url}/api/v1/games/deca/forks"
        assert httpx.post(url, json={"game": "bivio"}).status_code == 401
        made = httpx.post(url, json={"game": "bivio", "at": "2026-03-02T12:00:00Z"}, headers=anna)
        assert made.status_code == 201, made.text
        body = made.json()
        assert body["game"] == "bivio" and body["url"] == f"{server.url}/games/bivio"
        assert made.headers["location"] == body["url"]
        assert body["sentence"].startswith("bivio è una diramazione di deca")
        assert httpx.get(f"{server.url}{body['api']}").status_code == 200
        taken = httpx.post(url, json={"game": "bivio"}, headers=anna)
        late = httpx.post(url, json={"game": "tardi", "at": "2030-01-01"}, headers=anna)
        assert 400 <= taken.status_code < 500 and 400 <= late.status_code < 500
        assert "non può cominciare dopo" in late.text
        for hostile in ({"game": "x1", "name": "a\x1b[31m\u202e"}, {"game": "x2",
                        "players": ["<b>", "x" * 10_000]}, {"game": "x3", "at": "9" * 10_000},
                        {"game": "x4", "seq": 2**40}, {"game": "../x5"},
                        {"game": "x6", "at": "2026-03-02T12:00:00Z", "seq": 20},
                        {"game": "x7", "extra": 1}):
            refused = httpx.post(url, json=hostile, headers=anna)
            assert refused.status_code in (400, 409, 422), (hostile, refused.text)
            assert refused.headers["content-type"].startswith("application/problem+json")
        assert not any(g["id"].startswith("x") for g in
                       httpx.get(f"{server.url}/api/v1/games").json())
        unknown = httpx.post(f"{server.url}/api/v1/games/nessuna/forks",
                             json={"game": "x"}, headers=anna)
        assert unknown.status_code in (403, 404)
    finally:
        server.stop()
    service = open_service(db)
    try:
        assert list(service.commands.export_game("deca")) == before
        assert service.forks.origin("bivio") == {"game": "deca", "seq":
                                                 service.commands.load("bivio").seq}
    finally:
        service.close()

"""A vote's latency through HTTP (a real ``scriba serve``) next to the same vote through
the service in-process, on one SQLite file. Run with ``-s`` to see the numbers:

    .venv/bin/pytest -q -s tests/web/test_api_latency.py
"""

from __future__ import annotations

import statistics
import time

import httpx
from serving import Server

from scriba.service import Service, open_service

VOTERS = 25
KITES = {"enact": {"title": "Kites", "text": "Players may bring kites to the table."}}


def _game(service: Service, game: str) -> list[str]:
    players = ["Anna"] + [f"P{i:02d}" for i in range(VOTERS)]
    service.commands.create_game("suber", game_id=game, players=players, clock="real")
    assert service.commands.perform(game, "Anna", "propose",
                                    {"label": "k", "changes": [KITES]}).accepted
    return players[1:]


def _summary(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    return (f"median {statistics.median(ms):.1f} ms, p90 {ms[int(len(ms) * 0.9)]:.1f} ms, "
            f"n={len(ms)}")


def test_vote_latency_http_next_to_service(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'latency.db'}"
    service = open_service(db)
    direct = []
    for number, player in enumerate(_game(service, "direct")):
        start = time.perf_counter()
        outcome = service.commands.perform("direct", player, "vote", {"proposal": "k",
                                                                      "choice": "yes"})
        if number:  # the first warms the sandbox's workers, as a running server has
            direct.append(time.perf_counter() - start)
        assert outcome.accepted, outcome.message
    voters = _game(service, "http")
    tokens = {p: service.seats.new_token("http", p) for p in voters}
    server = Server(db)
    over_http = []
    try:
        with httpx.Client(base_url=server.url) as client:
            client.get("/api/v1/games/http")  # the server loads the game once, as in use
            for number, player in enumerate(voters):
                start = time.perf_counter()
                answer = client.post("/api/v1/games/http/commands",
                                     json={"action": "vote",
                                           "args": {"proposal": "k", "choice": "yes"}},
                                     headers={"Authorization": f"Bearer {tokens[player]}"})
                if number:
                    over_http.append(time.perf_counter() - start)
                assert answer.status_code == 200, answer.text
    finally:
        server.stop()
        service.close()
    print(f"\nvote through the service: {_summary(direct)}")
    print(f"vote through HTTP:        {_summary(over_http)}")
    assert statistics.median(over_http) < 1.0

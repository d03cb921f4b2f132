"""A running server keeps what its chronicle pages need (the log's index, the period
reports told so far: issue 18); after more of the game is played, its pages are the very
pages a server started afresh on the same database renders."""

from __future__ import annotations

from pathlib import Path

import httpx
from serving import Server

from scriba.service import open_service
from scriba.service.scenario import _run_step, load_scenario, run_scenario

SCENARIO = Path(__file__).parents[2] / "src" / "scriba" / "rulesets" / "decameronomic" / \
    "scenarios" / "partita.yaml"


def _pages(server: Server, game: str, middle: int) -> dict[str, str]:
    pages = {}
    with httpx.Client(base_url=server.url, timeout=120) as client:
        for language in ("it", "en"):
            for query in ("", f"?before={middle}", "?period=1", "?kind=vote_cast",
                          "?after=3"):
                answer = client.get(f"/games/{game}/chronicle{query}",
                                    headers={"Accept-Language": language})
                assert answer.status_code == 200
                pages[f"{language}{query}"] = answer.text
        # (the feed names the server's address: the one thing two servers differ in)
        pages["feed"] = client.get(f"/games/{game}/feed.atom").text.replace(server.url, "")
        pages["reports"] = client.get(f"/api/v1/games/{game}/reports?lang=de").text
    return pages


def test_a_warm_servers_chronicle_is_a_fresh_servers_after_more_play(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'kept.db'}"
    scenario = load_scenario(SCENARIO)
    steps = scenario["steps"]
    half = len(steps) // 2
    service = open_service(db_url)
    try:
        game = run_scenario(service.commands, {**scenario, "steps": steps[:half]}).game_id
        warm = Server(db_url, tick=3600)
        try:
            middle = service.reads.load(game).seq // 2
            before = _pages(warm, game, middle)  # the server keeps what these needed
            for index, step in enumerate(steps[half:], half):
                _run_step(service.commands, game, index, step, [], [])
            after = _pages(warm, game, middle)
        finally:
            warm.stop()
        assert after["it"] != before["it"] and after["reports"] != before["reports"]
        fresh = Server(db_url, tick=3600)
        try:
            assert _pages(fresh, game, middle) == after
        finally:
            fresh.stop()
    finally:
        service.close()

"""One-click unsubscribe (RFC 8058) against a real ``scriba serve``: the link of a game
mail's List-Unsubscribe, POSTed as a mail client does (no session, no CSRF token: the
link's token proves the seat), and the page a reader sees on following it."""

from __future__ import annotations

import httpx
import pytest
from serving import Server

from scriba.service import open_service
from scriba.service.personal import UNSUBSCRIBE_PATH, unsubscribe_token


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('unsub') / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("decameronomic", game_id="dec",
                                 players=["Anna", "Bruno", "Carla"],
                                 offices={"King": "Anna", "Scriba": "Carla"})
    for name in ("Anna", "Bruno", "Carla"):
        service.seats.seat("dec", name, f"{name.lower()}@players.test")
    links = {name: f"{UNSUBSCRIBE_PATH}/dec/"
                   f"{unsubscribe_token(service.mailroom.secret('dec', name))}"
             for name in ("Anna", "Bruno")}
    server = Server(db)
    yield server, service, links
    server.stop()
    service.close()


def _mode(service, player: str) -> str:
    return next(s.mail_mode for s in service.seats.seats("dec") if s.player == player)


def test_the_link_shows_a_page_that_asks_first(site) -> None:
    server, service, links = site
    page = httpx.get(server.url + links["Bruno"])
    assert page.status_code == 200
    assert "Bruno" in page.text and "dec" in page.text
    assert f'<form method="post" action="{links["Bruno"]}">' in page.text  # no script
    assert _mode(service, "Bruno") == "auto"  # following the link changed nothing


def test_one_click_post_without_a_session_stops_the_mail(site) -> None:
    server, service, links = site
    answer = httpx.post(server.url + links["Anna"], content="List-Unsubscribe=One-Click",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 200
    assert "Anna" in answer.text
    assert _mode(service, "Anna") == "none"
    assert _mode(service, "Carla") == "auto"  # nobody else's


def test_a_wrong_token_is_not_found_and_changes_nothing(site) -> None:
    server, service, links = site
    forged = links["Bruno"][:-4] + ("0000" if not links["Bruno"].endswith("0000") else "1111")
    assert httpx.post(server.url + forged, content="List-Unsubscribe=One-Click").status_code \
        == 404
    assert httpx.get(server.url + f"{UNSUBSCRIBE_PATH}/nogame/abc").status_code == 404
    assert _mode(service, "Bruno") == "auto"

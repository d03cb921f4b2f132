"""A request to join that came by mail and that the rules have no way in for waits on the
officer's page, against a real ``scriba serve``: the officer admits it with one button,
and the newcomer is a player with their seat bound to the address they wrote from."""

from __future__ import annotations

import httpx
import pytest
from serving import Server, csrf_of

from scriba.service import open_service

PASSWORD = "plum tree at noon"


@pytest.fixture
def site(tmp_path):
    db = f"sqlite:///{tmp_path / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("suber", game_id="sub", players=["Anna", "Bert"])
    officer = service.accounts.create_account("boss@example.org", "Boss", PASSWORD)
    service.seats.set_officer("sub", officer.id)
    for name in ("Nora", "Olaf"):  # two letters asking to join, as the mail intake keeps them
        kept = service.mailroom.keep(f"From: {name.lower()}@players.test\r\n\r\njoin\r\n"
                                     .encode(), f"<{name}@players.test>", "smtp")
        assert service.joins.ask("sub", kept.id, f"{name.lower()}@players.test",
                                 name).way == "queued"
    server = Server(db)
    yield server, service
    server.stop()
    service.close()


def test_the_officer_admits_or_declines_a_request_from_the_page(site) -> None:
    server, service = site
    officer = httpx.Client(base_url=server.url)
    officer.post("/signin", data={"email": "boss@example.org", "password": PASSWORD,
                                  "csrf_token": csrf_of(officer.get("/signin").text)})
    page = officer.get("/games/sub/officer").text
    assert "Nora – nora@players.test" in page and "Olaf – olaf@players.test" in page
    nora, olaf = (r["id"] for r in service.joins.queue("sub"))
    # a forged form (no CSRF token) does nothing
    assert officer.post("/games/sub/officer/join",
                        data={"request": nora, "answer": "accept"}).status_code == 403
    assert "Nora" not in service.reads.status("sub")["players"]
    csrf = csrf_of(page)
    admitted = officer.post("/games/sub/officer/join",
                            data={"request": nora, "answer": "accept", "csrf_token": csrf})
    assert admitted.status_code == 303
    assert "Nora" in service.reads.status("sub")["players"]
    assert service.seats.player_for_email("sub", "nora@players.test") == "Nora"
    officer.post("/games/sub/officer/join",
                 data={"request": olaf, "answer": "decline", "csrf_token": csrf})
    assert service.joins.queue("sub") == []
    assert "Olaf" not in service.reads.status("sub")["players"]
    assert "Nora –" not in officer.get("/games/sub/officer").text
    # a player who is not the officer cannot use the form
    anna = httpx.post(server.url + "/games/sub/officer/join",
                      data={"request": olaf, "answer": "accept", "csrf_token": csrf})
    assert anna.status_code in (400, 403)

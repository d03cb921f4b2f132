"""The JSON API and sign-in against a real ``scriba serve`` process on loopback (SQLite)."""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest
from serving import Server, csrf_of, run_scriba

from scriba.service import open_service

ENACT = {"enact": {"title": "Kites", "text": "Players may bring kites to the table."}}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('serve') / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("equinomic", game_id="eq", players=["Anna", "Bruno", "Carla"],
                                 clock="real")
    server = Server(db, "--demo")
    tokens = {name: run_scriba("token", "demo", name, "--db", db).strip().splitlines()[-1]
              for name in ("Anna", "Bruno")}
    tokens["eq-Anna"] = service.seats.new_token("eq", "Anna")
    yield server, service, tokens
    server.stop()
    service.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_demo_prints_address_and_sign_ins(site, tmp_path) -> None:
    server, _, _ = site
    # The first lines were printed before the server answered; read them from a fresh one.
    db = f"sqlite:///{tmp_path / 'demo.db'}"
    again = Server(db, "--demo")
    try:
        assert httpx.get(again.url + "/games/demo").status_code == 200
    finally:
        output = again.stop()
    assert "/games/demo" in output and "anna@example.org" in output
    assert "anna-demo-pass" in output


def test_token_is_the_last_line_and_works(site) -> None:
    server, _, tokens = site
    assert tokens["Anna"].startswith("scr_")
    answer = httpx.get(f"{server.url}/api/v1/games/demo/actions",
                       headers=bearer(tokens["Anna"])).json()
    assert answer["player"] == "Anna" and "propose" in {a["name"] for a in answer["actions"]}
    # Only what she may do now, the owed move first with why; a vote's options when open.
    first = answer["actions"][0]
    assert first["name"] == "propose" and first["due"] is True and first["due_reason"]
    assert {"options", "deadline"} <= set(first)
    bruno = httpx.get(f"{server.url}/api/v1/games/demo/actions",
                      headers=bearer(tokens["Bruno"])).json()
    assert "propose" not in {a["name"] for a in bruno["actions"]}  # not his turn


def test_no_action_without_a_token(site) -> None:
    server, service, tokens = site
    before = len(service.reads.log("demo"))
    url = f"{server.url}/api/v1/games/demo/commands"
    for headers in [{}, bearer("scr_forged"), {"Authorization": "Basic YTpi"},
                    bearer(tokens["Anna"] + "x")]:
        answer = httpx.post(url, json={"action": "roll"}, headers=headers)
        assert answer.status_code == 401, answer.text
        assert answer.headers["content-type"] == "application/problem+json"
    answer = httpx.post(url, json={"action": "roll"}, headers=bearer(tokens["eq-Anna"]))
    assert answer.status_code == 403 and "eq" in answer.json()["detail"]
    assert len(service.reads.log("demo")) == before


def test_actor_is_the_tokens_player(site) -> None:
    server, service, tokens = site
    url = f"{server.url}/api/v1/games/demo/commands"
    forged = httpx.post(url, headers=bearer(tokens["Bruno"]),
                        json={"action": "propose", "actor": "Anna",
                              "args": {"label": "x", "changes": [ENACT]}})
    assert forged.status_code == 422 and "actor" in forged.json()["detail"]
    # Bruno's token proposes as Bruno, whose turn it is not: refused by the rules, as Bruno.
    answer = httpx.post(url, headers=bearer(tokens["Bruno"]),
                        json={"action": "propose", "args": {"label": "b1", "changes": [ENACT]}})
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    refused = service.reads.log("demo")[-1]
    assert refused["type"] == "command_refused" and refused["actor"] == "Bruno"
    assert answer.json()["detail"] == refused["payload"]["message"]
    # Anna's proposes as Anna.
    done = httpx.post(url, headers=bearer(tokens["Anna"]),
                      json={"action": "propose", "args": {"label": "a1", "changes": [ENACT]},
                            "request_id": "anna-1"})
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["accepted"] and body["seqs"] and body["reply"]
    events = {e["seq"]: e for e in service.reads.log("demo")}
    assert all(events[seq]["actor"] in ("Anna", None) for seq in body["seqs"])
    assert events[body["seqs"][0]]["actor"] == "Anna"
    again = httpx.post(url, headers=bearer(tokens["Anna"]),
                       json={"action": "propose", "args": {"label": "a1", "changes": [ENACT]},
                             "request_id": "anna-1"})
    assert again.json() == body  # the same request id: the first answer, nothing new
    assert max(events) == service.reads.log("demo")[-1]["seq"]


def test_refusal_in_the_games_language(site) -> None:
    server, _, tokens = site
    answer = httpx.post(f"{server.url}/api/v1/games/eq/commands",
                        headers=bearer(tokens["eq-Anna"]), json={"action": "dance"})
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("Non esiste l'azione 'dance'")
    invalid = httpx.post(f"{server.url}/api/v1/games/eq/commands",
                         headers=bearer(tokens["eq-Anna"]),
                         json={"action": "propose", "args": {"title": "a\u202eb"}})
    assert 400 <= invalid.status_code < 500


@pytest.mark.parametrize("body, content_type, status", [
    (b"\xff\xfe{}", "application/json", 400),
    (b"[" * 50_000 + b"]" * 50_000, "application/json", 400),
    (b'{"action": ', "application/json", 422),
    (b'"just a string"', "application/json", 422),
    (b'{"action": "roll", "args": []}', "application/json", 422),
    (b"action=roll", "application/x-www-form-urlencoded", 422),
    (b"x" * (3 * 1024 * 1024), "application/json", 413),
])
def test_hostile_bodies_get_a_4xx(site, body, content_type, status) -> None:
    server, _, tokens = site
    answer = httpx.post(f"{server.url}/api/v1/games/demo/commands", content=body,
                        headers={**bearer(tokens["Anna"]), "Content-Type": content_type})
    assert answer.status_code == status, answer.text[:300]
    assert answer.json()["detail"]


def test_unknown_things_are_404_problems(site) -> None:
    server, _, _ = site
    for path in ["/api/v1/games/nope", "/api/v1/games/demo/rules/999999",
                 "/api/v1/games/demo/proposals/nope", "/api/v1/games/nope/log"]:
        answer = httpx.get(server.url + path)
        assert answer.status_code == 404, path
        assert answer.headers["content-type"] == "application/problem+json"


def sign_in(server: Server, email: str, password: str) -> tuple[httpx.Client, httpx.Response]:
    client = httpx.Client(base_url=server.url)
    token = csrf_of(client.get("/signin").text)
    answer = client.post("/signin", data={"email": email, "password": password,
                                          "csrf_token": token, "next": "/games/demo"})
    return client, answer


def test_forged_csrf_refused(site) -> None:
    server, service, _ = site
    client = httpx.Client(base_url=server.url)
    client.get("/signin")
    forged = client.post("/signin", data={"email": "carla@example.org",
                                          "password": "carla-demo-pass", "csrf_token": "x" * 43})
    assert forged.status_code == 403
    missing = client.post("/signin", data={"email": "carla@example.org",
                                           "password": "carla-demo-pass"})
    assert missing.status_code == 403
    client, answer = sign_in(server, "carla@example.org", "carla-demo-pass")
    assert answer.status_code == 303 and answer.headers["location"] == "/games/demo"
    # Signed in, the API acts as Carla only with the session's CSRF token in a header.
    url = "/api/v1/games/demo/commands"
    before = len(service.reads.log("demo"))
    assert client.post(url, json={"action": "consent"}).status_code == 403
    assert client.post(url, json={"action": "consent"},
                       headers={"X-CSRF-Token": "y" * 43}).status_code == 403
    assert len(service.reads.log("demo")) == before
    token = csrf_of(client.get("/account").text)
    acted = client.post(url, json={"action": "roll"}, headers={"X-CSRF-Token": token})
    assert acted.status_code in (200, 422), acted.text
    assert service.reads.log("demo")[-1]["actor"] == "Carla"
    # Sign-out is a form too; a forged one leaves the session alone.
    assert client.post("/signout", data={"csrf_token": "z" * 43}).status_code == 403
    assert client.get("/account").status_code == 200
    assert client.post("/signout", data={"csrf_token": token}).status_code == 303
    assert client.get("/account").status_code == 303  # back to the sign-in page


def test_sign_in_rate_limited(site) -> None:
    server, _, _ = site
    for _ in range(5):
        _, answer = sign_in(server, "bruno@example.org", "wrong password")
        assert answer.status_code == 401
    _, answer = sign_in(server, "bruno@example.org", "bruno-demo-pass")
    assert answer.status_code == 429  # even the right password, for the rest of the minute
    _, other = sign_in(server, "anna@example.org", "anna-demo-pass")
    assert other.status_code == 303  # other addresses are not locked out


def test_invitation_used_twice_refused(site) -> None:
    server, service, _ = site
    token = service.seats.invite("eq", "dora@example.org", "Dora")
    client = httpx.Client(base_url=server.url)
    page = client.get(f"/invitations/{token}")
    assert page.status_code == 200 and "Dora" in page.text
    accepted = client.post(f"/invitations/{token}", data={
        "csrf_token": csrf_of(page.text), "password": "dora's password",
        "display_name": "Dora"})
    assert accepted.status_code == 303, accepted.text
    assert "Dora" in service.reads.load("eq").players
    other = httpx.Client(base_url=server.url)
    page = other.get(f"/invitations/{token}")
    again = other.post(f"/invitations/{token}", data={
        "csrf_token": csrf_of(other.get("/signin").text), "password": "mallory's pw",
        "display_name": "Mallory"})
    assert again.status_code == 403
    assert service.accounts.authenticate("dora@example.org", "mallory's pw") is None


def test_officer_endpoints(site) -> None:
    server, service, tokens = site
    url = f"{server.url}/api/v1/games/demo/invitations"
    body = {"email": "eve@example.org", "player": "Eve"}
    assert httpx.post(url, json=body).status_code == 401
    assert httpx.post(url, json=body, headers=bearer(tokens["Anna"])).status_code == 403
    officer = httpx.Client(base_url=server.url)
    officer.post("/signin", data={"email": "scriba@example.org",
                                  "password": "scriba-demo-pass",
                                  "csrf_token": csrf_of(officer.get("/signin").text)})
    csrf = csrf_of(officer.get("/account").text)
    made = officer.post("/api/v1/games/demo/invitations", json=body,
                        headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201, made.text
    assert made.json()["url"].endswith(made.json()["token"])
    seats = officer.get("/api/v1/games/demo/players").json()
    assert {"Anna", "Bruno", "Carla"} <= {s["player"] for s in seats}
    assert httpx.get(f"{server.url}/api/v1/games/demo/players").status_code == 401
    assert json.loads(httpx.get(f"{server.url}/api/v1/openapi.json").text)["paths"]


def test_the_api_on_postgresql(postgres_url) -> None:
    service = open_service(postgres_url)
    game = f"pg-{time.time_ns()}"
    service.commands.create_game("suber", game_id=game, players=["Anna", "Bruno", "Carla"],
                                 clock="real")
    service.seats.seat(game, "Anna", f"anna-{game}@example.org")
    anna = service.seats.new_token(game, "Anna")
    bruno = service.seats.new_token(game, "Bruno")
    server = Server(postgres_url)
    try:
        url = f"{server.url}/api/v1/games/{game}/commands"
        assert httpx.post(url, json={"action": "roll"}).status_code == 401
        proposed = httpx.post(url, headers=bearer(anna), json={
            "action": "propose", "args": {"label": "k", "changes": [ENACT]}})
        assert proposed.status_code == 200, proposed.text
        voted = httpx.post(url, headers=bearer(bruno), json={
            "action": "vote", "args": {"proposal": "k", "choice": "yes"}})
        assert voted.status_code == 200, voted.text
        assert service.reads.log(game)[voted.json()["seqs"][0] - 1]["actor"] == "Bruno"
        twice = httpx.post(url, headers=bearer(bruno), json={
            "action": "vote", "args": {"proposal": "k", "choice": "yes"}})
        assert twice.status_code == 422 and twice.json()["detail"]
        proposal = httpx.get(f"{server.url}/api/v1/games/{game}/proposals/k").json()
        assert proposal["votes"]["Bruno"] == "for"
    finally:
        server.stop()
        service.close()


def test_sign_in_page_escapes_what_it_echoes(site) -> None:
    server, _, _ = site
    client = httpx.Client(base_url=server.url)
    hostile = '"><script>alert(1)</script>@example.org'
    answer = client.post("/signin", data={"email": hostile, "password": "whatever1",
                                          "csrf_token": csrf_of(client.get("/signin").text),
                                          "next": "//evil.example/"})
    assert answer.status_code == 401
    assert "<script>alert(1)" not in answer.text and "&lt;script&gt;" in answer.text


def test_preferences_are_kept(site) -> None:
    server, service, _ = site
    client, answer = sign_in(server, "anna@example.org", "anna-demo-pass")
    assert answer.status_code == 303
    token = csrf_of(client.get("/account").text)
    saved = client.post("/account", data={"csrf_token": token, "language": "de",
                                          "timezone": "Europe/Berlin", "mail_mode": "digest"})
    assert saved.status_code == 303
    account = service.accounts.by_email("anna@example.org")
    assert (account.language, account.timezone, account.mail_mode) == \
        ("de", "Europe/Berlin", "digest")
    refused = client.post("/account", data={"csrf_token": token, "timezone": "Mars/Olympus"})
    assert refused.status_code == 422 and "Mars/Olympus" in refused.text
    assert service.accounts.by_email("anna@example.org").timezone == "Europe/Berlin"
    # The redirect after signing in never leaves the site.
    for target in ["//evil.example/", "https://evil.example/", "/\\evil.example"]:
        other = httpx.Client(base_url=server.url)
        bounced = other.post("/signin", data={
            "email": "carla@example.org", "password": "carla-demo-pass", "next": target,
            "csrf_token": csrf_of(other.get("/signin").text)})
        assert bounced.status_code == 303 and bounced.headers["location"] == "/"


def test_officer_acts_for_offices_and_moves_a_simulated_clock(site) -> None:
    server, service, tokens = site
    officer = httpx.Client(base_url=server.url)
    officer.post("/signin", data={"email": "scriba@example.org",
                                  "password": "scriba-demo-pass",
                                  "csrf_token": csrf_of(officer.get("/signin").text)})
    csrf = {"X-CSRF-Token": csrf_of(officer.get("/account").text)}
    # Suber's Judge is Carla: the officer acts for the office, as its holder.
    judged = officer.post("/api/v1/games/demo/officer/commands", headers=csrf,
                          json={"action": "judge", "args": {"judgment": "1", "ruling": "yes"}})
    assert judged.status_code in (200, 422), judged.text
    assert service.reads.log("demo")[-1]["actor"] == "Carla"
    assert httpx.post(f"{server.url}/api/v1/games/demo/officer/commands",
                      headers=bearer(tokens["Anna"]),
                      json={"action": "judge", "args": {}}).status_code == 403
    unknown = officer.post("/api/v1/games/demo/officer/commands", headers=csrf,
                           json={"action": "roll"})
    assert unknown.status_code == 422
    real = officer.post("/api/v1/games/demo/advance", headers=csrf, json={"by": 3600})
    assert real.status_code == 422 and "real clock" in real.json()["detail"]
    service.commands.create_game("suber", game_id="sim", players=["Anna", "Bruno"],
                                 start="2026-03-01T10:00:00Z")
    boss = service.accounts.by_email("scriba@example.org")
    service.seats.set_officer("sim", boss.id)
    moved = officer.post("/api/v1/games/sim/advance", headers=csrf, json={"by": 86400})
    assert moved.status_code == 200, moved.text
    assert service.reads.load("sim").time == "2026-03-02T10:00:00Z"
    garbage = officer.post("/api/v1/games/sim/advance", headers=csrf, json={"to": "soon"})
    assert garbage.status_code == 422


def test_a_player_makes_and_revokes_their_own_token(site) -> None:
    server, service, _ = site
    client, answer = sign_in(server, "anna@example.org", "anna-demo-pass")
    assert answer.status_code == 303
    page = client.get("/account")
    made = client.post("/account/tokens", data={"csrf_token": csrf_of(page.text),
                                                "game": "demo", "label": "my <bot>"})
    assert made.status_code == 201
    token = re.search(r'<code id="new-token">([^<]+)</code>', made.text).group(1)
    assert service.seats.token_identity(token)[1:] == ("demo", "Anna")
    assert "my &lt;bot&gt;" in client.get("/account").text
    # No token for a game where one has no seat, and no token without the CSRF token.
    assert client.post("/account/tokens", data={"csrf_token": csrf_of(page.text),
                                                "game": "eq"}).status_code == 403
    assert client.post("/account/tokens", data={"game": "demo"}).status_code == 403
    # A bot revokes its own token; then the token no longer opens anything.
    assert httpx.delete(f"{server.url}/api/v1/token",
                        headers=bearer(token)).status_code == 204
    assert httpx.get(f"{server.url}/api/v1/games/demo/actions",
                     headers=bearer(token)).status_code == 401
    assert httpx.delete(f"{server.url}/api/v1/token",
                        headers=bearer(token)).status_code == 401


def test_a_rules_code_is_checked_without_proposing_it(site) -> None:
    """POST /games/{game}/check: the proposal decided on a copy, told in the caller's
    language — its compile error with the line and caret, or its dry run — and nothing
    recorded."""
    server, service, tokens = site
    broken = {"enact": {"title": "Bonus", "text": "Un punto.",
                        "code": "def on_rule_changed(game, event)\n    return []\n"}}
    before = len(service.reads.log("eq"))
    answer = httpx.post(server.url + "/api/v1/games/eq/check?lang=de",
                        headers=bearer(tokens["eq-Anna"]),
                        json={"action": "propose", "args": {"changes": [broken]}})
    assert answer.status_code == 200, answer.text
    told = answer.json()
    assert told["refused"].splitlines()[:2] == [
        "Der Code der neuen Regel lässt sich nicht übersetzen:",
        "Zeile 1, Spalte 33: Am Ende der Zeile fehlt ein Doppelpunkt `:`."]
    assert told["dry_run"] is None
    fine = {"enact": {"title": "Bonus", "text": "Un punto.",
                      "code": "def on_rule_changed(game, event):\n    return []\n"}}
    answer = httpx.post(server.url + "/api/v1/games/eq/check",
                        headers=bearer(tokens["eq-Anna"]),
                        json={"action": "propose", "args": {"changes": [fine]}})
    told = answer.json()
    assert told["refused"] is None and told["dry_run"]["events"], told
    assert len(service.reads.log("eq")) == before  # nothing recorded
    assert httpx.post(server.url + "/api/v1/games/eq/check",
                      json={"action": "propose", "args": {}}).status_code == 401

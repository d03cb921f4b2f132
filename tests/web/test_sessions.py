"""Sessions and tokens that hold, against real ``scriba serve`` processes (the tester's
findings): a token is the API's only and its one seat's; a session is a row in the database,
ended by signing out (here or on another server), a password change, "sign out
everywhere" and the officer taking the seat away; the cookie is Secure behind a trusted
proxy."""

from __future__ import annotations

import itertools
import re
import time

import httpx
import pytest
from serving import Server, csrf_of

from scriba.service import Service, open_service

PASSWORD = "plum tree at noon"
NEW_PASSWORD = "apricot dusk lantern"
# Sign-in limits out of the way: these tests sign in often, from one address.
GENEROUS = {"SCRIBA_SIGNIN_LIMITS": "1000/minute", "SCRIBA_SIGNIN_IP_LIMITS": "1000/minute"}
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"
_people = itertools.count(1)


def serve(db: str, *args: str) -> Server:
    with pytest.MonkeyPatch.context() as env:
        for name, value in GENEROUS.items():
            env.setenv(name, value)
        return Server(db, *args)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('sessions') / 'scriba.db'}"
    service = open_service(db)
    for game, players in [("g1", ["Anna", "Bruno"]), ("g2", ["Anna", "Carla"]),
                          ("g3", ["Dora", "Emil"])]:
        service.commands.create_game("suber", game_id=game, players=players, clock="real")
    server = serve(db, "--forwarded-allow-ips", "127.0.0.1")  # as behind a local proxy
    yield server, service, db
    server.stop()
    service.close()


def person(service: Service, name: str, *seats: tuple[str, str]) -> str:
    """A new account with PASSWORD, seated as given; its address."""
    email = f"{name.lower()}-{next(_people)}-{time.time_ns()}@example.org"
    service.accounts.create_account(email, name, PASSWORD)
    for game, player in seats:
        service.seats.seat(game, player, email)
    return email


def sign_in(url: str, email: str, password: str = PASSWORD,
            agent: str = "python-httpx") -> httpx.Client:
    client = httpx.Client(base_url=url, headers={"User-Agent": agent})
    answer = client.post("/signin", data={"email": email, "password": password,
                                          "csrf_token": csrf_of(client.get("/signin").text)})
    assert answer.status_code == 303, answer.text[:500]
    return client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def signed_in(client: httpx.Client) -> bool:
    answer = client.get("/account")
    assert answer.status_code in (200, 303), answer.text[:300]
    return answer.status_code == 200


def set_cookie(answer: httpx.Response, name: str) -> set[str]:
    """The attributes ("httponly", "max-age=0", ...) of the answer's cookie ``name``."""
    found = [h for h in answer.headers.get_list("set-cookie") if h.startswith(name + "=")]
    assert found, answer.headers
    return {part.strip().lower() for part in found[0].split(";")[1:]}


def test_a_bearer_token_opens_no_account_page_and_makes_no_token(site) -> None:
    server, service, _ = site
    email = person(service, "Anna", ("g1", "Anna"), ("g2", "Anna"))
    token = service.seats.new_token("g1", "Anna", "bot")
    shown = httpx.get(server.url + "/account", headers=bearer(token))
    assert shown.status_code == 303 and shown.headers["location"].startswith("/signin")
    assert email not in shown.text
    changed = httpx.post(server.url + "/account", headers=bearer(token),
                         data={"display_name": "Mallory", "language": "de"})
    assert changed.status_code == 403
    account = service.accounts.by_email(email)
    assert (account.display_name, account.language) == ("Anna", "en")
    before = service.seats.tokens("g2", "Anna")
    minted = httpx.post(server.url + "/account/tokens", headers=bearer(token),
                        data={"game": "g2", "label": "escalate"})
    assert minted.status_code == 403 and "scr_" not in minted.text
    # Even with a good anonymous CSRF token the bearer is nobody on the pages.
    browser = httpx.Client(base_url=server.url, headers=bearer(token))
    csrf = csrf_of(browser.get("/signin").text)
    minted = browser.post("/account/tokens", data={"game": "g2", "csrf_token": csrf})
    assert minted.status_code == 303 and minted.headers["location"].startswith("/signin")
    assert service.seats.tokens("g2", "Anna") == before
    assert "Signed in as" not in browser.get("/games/g1").text
    # Revoking the token leaves nothing it made: it made nothing.
    assert httpx.delete(server.url + "/api/v1/token", headers=bearer(token)).status_code == 204
    assert service.seats.tokens("g2", "Anna") == before


def test_a_token_acts_and_reads_as_its_player_in_its_game_only(site) -> None:
    server, service, _ = site
    person(service, "Anna", ("g1", "Anna"), ("g2", "Anna"))
    token = service.seats.new_token("g1", "Anna")
    before = len(service.reads.log("g2"))
    acted = httpx.post(server.url + "/api/v1/games/g2/commands", headers=bearer(token),
                       json={"action": "roll"})
    assert acted.status_code == 403 and "g1" in acted.json()["detail"]
    read = httpx.get(server.url + "/api/v1/games/g2/actions", headers=bearer(token))
    assert read.status_code == 403
    assert len(service.reads.log("g2")) == before
    own = httpx.get(server.url + "/api/v1/games/g1/actions", headers=bearer(token)).json()
    assert own["player"] == "Anna"


def test_a_cookie_copied_before_signout_no_longer_opens_the_account(site) -> None:
    server, service, _ = site
    email = person(service, "Bruno")
    client = httpx.Client(base_url=server.url)
    answer = client.post("/signin", data={"email": email, "password": PASSWORD,
                                          "csrf_token": csrf_of(client.get("/signin").text)})
    cookie = set_cookie(answer, "scriba_session")
    assert {"httponly", "samesite=lax", "path=/"} <= cookie and "secure" not in cookie
    copied = client.cookies["scriba_session"]
    assert len(copied) >= 43 and str(service.accounts.by_email(email).id) != copied
    page = client.get("/account")
    assert page.status_code == 200 and email in page.text
    csrf = csrf_of(page.text)
    thief = httpx.Client(base_url=server.url, cookies={"scriba_session": copied})
    assert signed_in(thief)  # the copy works while the session lasts ...
    out = client.post("/signout", data={"csrf_token": csrf})
    assert out.status_code == 303
    assert not signed_in(thief)  # ... and not a moment after
    assert not signed_in(client)
    acted = thief.post("/api/v1/games/g1/commands", json={"action": "roll"},
                       headers={"X-CSRF-Token": csrf})
    assert acted.status_code == 401


def test_a_password_change_ends_the_other_sessions(site) -> None:
    server, service, _ = site
    email = person(service, "Carla")
    here, there = sign_in(server.url, email), sign_in(server.url, email)
    csrf = csrf_of(here.get("/account").text)
    weak = here.post("/account/password", data={
        "csrf_token": csrf, "current_password": PASSWORD, "new_password": "12345678"})
    assert weak.status_code == 422 and "too easy to guess" in weak.text
    wrong = here.post("/account/password", data={
        "csrf_token": csrf, "current_password": "not my password", "new_password": NEW_PASSWORD})
    assert wrong.status_code == 422 and "current password is wrong" in wrong.text
    assert signed_in(there)
    changed = here.post("/account/password", data={
        "csrf_token": csrf, "current_password": PASSWORD, "new_password": NEW_PASSWORD})
    assert changed.status_code == 303
    assert not signed_in(there) and signed_in(here)
    refused = httpx.Client(base_url=server.url)
    old = refused.post("/signin", data={"email": email, "password": PASSWORD,
                                        "csrf_token": csrf_of(refused.get("/signin").text)})
    assert old.status_code == 401
    assert signed_in(sign_in(server.url, email, NEW_PASSWORD))


SESSION_ROW = re.compile(r'<li>([^<]*?) — .*?name="session_id" value="([0-9a-f]{64})"', re.S)


def sessions_listed(client: httpx.Client) -> dict[str, str]:
    """client description → session id, as the account page lists them."""
    return {client_name.strip(): session_id
            for client_name, session_id in SESSION_ROW.findall(client.get("/account").text)}


def test_sign_out_one_session_or_everywhere(site) -> None:
    server, service, _ = site
    email = person(service, "Dora")
    firefox = sign_in(server.url, email, agent=FIREFOX)
    curl = sign_in(server.url, email, agent="curl/8.5.0")
    third = sign_in(server.url, email, agent="python-httpx/0.28")
    page = firefox.get("/account").text
    listed = sessions_listed(firefox)
    assert set(listed) == {"Firefox, Linux", "curl/8.5.0", "python-httpx/0.28"}
    assert page.count("(this one)") == 1
    assert re.search(r"Firefox, Linux — [^<]*<strong>\(this one\)", page)
    stranger = sign_in(server.url, person(service, "Emil"))
    csrf = csrf_of(page)
    theirs = firefox.post("/account/sessions/end", data={
        "csrf_token": csrf, "session_id": next(iter(sessions_listed(stranger).values()))})
    assert theirs.status_code == 404 and signed_in(stranger)
    ended = firefox.post("/account/sessions/end",
                         data={"csrf_token": csrf, "session_id": listed["curl/8.5.0"]})
    assert ended.status_code == 303
    assert not signed_in(curl) and signed_in(third) and signed_in(firefox)
    everywhere = firefox.post("/account/sessions/end-all", data={"csrf_token": csrf})
    assert everywhere.status_code == 303
    assert not signed_in(firefox) and not signed_in(third)
    assert service.accounts.sessions(service.accounts.by_email(email).id) == []


def test_the_officer_taking_a_seat_away_revokes_its_tokens_and_ends_sessions(site) -> None:
    server, service, _ = site
    officer_email = person(service, "Boss")
    service.seats.set_officer("g3", service.accounts.by_email(officer_email).id)
    dora_email = person(service, "Dora", ("g3", "Dora"))
    emil_email = person(service, "Emil", ("g3", "Emil"))
    dora, emil = sign_in(server.url, dora_email), sign_in(server.url, emil_email)
    dora_token = service.seats.new_token("g3", "Dora")
    emil_token = service.seats.new_token("g3", "Emil")
    actions = server.url + "/api/v1/games/g3/actions"
    assert httpx.get(actions, headers=bearer(dora_token)).json()["player"] == "Dora"
    # Not the officer: refused, nothing changes.
    refused = dora.post("/games/g3/officer/seat", data={
        "csrf_token": csrf_of(dora.get("/account").text), "player": "Emil", "email": ""})
    assert refused.status_code == 403 and signed_in(emil)
    officer = sign_in(server.url, officer_email)
    csrf = csrf_of(officer.get("/games/g3/officer").text)
    given = officer.post("/games/g3/officer/seat", data={
        "csrf_token": csrf, "player": "Dora", "email": "new-dora@example.org"})
    assert given.status_code == 303
    assert service.seats.player_for_email("g3", "new-dora@example.org") == "Dora"
    assert httpx.get(actions, headers=bearer(dora_token)).status_code == 401
    assert not signed_in(dora)
    assert signed_in(emil) and httpx.get(actions, headers=bearer(emil_token)).is_success
    removed = officer.post("/games/g3/officer/seat",
                           data={"csrf_token": csrf, "player": "Emil", "email": ""})
    assert removed.status_code == 303
    assert service.seats.email_for_player("g3", "Emil") is None
    assert httpx.get(actions, headers=bearer(emil_token)).status_code == 401
    assert not signed_in(emil) and signed_in(officer)


def test_the_session_cookie_is_secure_behind_a_trusted_proxy(site) -> None:
    server, service, db = site
    email = person(service, "Anna")

    def session_cookie(url: str) -> set[str]:
        client = httpx.Client(base_url=url)
        csrf = csrf_of(client.get("/signin").text)
        answer = client.post("/signin", headers={"X-Forwarded-Proto": "https"},
                             data={"email": email, "password": PASSWORD, "csrf_token": csrf})
        assert answer.status_code == 303, answer.text[:300]
        return set_cookie(answer, "scriba_session")

    assert "secure" in session_cookie(server.url)  # 127.0.0.1 is its trusted proxy
    anonymous = httpx.get(server.url + "/signin", headers={"X-Forwarded-Proto": "https"})
    assert "secure" in set_cookie(anonymous, "scriba_csrf")
    untrusting = serve(db)
    try:  # no proxy configured: a client's own X-Forwarded-Proto is not believed
        assert "secure" not in session_cookie(untrusting.url)
    finally:
        untrusting.stop()


def test_signing_out_on_one_server_ends_the_session_on_the_other(postgres_url) -> None:
    service = open_service(postgres_url)
    email = f"pg-{time.time_ns()}@example.org"
    service.accounts.create_account(email, "Anna", PASSWORD)
    first, second = serve(postgres_url), serve(postgres_url)
    try:
        client = sign_in(first.url, email)
        elsewhere = httpx.Client(base_url=second.url,
                                 cookies={"scriba_session": client.cookies["scriba_session"]})
        assert signed_in(elsewhere)  # one session, whichever process answers
        out = client.post("/signout", data={"csrf_token": csrf_of(client.get("/account").text)})
        assert out.status_code == 303
        assert not signed_in(elsewhere)
    finally:
        first.stop()
        second.stop()
        service.close()

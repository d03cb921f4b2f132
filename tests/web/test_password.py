"""Passwords against a real ``scriba serve``: a guessable one is refused in the reader's
language wherever a password is set, and a reset link by mail works once, for an hour,
without telling which addresses have accounts."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from serving import Server, csrf_of
from sqlalchemy import update

from scriba.service import Service, open_service
from scriba.store.accounts import PasswordResetRow

PASSWORD = "plum tree at noon"
NEW_PASSWORD = "apricot dusk lantern"
SITE = "https://nomic.example.org"  # $SCRIBA_PUBLIC_URL: where mailed links point
WEAK = {"en": "too easy to guess", "it": "troppo facile da indovinare",
        "de": "zu leicht zu erraten"}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('passwords') / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("suber", game_id="g", players=["Anna", "Bruno"], clock="real")
    with pytest.MonkeyPatch.context() as env:  # these tests sign in often, from one address
        env.setenv("SCRIBA_SIGNIN_LIMITS", "1000/minute")
        env.setenv("SCRIBA_SIGNIN_IP_LIMITS", "1000/minute")
        env.setenv("SCRIBA_PUBLIC_URL", SITE)
        server = Server(db)
    yield server, service
    server.stop()
    service.close()


def browser(server: Server, language: str = "en") -> httpx.Client:
    return httpx.Client(base_url=server.url, cookies={"scriba_lang": language})


def sign_in(server: Server, email: str, password: str) -> httpx.Response:
    client = browser(server)
    return client.post("/signin", data={"email": email, "password": password,
                                        "csrf_token": csrf_of(client.get("/signin").text)})


@pytest.mark.parametrize("language", ["it", "de", "en"])
def test_12345678_is_refused_in_the_readers_language(site, language) -> None:
    server, service = site
    email = f"{language}-{time.time_ns()}@example.org"
    token = service.seats.invite("g", email, f"Player{language.upper()}")
    client = browser(server, language)
    page = client.get(f"/invitations/{token}")
    refused = client.post(f"/invitations/{token}", data={
        "csrf_token": csrf_of(page.text), "password": "12345678"})
    assert refused.status_code == 422
    assert WEAK[language] in refused.text
    # zxcvbn's own advice is English: for English readers only.
    assert ("common password" in refused.text) == (language == "en")
    assert not service.seats.invitation(token).used
    taken = client.post(f"/invitations/{token}", data={
        "csrf_token": csrf_of(page.text), "password": PASSWORD})
    assert taken.status_code == 303
    # and the account page's change, in the same language
    csrf = csrf_of(client.get("/account").text)
    again = client.post("/account/password", data={
        "csrf_token": csrf, "current_password": PASSWORD, "new_password": "12345678"})
    assert again.status_code == 422 and WEAK[language] in again.text
    assert sign_in(server, email, PASSWORD).status_code == 303


def reset_links(service: Service, email: str) -> list[str]:
    """The paths of the reset links mailed to ``email`` (each on SITE)."""
    found = [re.search(r"(https?://[^/\s]+)(/password-reset/\S+)", m["body"])
             for m in service.outbox.messages(kind="password_reset") if m["recipient"] == email]
    assert all(match.group(1) == SITE for match in found)
    return [match.group(2) for match in found]


def test_a_reset_link_works_once_and_ends_every_session(site) -> None:
    server, service = site
    email = f"anna-{time.time_ns()}@example.org"
    service.accounts.create_account(email, "Anna", PASSWORD)
    elsewhere = browser(server)
    assert elsewhere.post("/signin", data={
        "email": email, "password": PASSWORD,
        "csrf_token": csrf_of(elsewhere.get("/signin").text)}).status_code == 303
    client = browser(server)
    csrf = csrf_of(client.get("/password-reset").text)
    asked = client.post("/password-reset", data={"csrf_token": csrf, "email": email},
                        headers={"Host": "evil.example"})  # the link stays on SITE
    unknown = client.post("/password-reset", data={"csrf_token": csrf,
                                                   "email": "nobody-here@example.org"})
    garbage = client.post("/password-reset", data={"csrf_token": csrf, "email": "<b>no"})
    # The answer never tells whether the address has an account.
    assert asked.status_code == unknown.status_code == garbage.status_code == 200
    assert asked.text == unknown.text == garbage.text
    assert "If an account has this address" in asked.text
    again = client.post("/password-reset", data={"csrf_token": csrf, "email": email})
    assert again.text == asked.text
    links = reset_links(service, email)
    assert len(links) == 1  # one mail per address and quarter of an hour
    link = links[0]
    form = client.get(link)
    assert form.status_code == 200 and email in form.text
    assert form.headers["referrer-policy"] == "no-referrer"
    weak = client.post(link, data={"csrf_token": csrf, "password": "12345678"})
    assert weak.status_code == 422 and "too easy to guess" in weak.text
    done = client.post(link, data={"csrf_token": csrf, "password": NEW_PASSWORD})
    assert done.status_code == 303 and done.headers["location"] == "/account"
    assert client.get("/account").status_code == 200  # signed in by the link
    assert elsewhere.get("/account").status_code == 303  # every other session ended
    assert sign_in(server, email, PASSWORD).status_code == 401
    assert sign_in(server, email, NEW_PASSWORD).status_code == 303
    stranger = browser(server)
    used = stranger.post(link, data={"csrf_token": csrf_of(stranger.get(
        "/password-reset").text), "password": "another quiet evening"})
    assert used.status_code == 410 and "already been used" in used.text
    assert browser(server).get(link).status_code == 410
    assert sign_in(server, email, NEW_PASSWORD).status_code == 303
    assert browser(server).get("/password-reset/" + "x" * 43).status_code == 404


def test_a_reset_link_expires_after_an_hour(site) -> None:
    server, service = site
    email = f"bruno-{time.time_ns()}@example.org"
    service.accounts.create_account(email, "Bruno", PASSWORD, language="de")
    client = browser(server, "de")
    csrf = csrf_of(client.get("/password-reset").text)
    client.post("/password-reset", data={"csrf_token": csrf, "email": email})
    [link] = reset_links(service, email)
    assert "innerhalb einer Stunde" in service.outbox.messages(kind="password_reset")[-1][
        "body"]  # the mail in the account's language
    with service.commands.store.session.begin() as session:  # an hour and a second later
        session.execute(update(PasswordResetRow).values(
            expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    expired = client.post(link,
                          data={"csrf_token": csrf, "password": NEW_PASSWORD})
    assert expired.status_code == 410 and "abgelaufen" in expired.text
    assert sign_in(server, email, PASSWORD).status_code == 303

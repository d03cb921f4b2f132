"""Sign-in limits against real ``scriba serve`` processes: counted per normalised address
and per client address before the password is checked, shared by every process on one
database, answered 429 with Retry-After and a sentence saying when to try again; waits
that grow rather than a lockout."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest
from serving import Server, csrf_of

from scriba.service import open_service
from scriba.service.ratelimit import client_key, signin_key

PASSWORD = "a-long-password-1"


def attempt(base: str, email: str, password: str, headers: dict[str, str] | None = None,
            cookies: dict[str, str] | None = None) -> httpx.Response:
    """One sign-in through the form, as a browser sends it."""
    with httpx.Client(base_url=base, timeout=60, headers=headers, cookies=cookies) as client:
        token = csrf_of(client.get("/signin").text)
        return client.post("/signin", data={"email": email, "password": password,
                                             "csrf_token": token, "next": "/"})


def burst(targets: list[tuple[str, str, str]]) -> list[httpx.Response]:
    """Sign-ins (server, email, password) sent all at once, each from its own browser."""
    clients = [httpx.Client(base_url=base, timeout=120) for base, _, _ in targets]
    tokens = [csrf_of(client.get("/signin").text) for client in clients]
    start = threading.Barrier(len(targets))
    answers: list[httpx.Response | None] = [None] * len(targets)

    def send(index: int) -> None:
        _, email, password = targets[index]
        start.wait()
        answers[index] = clients[index].post("/signin", data={
            "email": email, "password": password, "csrf_token": tokens[index], "next": "/"})

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(targets))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.close()
    assert all(answer is not None for answer in answers)
    return [answer for answer in answers if answer is not None]


def retry_after(answer: httpx.Response) -> int:
    assert answer.status_code == 429, answer.text[:300]
    return int(answer.headers["retry-after"])


def served(db: str, *args: str, **env: str) -> Server:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        return Server(db, *args)


def with_accounts(db: str, *emails: str) -> str:
    service = open_service(db)
    try:
        for email in emails:
            service.accounts.create_account(email, email.split("@")[0], PASSWORD)
    finally:
        service.close()
    return db


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The limits as shipped (5/minute;20/hour;100/day per address)."""
    db = with_accounts(f"sqlite:///{tmp_path_factory.mktemp('limits') / 'scriba.db'}",
                       "anna@example.org", "bruno@example.org", "carla@example.org")
    server = served(db)
    yield server
    assert "Traceback" not in server.stop()


def test_the_key_is_the_address_as_sign_in_reads_it() -> None:
    assert {signin_key(e) for e in ["anna@example.org", "anna@example.org.",
                                    " anna@Example.ORG.. "]} == {"anna@example.org"}
    assert signin_key("Not An Address") == "not an address"
    assert client_key("2001:db8:1:2:3:4:5:6") == client_key("2001:db8:1:2:ffff::1") \
        == "2001:db8:1:2::/64"
    assert client_key("::ffff:203.0.113.7") == "203.0.113.7"


def test_a_trailing_dot_is_the_same_address(default_server: Server) -> None:
    base = default_server.url
    for _ in range(5):
        assert attempt(base, "anna@example.org", "wrong password").status_code == 401
    # Each spelling that signs in as Anna shares her count: no fresh budget per dot.
    for spelling in ["anna@example.org.", "anna@example.org..", "anna@EXAMPLE.org.",
                     " anna@example.org "]:
        answer = attempt(base, spelling, PASSWORD)
        assert 0 < retry_after(answer) <= 60, spelling
        assert "Too many sign-in attempts; try again in" in answer.text
    italian = attempt(base, "anna@example.org", PASSWORD, cookies={"scriba_lang": "it"})
    assert "Troppi tentativi di accesso; riprova tra" in italian.text
    # Another address is not touched.
    assert attempt(base, "bruno@example.org", PASSWORD).status_code == 303


def test_the_right_password_gives_its_attempt_back(default_server: Server) -> None:
    # Eight sign-ins in a row where five attempts a minute are counted: only failures add up.
    for _ in range(8):
        assert attempt(default_server.url, "bruno@example.org", PASSWORD).status_code == 303


def test_racing_wrong_passwords_are_counted_before_they_are_checked(
        default_server: Server) -> None:
    answers = burst([(default_server.url, "carla@example.org", f"guess {n}")
                     for n in range(30)])
    statuses = Counter(answer.status_code for answer in answers)
    assert set(statuses) <= {401, 429} and statuses[401] <= 5, statuses
    waits = [retry_after(answer) for answer in answers if answer.status_code == 429]
    assert len(waits) >= 25
    # A short wait, not a quarter of an hour: the owner is slowed, not locked out.
    assert all(0 < wait <= 60 for wait in waits), waits
    owner = attempt(default_server.url, "carla@example.org", PASSWORD)
    assert 0 < retry_after(owner) <= 60


def test_the_owner_signs_in_once_the_short_wait_has_passed(tmp_path) -> None:
    db = with_accounts(f"sqlite:///{tmp_path / 'scriba.db'}", "dora@example.org")
    server = served(db, SCRIBA_SIGNIN_LIMITS="3 per 3 seconds;6 per hour")
    try:
        answers = burst([(server.url, "dora@example.org", f"guess {n}") for n in range(12)])
        assert Counter(a.status_code for a in answers)[401] <= 3
        assert all(retry_after(a) <= 3 for a in answers if a.status_code != 401)
        refused = attempt(server.url, "dora@example.org", PASSWORD)
        time.sleep(retry_after(refused))
        assert attempt(server.url, "dora@example.org", PASSWORD).status_code == 303
        # The waits grow: once the hour's 6 failures are spent, the wait is the hour's
        # (the right password gave its attempt back).
        time.sleep(3)
        for _ in range(3):
            assert attempt(server.url, "dora@example.org", "wrong again").status_code == 401
        time.sleep(3)
        longer = attempt(server.url, "dora@example.org", PASSWORD)
        assert 3 < retry_after(longer) <= 3600
    finally:
        assert "Traceback" not in server.stop()


def test_forwarded_addresses_count_only_from_configured_proxies(tmp_path) -> None:
    limits = {"SCRIBA_SIGNIN_IP_LIMITS": "3/minute;50/hour"}
    # Without --forwarded-allow-ips a made-up X-Forwarded-For is no fresh budget.
    plain = served(f"sqlite:///{tmp_path / 'plain.db'}", **limits)
    try:
        statuses = [attempt(plain.url, f"guess{n}@example.org", "wrong password",
                            headers={"X-Forwarded-For": f"198.51.100.{n}"}).status_code
                    for n in range(4)]
        assert statuses == [401] * 3 + [429]
    finally:
        plain.stop()
    # Behind a configured proxy each client has its own budget.
    proxied = served(f"sqlite:///{tmp_path / 'proxied.db'}", "--forwarded-allow-ips",
                     "127.0.0.1", **limits)
    try:
        spoofer = {"X-Forwarded-For": "203.0.113.7"}
        statuses = [attempt(proxied.url, f"guess{n}@example.org", "wrong password",
                            headers=spoofer).status_code for n in range(4)]
        assert statuses == [401] * 3 + [429]
        other = attempt(proxied.url, "someone@example.org", "wrong password",
                        headers={"X-Forwarded-For": "203.0.113.8"})
        assert other.status_code == 401
    finally:
        proxied.stop()


def test_every_process_on_one_database_shares_the_count(postgres_url: str) -> None:
    email = "limits-shared@example.org"
    service = open_service(postgres_url)
    try:
        if service.accounts.by_email(email) is None:
            service.accounts.create_account(email, "Shared", PASSWORD)
    finally:
        service.close()
    # Limits of their own: other tests' sign-ins on this database count elsewhere.
    env = {"SCRIBA_SIGNIN_LIMITS": "5/minute;21/hour", "SCRIBA_SIGNIN_IP_LIMITS": "99/minute"}
    first, second = served(postgres_url, **env), served(postgres_url, **env)
    try:
        answers = burst([(server.url, email, f"guess {n}")
                         for n in range(10) for server in (first, second)])
        statuses = Counter(answer.status_code for answer in answers)
        assert set(statuses) <= {401, 429} and statuses[401] <= 5, statuses
        assert attempt(first.url, email, PASSWORD).status_code == 429
        assert attempt(second.url, email, PASSWORD).status_code == 429
    finally:
        for server in (first, second):
            assert "Traceback" not in server.stop()

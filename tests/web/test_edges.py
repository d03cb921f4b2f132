"""The quieter edges of a real ``scriba serve``: no 5xx for any query value, the security
headers on every answer, request bodies that must arrive in time, dry runs for the game's
own people, and a daily allowance of games started from the web."""

from __future__ import annotations

import base64
import hashlib
import importlib
import pkgutil
import re
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute
from serving import Server, csrf_of, run_scriba

from scriba.service import open_service

PASSWORD = "a-long-password-1"
GAME = "edge"
ENACT = {"enact": {"title": "Kites", "text": "Players may bring kites to the table."}}
TEMPLATES = Path(__file__).resolve().parents[2] / "src" / "scriba" / "web" / "templates"
# What a hostile or careless client puts in a query: nothing, control characters, markup,
# numbers out of any range, dates that are none, a long value, bidi and zero-width marks.
JUNK = ["", "\x00", "\x1b[2J\x7f", "-1", "1e309", "9" * 40, "2026-03-01T25:61:00+99:00",
        "<script>alert(1)</script>", "\u202eevil\u200b", "x" * 8000]
RAW = ["%FF%FE", "%", "%zz"]  # not even percent-encoding, sent as they are


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    db = f"sqlite:///{tmp_path_factory.mktemp('edges') / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("suber", game_id=GAME, name="Edges", players=["Anna", "Bruno"],
                                 clock="real")
    service.commands.create_game("suber", game_id="other", players=["Carla"], clock="real")
    assert service.commands.perform(GAME, "Anna", "propose",
                                    {"label": "a1", "changes": [ENACT]}).accepted
    accounts = service.accounts
    seats = service.seats
    for email in ("anna@example.org", "officer@example.org", "reader@example.org",
                  "maker@example.org"):
        accounts.create_account(email, email.split("@")[0], PASSWORD)
    seats.seat(GAME, "Anna", "anna@example.org")
    seats.set_officer(GAME, accounts.by_email("officer@example.org").id)
    tokens = {"anna": seats.new_token(GAME, "Anna"),
              "other": seats.new_token("other", "Carla")}
    rule = next(r["id"] for r in service.reads.rules_at(GAME) if r.get("in_force"))
    service.close()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCRIBA_GAMES_PER_DAY", "2")
        server = Server(db, "--body-timeout", "2")
    yield {"server": server, "db": db, "tokens": tokens, "rule": str(rule)}
    assert "Traceback" not in server.stop()


def signed_in(base: str, email: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60)
    answer = client.post("/signin", data={"email": email, "password": PASSWORD,
                                          "csrf_token": csrf_of(client.get("/signin").text),
                                          "next": "/"})
    assert answer.status_code == 303, answer.text[:300]
    return client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- query values ----------------------------------------------------------------------
@pytest.mark.parametrize("path", [f"/api/v1/games/{GAME}/rules?at=",
                                  f"/api/v1/games/{GAME}/rules-diff?since=",
                                  f"/api/v1/games/{GAME}/rules-diff?since=2026-01-01&until="])
def test_an_empty_date_is_refused_with_a_sentence(site, path) -> None:
    answer = httpx.get(site["server"].url + path, timeout=30)
    assert answer.status_code == 422, answer.text[:300]
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["detail"].startswith("Give a date (write e.g. 2026-03-04")


def test_an_empty_date_on_the_pages_is_a_page_with_the_reason(site) -> None:
    answer = httpx.get(f"{site['server'].url}/games/{GAME}/rules/diff?since=&lang=de",
                       timeout=30)
    assert answer.status_code == 400
    assert '<p class="refusal">Gib das Datum an' in answer.text


def get_routes() -> list[tuple[str, list[str]]]:
    """Every GET route (API, sign-in, pages) with the query parameters it reads."""
    from scriba.web import api, auth, pages, reads_api

    routers = [reads_api.router, api.router, auth.router] + [
        getattr(importlib.import_module(f"scriba.web.pages.{info.name}"), "router", None)
        for info in pkgutil.iter_modules(pages.__path__)]
    routes = []
    for router in filter(None, routers):
        for route in router.routes:
            if isinstance(route, APIRoute) and "GET" in route.methods:
                names = [field.alias for field in route.dependant.query_params]
                # Every page reads ?lang= through one function: tried on the index only.
                extra = ["lang"] if route.path == "/" else []
                if route.path.endswith("/officer"):
                    extra.append("invited")  # the officer page reads it from the query
                routes.append((route.path, list(dict.fromkeys(names + extra))))
    return routes


def test_no_query_value_makes_a_server_error(site) -> None:
    routes = get_routes()
    assert any(path.startswith("/api/") and names for path, names in routes)
    assert any(path.startswith("/games/") and "since" in names for path, names in routes)
    fill = {"game": GAME, "game_id": GAME, "rule": site["rule"], "rule_id": site["rule"],
            "proposal": "a1", "ref": "a1", "token": "t" * 43}
    officer = signed_in(site["server"].url, "officer@example.org")
    checked = 0
    for template, names in routes:
        path = re.sub(r"\{(\w+)\}", lambda m: fill.get(m.group(1), "x"), template)
        for name in names:
            queries: list[Any] = [{name: value} for value in JUNK] + \
                [f"{name}={raw}" for raw in RAW] + [[(name, "a"), (name, "b")]]
            for query in queries:
                if isinstance(query, str):
                    answer = officer.get(f"{path}?{query}")
                else:
                    answer = officer.get(path, params=query)
                checked += 1
                where = f"{path} {str(query)[:80]!r}"
                assert answer.status_code < 500, where + " " + answer.text[:300]
                if answer.status_code >= 400 and path.startswith("/api/"):
                    assert answer.headers["content-type"] == "application/problem+json"
                    assert answer.json()["detail"].strip(), where
                elif answer.status_code >= 400:
                    assert answer.headers["content-type"].startswith("text/html"), where
    assert checked > 250


# --- headers ---------------------------------------------------------------------------
def assert_secured(answer: httpx.Response) -> None:
    policy = answer.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, policy
    assert "unsafe-inline" not in policy and "script-src 'self';" in policy
    assert answer.headers.get("x-frame-options") == "DENY"
    assert answer.headers.get("referrer-policy") == "same-origin"
    assert answer.headers.get("x-content-type-options") == "nosniff"


def test_security_headers_on_pages_api_and_errors(site) -> None:
    base = site["server"].url
    for path, status in [(f"/games/{GAME}", 200), ("/api/v1/games", 200),
                         ("/static/style.css", 200), ("/api/v1/games/nope", 404),
                         ("/games/nope", 404), (f"/games/{GAME}/officer", 403)]:
        answer = httpx.get(base + path, timeout=30)
        assert answer.status_code == status, path
        assert_secured(answer)
    too_big = httpx.post(f"{base}/api/v1/games/{GAME}/commands",
                         content=b"{" + b" " * (2 * 1024 * 1024) + b"}",
                         headers={"Content-Type": "application/json"}, timeout=30)
    assert too_big.status_code == 413
    assert_secured(too_big)


def test_the_api_docs_may_run_their_own_inline_script_only(site) -> None:
    answer = httpx.get(site["server"].url + "/api/v1/docs", timeout=30)
    assert answer.status_code == 200
    policy = answer.headers["content-security-policy"]
    scripts = re.findall(r"<script>(.*?)</script>", answer.text, re.DOTALL)
    assert scripts
    for script in scripts:
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    script_src = re.search(r"script-src ([^;]*)", policy).group(1)
    assert "unsafe-inline" not in script_src and "frame-ancestors 'none'" in policy
    assert answer.headers["x-frame-options"] == "DENY"


def test_templates_hold_no_inline_script_style_or_handler() -> None:
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), template
        assert not re.search(r"<style\b|\sstyle=|\son[a-z]+=|javascript:", text, re.I), \
            template


# --- slow bodies -----------------------------------------------------------------------
def _received(sock: socket.socket) -> bytes:
    """What the server sent; nothing once it closed. A close that finds a trickled byte
    unread is a reset (RST), which is closed too."""
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def test_a_trickling_body_is_cut_off_with_408(site) -> None:
    port = site["server"].port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"POST /api/v1/games/{GAME}/commands HTTP/1.1\r\nHost: x\r\n"
                     "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
                     .encode())
        started = time.monotonic()
        answer = b""
        while time.monotonic() - started < 15 and b"\r\n\r\n" not in answer:
            readable, _, _ = select.select([sock], [], [], 0.5)
            if readable:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
            else:
                sock.sendall(b" ")  # a byte every half second: never the whole body
        elapsed = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert 1.5 < elapsed < 8, elapsed  # the server's bound is 2 s (--body-timeout 2)
        head = answer.split(b"\r\n\r\n")[0].decode().lower()
        assert "connection: close" in head and "x-frame-options: deny" in head
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # and the connection is closed
            readable, _, _ = select.select([sock], [], [], 0.5)
            if readable and not _received(sock):
                break
        else:
            pytest.fail("the connection stayed open after the 408")


# --- dry runs --------------------------------------------------------------------------
def test_a_dry_run_needs_a_seat_in_the_game(site) -> None:
    base, tokens = site["server"].url, site["tokens"]
    url = f"{base}/api/v1/games/{GAME}/proposals/a1/dry-run"
    anonymous = httpx.post(url, timeout=30)
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"] == "application/problem+json"
    assert httpx.post(url, headers=bearer(tokens["other"]), timeout=30).status_code == 403
    reader = signed_in(base, "reader@example.org")
    csrf = csrf_of(reader.get("/account").text)
    refused = reader.post(f"/api/v1/games/{GAME}/proposals/a1/dry-run",
                          headers={"X-CSRF-Token": csrf})
    assert refused.status_code == 403 and "players and the officer" in refused.json()["detail"]
    done = httpx.post(url, headers=bearer(tokens["anna"]), timeout=60)
    assert done.status_code == 200 and done.json()["rules_after"], done.text[:300]
    # The page shows the dry run to the game's players and officer only.
    page = f"/games/{GAME}/proposals/a1"
    assert 'class="dryrun"' not in httpx.get(base + page, timeout=60).text
    assert 'class="dryrun"' not in reader.get(page).text
    assert 'class="dryrun"' in signed_in(base, "anna@example.org").get(page).text
    assert 'class="dryrun"' in signed_in(base, "officer@example.org").get(page).text


# --- starting games --------------------------------------------------------------------
def test_games_started_from_the_web_are_limited_per_account(site) -> None:
    base = site["server"].url
    maker = signed_in(base, "maker@example.org")

    def start(game_id: str) -> httpx.Response:
        csrf = csrf_of(maker.get("/new-game").text)
        return maker.post("/new-game", data={"csrf_token": csrf, "ruleset": "suber",
                                             "game": game_id, "name": game_id,
                                             "clock": "real"})

    assert start("made-1").status_code == 303
    assert start("made-2").status_code == 303
    refused = start("made-3")
    assert refused.status_code == 429
    assert 0 < int(refused.headers["retry-after"]) <= 86400
    assert "You have started as many games as a day allows; try again in" in refused.text
    assert maker.get("/games/made-3").status_code == 404
    # Another account has its own allowance; the officer's CLI has none.
    other = signed_in(base, "reader@example.org")
    csrf = csrf_of(other.get("/new-game").text)
    assert other.post("/new-game", data={"csrf_token": csrf, "ruleset": "suber",
                                         "game": "made-by-reader", "clock": "real"}
                      ).status_code == 303
    run_scriba("new", "suber", "--game", "made-3", "-p", "Anna", "--db", site["db"])
    assert maker.get("/games/made-3").status_code == 200

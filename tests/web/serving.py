"""A real ``scriba serve`` process on loopback for the HTTP and page tests (no ASGI
shortcuts), and what those tests do against it: sign in, read a form's CSRF token, run the
CLI, publish."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

SCRIBA = str(Path(sys.executable).with_name("scriba"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``scriba serve`` on a free port; ``url`` once it answers; ``stop()`` ends it and
    returns what it printed, which ``log`` (a file of the test's, if given) also keeps."""

    def __init__(self, db_url: str, *args: str, log: Path | None = None,
                 tick: float = 1.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.output = ""
        # A file, not a pipe: a server that prints much never blocks on a full pipe (closed
        # by stop()).
        self._out = log.open("w+b") if log else tempfile.TemporaryFile()  # noqa: SIM115
        env = {**os.environ, "SCRIBA_TICK_INTERVAL": str(tick), "SCRIBA_LOG": "warning"}
        self.process = subprocess.Popen(
            [SCRIBA, "serve", "--port", str(self.port), "--db", db_url, *args],
            stdout=self._out, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("scriba serve ended:\n" + self.stop())
            try:
                if httpx.get(self.url + "/api/v1/games", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError("scriba serve did not answer within 60 s:\n" + self.stop())

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if not self._out.closed:
            self._out.seek(0)
            self.output = self._out.read().decode(errors="replace")
            self._out.close()
        return self.output


def run_scriba(*args: str) -> str:
    done = subprocess.run([SCRIBA, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def published(game: str, db: str, out: Path) -> list[Path]:
    """``scriba publish`` run for real into ``out``: the pages and feeds it wrote."""
    subprocess.run([SCRIBA, "publish", game, "--out", str(out), "--db", db],
                   check=True, capture_output=True, timeout=120)
    return sorted(p for p in out.rglob("*") if p.suffix in (".html", ".atom"))


CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    match = CSRF.search(html)
    assert match, "no CSRF token in the page"
    return match.group(1)


def signed_in(base: str, email: str, password: str) -> httpx.Client:
    """An HTTP client with a session: the sign-in form filled as a browser would."""
    client = httpx.Client(base_url=base, timeout=30, follow_redirects=False)
    page = client.get("/signin")
    answer = client.post("/signin", data={"email": email, "password": password,
                                          "csrf_token": csrf_of(page.text), "next": "/"})
    assert answer.status_code == 303, answer.text[:500]
    return client


def seated_game(folder: Path, ruleset: str, game: str, name: str, players: tuple[str, ...],
                email: Callable[[str], str], password: str) -> Server:
    """A game of ``ruleset`` whose players each have an account (``email(player)``,
    ``password``) and a seat, served by a real ``scriba serve`` (stop it when done)."""
    from scriba.service import open_service  # noqa: PLC0415 - the server's own process

    db_url = f"sqlite:///{folder / f'{game}.db'}"
    service = open_service(db_url)
    service.commands.create_game(ruleset, game_id=game, name=name, players=list(players),
                                 start="2026-03-01T10:00:00Z")
    for player in players:
        service.accounts.create_account(email(player), player, password)
        service.seats.seat(game, player, email(player))
    service.close()
    return Server(db_url, log=folder / "server.log")

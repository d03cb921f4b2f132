"""A real ``scriba serve`` process on loopback, for the HTTP tests (no ASGI shortcuts)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

SCRIBA = Path(sys.executable).parent / "scriba"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """``scriba serve`` on a free port; ``url`` once it answers; ``stop()`` ends it."""

    def __init__(self, db_url: str, *args: str, tick: float = 1.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "SCRIBA_TICK_INTERVAL": str(tick), "SCRIBA_LOG": "warning"}
        self.process = subprocess.Popen(
            [str(SCRIBA), "serve", "--port", str(self.port), "--db", db_url, *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.output = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("scriba serve ended: " + self.process.stdout.read())
            try:
                if httpx.get(self.url + "/api/v1/games", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("scriba serve did not answer within 60 s")

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.output = self.process.stdout.read() if self.process.stdout else ""
        return self.output


def run_scriba(*args: str) -> str:
    done = subprocess.run([str(SCRIBA), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def csrf_from(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "no CSRF token in the form"
    return match.group(1)

"""A host for many games, measured as players meet it: over HTTP, against a real
``scriba serve`` process (``scriba bench --json``; nothing here asserts a speed).

- ``games16_votes_per_s`` / ``games1_votes_per_s``: one HTTP client per game, each voting
  in its own Agora game with its players' API tokens, for a few seconds, every game
  warmed first (a second of votes in each) as on a server in use.
- ``http_vote_p50_ms`` / ``http_vote_p99_ms``: one client voting in one game, one request
  after another; ``http_floor_p50_ms``: the same client against a bare FastAPI app on the
  same machine that does one INSERT+COMMIT per request (:mod:`scriba.bench.floor`).
- ``home_ms_by_games``: the games' listing (``/``) with 3 and 1,000 games on the server.
- ``idle_cpu_pct_by_games``: the server's CPU (and its rule workers') in 10 s of no
  requests, with 3 and 1,000 games, as a percentage of one core.
- ``chronicle_kb_by_size`` / ``chronicle_ms_by_size``: a game's chronicle page with 100 and
  2,000 resolved proposals.
- ``mail_receive_ms``: ``scriba mail receive`` taking one letter on standard input, as a
  mail server's pipe delivers it (a process per letter).
- ``pg_games16_votes_per_s_by_servers`` (only given a PostgreSQL URL): 16 games' clients
  against 1 and then 2 ``scriba serve`` processes on that one database, each game's client
  sent to one of them (game i to server i mod n, as a proxy hashing the game's path would).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCRIBA = [str(Path(sys.executable).parent / "scriba")]
VOTERS = 8
PROPOSALS = 20


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextlib.contextmanager
def _process(command: list[str], probe: str, env: dict[str, str] | None = None
             ) -> Iterator[subprocess.Popen[bytes]]:
    """A server process, yielded once ``probe`` (a URL) answers; stopped after."""
    import httpx

    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "SCRIBA_LOG": "warning", **(env or {})})
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError("the server ended: " + process.stderr.read().decode()[-2000:])
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(probe, timeout=5).status_code < 500:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not answer within 120 s")
            time.sleep(0.2)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.contextmanager
def serving(db_url: str) -> Iterator[str]:
    """``scriba serve`` on ``db_url`` and a free port: its base URL."""
    port = _free_port()
    with _process([*SCRIBA, "serve", "--db", db_url, "--port", str(port)],
                  f"http://127.0.0.1:{port}/api/v1/games"):
        yield f"http://127.0.0.1:{port}"


# --- games and the players' tokens ---------------------------------------------------------
def voting_games(db_url: str, count: int, prefix: str) -> dict[str, list[str]]:
    """``count`` Agora games with VOTERS voters each and PROPOSALS distributed proposals:
    game id -> its voters' API tokens."""
    from scriba.bench.writers import setup_game
    from scriba.service import open_service

    games = {}
    for index in range(count):
        game_id, _ = setup_game(db_url, VOTERS, game_id=f"{prefix}{index}",
                                proposals=PROPOSALS)
        games[game_id] = []
    service = open_service(db_url)
    try:
        for game_id in games:
            for voter in range(VOTERS):
                player = f"Voter{voter}"
                service.seats.seat(game_id, player, f"{game_id}-{voter}@bench.invalid")
                games[game_id].append(service.seats.new_token(game_id, player))
    finally:
        service.close()
    return games


def _vote_loop(clients: list[Any], game_id: str, until: list[float],
               latencies: list[float], counts: list[int]) -> None:
    n = accepted = 0
    while time.monotonic() < until[0]:
        n += 1
        body = {"action": "vote", "args": {"proposal": 9001 + n % PROPOSALS,
                                           "choice": ("FOR", "AGAINST", "PRESENT")[n % 3]}}
        started = time.perf_counter()
        answer = clients[n % len(clients)].post(f"/api/v1/games/{game_id}/commands",
                                                json=body)
        latencies.append(time.perf_counter() - started)
        accepted += answer.status_code == 200
    counts.append(accepted)


def votes_per_s(base: str | list[str], games: dict[str, list[str]],
                seconds: float) -> dict[str, Any]:
    """One client per game, all at once: accepted votes per second, latencies. Given
    several servers' base URLs, game i's client goes to server i mod their number. The
    clients are made before the clock starts (making 128 of them takes a while)."""
    import httpx

    bases = [base] if isinstance(base, str) else base
    clients = {game: [httpx.Client(base_url=bases[index % len(bases)], timeout=60,
                                   headers={"Authorization": f"Bearer {token}"})
                      for token in tokens]
               for index, (game, tokens) in enumerate(games.items())}
    until = [float("inf")]  # set once every thread is ready to go
    latencies: list[float] = []
    counts: list[int] = []
    threads = [threading.Thread(target=_vote_loop,
                                args=(clients[game], game, until, latencies, counts))
               for game in games]
    try:
        until[0] = time.monotonic() + seconds
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for game_clients in clients.values():
            for client in game_clients:
                client.close()
    return {"votes_per_s": round(sum(counts) / seconds, 1),
            "p50_ms": round(1000 * statistics.median(latencies), 2),
            "p99_ms": round(1000 * _percentile(latencies, 0.99), 2)}


# --- the floor: a bare app doing one INSERT+COMMIT --------------------------------------
def floor_p50_ms(folder: Path, requests: int = 400) -> float:
    import httpx

    port = _free_port()
    env = {"SCRIBA_FLOOR_DB": f"sqlite:///{folder / 'floor.db'}"}
    with _process([sys.executable, "-m", "uvicorn", "scriba.bench.floor:app", "--port",
                   str(port), "--log-level", "warning"],
                  f"http://127.0.0.1:{port}/", env), \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        samples = []
        for n in range(requests):
            started = time.perf_counter()
            client.post("/insert", json={"n": n, "text": "x" * 200})
            samples.append(time.perf_counter() - started)
    return 1000 * statistics.median(samples[requests // 10:])


# --- many idle games ---------------------------------------------------------------------
def copies_of_a_game(db_url: str, count: int) -> None:
    """``count`` small games, each a copy of one played Suber game's log (made through
    the store: creating a thousand games through the rules takes minutes)."""
    from scriba.service import open_service

    service = open_service(db_url)
    try:
        created = service.commands.create_game(
            "suber", game_id="model", start="2026-01-05T09:00:00Z",
            players=["Anna", "Bruno", "Carla"])
        text = json.dumps(service.reads.log(created.game_id))
        for index in range(count - 1):
            game_id = f"copy{index:04d}"
            events = json.loads(text.replace('"model"', json.dumps(game_id)))
            service.commands.store.create_game(game_id, f"Copy {index}", "suber", events)
    finally:
        service.close()


def _cpu_seconds(pid: int) -> float:
    """CPU time of a process and its children (the rule workers), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:  # fields[1]: the parent's pid
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def listing_and_idle(folder: Path, games: int, idle_seconds: float = 10.0
                     ) -> tuple[float, float]:
    """The games' listing's p50 (ms) and the idle server's CPU (% of a core)."""
    import httpx

    db_url = f"sqlite:///{folder / f'idle{games}.db'}"
    copies_of_a_game(db_url, games)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with _process([*SCRIBA, "serve", "--db", db_url, "--port", str(port)],
                  base + "/api/v1/games") as server, \
            httpx.Client(base_url=base, timeout=120) as client:
        client.get("/")  # warm
        samples = []
        for _ in range(7):
            started = time.perf_counter()
            client.get("/")
            samples.append(time.perf_counter() - started)
        time.sleep(2)  # whatever the start-up left to do
        before, began = _cpu_seconds(server.pid), time.monotonic()
        time.sleep(idle_seconds)
        cpu = (_cpu_seconds(server.pid) - before) / (time.monotonic() - began)
    return 1000 * statistics.median(samples), 100 * cpu


# --- the chronicle -----------------------------------------------------------------------
def chronicle_page(folder: Path, resolved: int) -> tuple[float, float]:
    """The chronicle page of a game with ``resolved`` resolved proposals: KB, ms (p50)."""
    import httpx

    from scriba.bench.sizes import build_agora_game
    from scriba.service import open_service

    db_url = f"sqlite:///{folder / f'chronicle{resolved}.db'}"
    service = open_service(db_url)
    try:
        build_agora_game(service, "chronicle", resolved)
    finally:
        service.close()
    with serving(db_url) as base, httpx.Client(base_url=base, timeout=120) as client:
        client.get("/games/chronicle/chronicle")  # warm: the log read once
        samples, size = [], 0
        for _ in range(5):
            started = time.perf_counter()
            page = client.get("/games/chronicle/chronicle")
            samples.append(time.perf_counter() - started)
            size = len(page.content)
    return size / 1024, 1000 * statistics.median(samples)


# --- a letter through a pipe -------------------------------------------------------------
LETTER = (b"From: someone@example.org\r\nTo: nobody@scriba.invalid\r\n"
          b"Subject: hello\r\nMessage-ID: <bench-%d@example.org>\r\n\r\nvote 1 yes\r\n")


def mail_receive_ms(folder: Path, letters: int = 5) -> float:
    db_url = f"sqlite:///{folder / 'mail.db'}"
    subprocess.run([*SCRIBA, "db", "upgrade", "--db", db_url], check=True,
                   capture_output=True)
    samples = []
    for n in range(letters):
        started = time.perf_counter()
        subprocess.run([*SCRIBA, "mail", "receive", "--db", db_url], input=LETTER % n,
                       capture_output=True)
        samples.append(time.perf_counter() - started)
    return 1000 * statistics.median(samples)


def servers_on_postgres(pg_url: str, seconds: float = 5.0,
                        say: Callable[[str], None] = print) -> dict[str, float]:
    """16 games on one PostgreSQL database, served by 1 and then by 2 processes: votes/s
    by the number of servers. The games are new ones (a fresh prefix) in that database.
    Taken in turn, twice, the better of each kept (as the writers' figures are): the two
    cores are busy either way, and one timing of 5 s mostly measures the neighbours."""
    import uuid

    games = voting_games(pg_url, 16, f"pg{uuid.uuid4().hex[:6]}-")
    by_servers: dict[str, float] = {}
    for count in (1, 2, 1, 2):
        with contextlib.ExitStack() as stack:
            bases = [stack.enter_context(serving(pg_url)) for _ in range(count)]
            votes_per_s(bases, games, 1.0)  # warm: every server's rule workers started
            measured = votes_per_s(bases, games, seconds)["votes_per_s"]
        by_servers[str(count)] = max(by_servers.get(str(count), 0.0), measured)
        say(f"16 games on PostgreSQL, {count} server process(es): {measured} votes/s")
    return by_servers


def run(say: Callable[[str], None] = print, seconds: float = 5.0) -> dict[str, Any]:
    """The host's figures (see the module's docstring), measured in one run."""
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="scriba-host-bench-") as name:
        folder = Path(name)
        db_url = f"sqlite:///{folder / 'games.db'}"
        games = voting_games(db_url, 16, "h")
        with serving(db_url) as base:
            one = dict(list(games.items())[:1])
            # Warm, as a server in use is: each game read, its rule workers started and
            # its rules compiled before the clock (else a 16-game window also times
            # fifteen games' start-up, which a busy server paid long before).
            votes_per_s(base, games, 1.0)
            votes_per_s(base, one, 1.0)
            single = votes_per_s(base, one, seconds)
            sixteen = votes_per_s(base, games, seconds)
            alone = votes_per_s(base, one, seconds)
        figures["games1_votes_per_s"] = single["votes_per_s"]
        figures["games16_votes_per_s"] = sixteen["votes_per_s"]
        figures["games16_p99_ms"] = sixteen["p99_ms"]
        figures["http_vote_p50_ms"] = alone["p50_ms"]
        figures["http_vote_p99_ms"] = alone["p99_ms"]
        say(f"HTTP votes: 1 game {single['votes_per_s']}/s, 16 games "
            f"{sixteen['votes_per_s']}/s (p99 {sixteen['p99_ms']} ms); one client "
            f"p50 {alone['p50_ms']} ms, p99 {alone['p99_ms']} ms")
        figures["http_floor_p50_ms"] = round(floor_p50_ms(folder), 2)
        say(f"a bare FastAPI app's INSERT+COMMIT: p50 {figures['http_floor_p50_ms']} ms")
        home, idle = {}, {}
        for count in (3, 1000):
            home[str(count)], idle[str(count)] = listing_and_idle(folder, count)
            say(f"{count} games: listing {home[str(count)]:.1f} ms, idle CPU "
                f"{idle[str(count)]:.2f} % of a core")
        figures["home_ms_by_games"] = {k: round(v, 2) for k, v in home.items()}
        figures["idle_cpu_pct_by_games"] = {k: round(v, 2) for k, v in idle.items()}
        kb, ms = {}, {}
        for resolved in (100, 2000):
            kb[str(resolved)], ms[str(resolved)] = chronicle_page(folder, resolved)
            say(f"chronicle of a game with {resolved} resolved proposals: "
                f"{kb[str(resolved)]:.0f} KB in {ms[str(resolved)]:.0f} ms")
        figures["chronicle_kb_by_size"] = {k: round(v, 1) for k, v in kb.items()}
        figures["chronicle_ms_by_size"] = {k: round(v, 1) for k, v in ms.items()}
        figures["mail_receive_ms"] = round(mail_receive_ms(folder), 1)
        say(f"a letter through scriba mail receive: {figures['mail_receive_ms']} ms")
    return figures


if __name__ == "__main__":
    print(json.dumps(run(say=lambda line: print(line, file=sys.stderr)), indent=1))

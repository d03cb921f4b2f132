"""The pipe (``scriba mail receive``, a process per letter): on SQLite it keeps the letter
with the standard library and exits; the next intake round decides it, exactly once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from scriba.mail.intake import Intake
from scriba.service import Service

from .conftest import DOMAIN, letter
from .helpers import decameronomic, running
from .helpers import personal as personal_address
from .smtp_parts import MailServer

# Prints the modules loaded when the process ends: what the pipe's start-up imported.
PIPE = ("import atexit, sys\n"
        "atexit.register(lambda: print('MODULES', *sorted(sys.modules), file=sys.stderr))\n"
        "from scriba.cli.main import main\n"
        "main()\n")
# What only deciding a letter needs (the service, the database toolkit, the typer app's
# parameter adapters, the rule engine).
NOT_NEEDED = ("sqlalchemy", "pydantic", "scriba.service.assembly", "scriba.kernel",
              "scriba.rulecode", "scriba.store", "scriba.mail.intake")


@pytest.fixture
def game(mail_service: Service) -> Service:
    decameronomic(mail_service)
    return mail_service


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    yield from running(MailServer())


def _env(**more: str) -> dict[str, str]:
    return {**os.environ, "SCRIBA_MAIL_DOMAIN": DOMAIN, **more}


def _pipe(db: str, raw: bytes, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", PIPE, "mail", "receive", "--db", db,
                           "--from", "bruno@players.test"],
                          input=raw, capture_output=True, env=env or _env(), timeout=120)


def _modules(done: subprocess.CompletedProcess[bytes]) -> set[str]:
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


def test_a_piped_letter_is_kept_without_the_service_and_decided_by_mail_send(
        game: Service, mail_server: MailServer) -> None:
    db = game.commands.store.url
    personal = personal_address(Intake(game), "Bruno")
    raw = letter("bruno@players.test", personal, "proposta: Saluti\nlabel: p1\nTesto.\n")
    done = _pipe(db, raw)  # no server runs
    assert done.returncode == 0 and done.stdout.startswith(b"kept <"), done.stderr
    loaded = _modules(done)
    assert "scriba.service.inbound" in loaded  # the test sees the pipe's path
    assert [m for m in loaded if any(m == n or m.startswith(n + ".") for n in NOT_NEEDED)] \
        == []
    assert game.reads.proposals("dec") == []  # kept, not decided
    [kept] = game.mailroom.letters()
    assert (kept["status"], kept["channel"], kept["sender"]) == ("kept", "pipe",
                                                                "bruno@players.test")

    # the next `scriba mail send` (a cron job beside the pipe) decides it and sends its reply
    sent = subprocess.run([sys.executable, "-c", "from scriba.cli.main import main; main()",
                           "mail", "send", "--db", db], capture_output=True, timeout=120,
                          env=_env(SCRIBA_SMTP=mail_server.url()))
    assert sent.returncode == 0, sent.stderr
    assert [p["label"] for p in game.reads.proposals("dec")] == ["p1"]
    [reply] = mail_server.collector.to("bruno@players.test")
    assert "proposta 1" in reply.get_content()
    # decided once: the same letter again, and another round, change nothing
    assert _pipe(db, raw).stdout.startswith(b"duplicate")
    assert Intake(game).decide_kept() == []
    assert [p["label"] for p in game.reads.proposals("dec")] == ["p1"]
    assert [x["status"] for x in game.mailroom.letters()] == ["decided"]


@pytest.mark.parametrize("raw", [
    b"\xff\xfe\x00\x01 not a letter \xc3\x28\r\n\r\n\x00" * 50,  # no headers, not UTF-8
    b"From: <script>@x\r\nMessage-ID: \r\n\tbroken\r\nSubject: =?bogus?Q?x?=\r\n\r\n"
    b"\xe9\r\n" * 30,
])
def test_a_hostile_letter_by_the_pipe_is_kept_then_refused_harmlessly(
        game: Service, raw: bytes) -> None:
    done = _pipe(game.commands.store.url, raw)
    assert done.returncode == 0 and done.stdout.startswith(b"kept "), done.stderr
    [received] = Intake(game).decide_kept()
    assert received.status in ("refused", "ignored")
    assert game.reads.proposals("dec") == []


def test_a_letter_too_large_is_refused_at_once_by_the_whole_intake(game: Service) -> None:
    raw = letter("bruno@players.test", personal_address(Intake(game), "Bruno"), "x" * 4000)
    done = _pipe(game.commands.store.url, raw, _env(SCRIBA_MAIL_MAX_BYTES="2000"))
    assert done.returncode == 0 and done.stdout.startswith(b"refused"), done.stderr
    assert [x["status"] for x in game.mailroom.letters()] == ["refused"]


def test_a_round_leaves_a_letter_being_decided_to_its_worker(game: Service) -> None:
    """decide_kept runs beside the SMTP intake: a letter another worker has claimed is
    not reopened by it (only recover(), at start, takes those back)."""
    intake = Intake(game)
    raw = letter("bruno@players.test", personal_address(intake, "Bruno"),
                 "proposta: Saluti\nlabel: p1\nTesto.\n")
    assert _pipe(game.commands.store.url, raw).returncode == 0
    [letter_id] = game.mailroom.unfinished()
    assert game.mailroom.claim(letter_id)  # another worker is deciding it
    assert intake.decide_kept() == []
    assert game.reads.proposals("dec") == []
    assert [r.status for r in intake.recover()] == ["decided"]  # as after a crash
    assert [p["label"] for p in game.reads.proposals("dec")] == ["p1"]


def test_the_pipe_to_a_database_without_its_schema_asks_to_try_again(tmp_path: object) -> None:
    from pathlib import Path

    empty = Path(str(tmp_path)) / "empty.db"
    empty.write_bytes(b"")
    done = _pipe(f"sqlite:///{empty}", letter("a@players.test", "scriba@x", "hello"))
    assert done.returncode == 75, done.stderr  # EX_TEMPFAIL: the mail server retries
    missing = Path(str(tmp_path)) / "no" / "such.db"
    assert _pipe(f"sqlite:///{missing}", b"From: a@b\r\n\r\nx").returncode == 75
    assert not missing.parent.exists()  # nothing made on a wrong path


def test_the_pipe_on_postgresql_keeps_through_the_driver_alone(postgres_url: str) -> None:
    from datetime import UTC, datetime

    from scriba.service import open_service

    service = open_service(postgres_url)
    try:
        game = f"pipe{datetime.now(UTC).strftime('%H%M%S%f')}"
        emails = decameronomic(service, game, domain=f"{game}.test")
        intake = Intake(service)
        raw = letter(emails["Bruno"], personal_address(intake, "Bruno", game),
                     "proposta: Saluti\nlabel: p1\nTesto.\n")
        done = _pipe(postgres_url, raw)
        assert done.returncode == 0 and done.stdout.startswith(b"kept <"), done.stderr
        assert "psycopg" in _modules(done)
        assert [m for m in _modules(done)
                if any(m == n or m.startswith(n + ".") for n in NOT_NEEDED)] == []
        assert [r.status for r in intake.decide_kept() if r.game == game] == ["decided"]
        assert _pipe(postgres_url, raw).stdout.startswith(b"duplicate")
        assert [p["label"] for p in service.reads.proposals(game)] == ["p1"]
    finally:
        service.close()

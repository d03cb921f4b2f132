"""Real SMTP both ways: Scriba's own intake server, and Scriba's outbox delivered to an
aiosmtpd server on loopback; an outage measured on the outbox's clock; the pipe command."""

from __future__ import annotations

import logging
import os
import smtplib
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from scriba.mail.intake import Intake
from scriba.mail.send import SmtpTransport, deliver_once, smtp_target
from scriba.mail.server import IntakeController
from scriba.service import Service

from .conftest import DOMAIN, letter
from .helpers import decameronomic, running
from .helpers import personal as personal_address
from .smtp_parts import MailServer, free_port


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def game(mail_service: Service) -> Service:
    decameronomic(mail_service)
    return mail_service


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    yield from running(MailServer())


def test_letters_in_by_smtp_and_lmtp_replies_out_by_smtp(game: Service,
                                                         mail_server: MailServer) -> None:
    intake = Intake(game)
    personal = personal_address(intake, "Bruno")
    smtp_port, lmtp_port = free_port(), free_port()
    servers = [IntakeController(intake, "127.0.0.1", smtp_port),
               IntakeController(intake, "127.0.0.1", lmtp_port, lmtp=True)]
    for server in servers:
        server.start()
    try:
        raw = letter("bruno@players.test", personal,
                     "proposta: Saluti\nlabel: p1\nOgni giocatore saluta.\n")
        with smtplib.SMTP("127.0.0.1", smtp_port) as client:
            client.sendmail("bruno@players.test", [personal], raw)
            client.sendmail("bruno@players.test", [personal], raw)  # delivered twice
        vote = letter("bruno@players.test", personal, "vota p1 favorevole")
        with smtplib.LMTP("127.0.0.1", lmtp_port) as client:
            refused = client.sendmail("bruno@players.test", [personal], vote)
        assert refused == {}
    finally:
        for server in servers:
            server.stop()
    assert [p["label"] for p in game.reads.proposals("dec")] == ["p1"]
    assert [x["status"] for x in intake.mailroom.letters()] == ["decided", "decided"]

    os.environ["SCRIBA_SMTP"] = mail_server.url()
    try:
        counts = deliver_once(game.outbox)
    finally:
        del os.environ["SCRIBA_SMTP"]
    assert counts["failed"] == 0 and counts["retry"] == 0
    collector = mail_server.collector
    assert collector.logins and set(collector.logins) == {"scriba"}
    receipts = [m for m in collector.to("bruno@players.test")
                if m["Auto-Submitted"] == "auto-replied"]
    assert len(receipts) == 2  # one per letter, the duplicate delivery answered once
    receipt = receipts[0]
    assert receipt["In-Reply-To"].strip() in receipt["References"]
    assert "proposta 1" in receipt.get_content()
    assert receipt["Auto-Submitted"] == "auto-replied"
    assert receipt["List-Id"] == f"<dec.{DOMAIN}>"
    assert "unsubscribe" in receipt["List-Unsubscribe"]
    for other in ("anna@players.test", "carla@players.test"):
        assert any("proposta 1" in m.get_content() for m in collector.to(other))
    # sent once: a second run sends nothing
    os.environ["SCRIBA_SMTP"] = mail_server.url()
    try:
        assert deliver_once(game.outbox)["sent"] == 0
    finally:
        del os.environ["SCRIBA_SMTP"]


def test_an_outage_of_ten_minutes_delays_but_loses_nothing(
        game: Service, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    clock = Clock()
    outbox = game.outbox
    outbox.clock = clock
    for n in range(30):
        outbox.enqueue(key=f"test:{n}", recipient="anna@players.test", kind="test",
                       subject=f"message {n}", body="hello", game_id="dec")
    server = MailServer()  # not started: the mail server is down
    transport = SmtpTransport(smtp_target(server.url()), timeout=5)
    outage = timedelta(minutes=10)
    step = timedelta(seconds=5)
    start = clock.now
    tries = 0
    knocks = []  # rows handed to the transport (the others wait without a try)

    def counting(row: object) -> None:
        knocks.append(row)
        transport(row)

    try:
        while True:
            if clock.now - start >= outage and server.controller is None:
                server.start()
                back = clock.now
            counts = outbox.deliver_due(counting)
            tries += counts["retry"]
            if not outbox.messages(status="pending"):
                break
            clock.now += step
            assert clock.now - start < timedelta(hours=1)
    finally:
        transport.close()
        server.stop()
    delay = clock.now - back
    assert len(server.collector.messages) == 30
    assert delay <= timedelta(minutes=2)  # the backoff is capped at two minutes
    assert all(m["status"] == "sent" for m in outbox.messages())
    failed_knocks = len(knocks) - 30
    assert failed_knocks < 10  # one try per round while down, not one per message
    print(f"\nMEASURE outage 10 min: all 30 delivered {delay.total_seconds():.0f} s "
          f"(outbox clock) after the server came back; {failed_knocks} connection "
          f"attempts failed, {tries} postponements")
    # the password is never written anywhere: logs, errors, the outbox
    password = server.collector.password
    assert password not in caplog.text
    assert all(password not in (str(m) + repr(transport.target))
               for m in outbox.messages())


def test_retry_backoff_doubles_and_is_capped(game: Service) -> None:
    clock = Clock()
    outbox = game.outbox
    outbox.clock = clock
    outbox.enqueue(key="t", recipient="a@x.test", kind="test", subject="s", body="b")

    def down(row: object) -> None:
        raise ConnectionError("down")

    waits = []
    for _ in range(8):
        clock.now += timedelta(hours=1)
        before = clock.now
        outbox.deliver_due(down)
        row = outbox.due()  # nothing is due right after a failure
        assert row == []
        with game.commands.store.session() as session:
            from scriba.store.mail import OutboxMessage
            next_attempt = session.query(OutboxMessage).one().next_attempt
        waits.append((next_attempt.replace(tzinfo=UTC) - before).total_seconds())
    assert waits == [15, 30, 60, 120, 120, 120, 120, 120]


def _pipe(db: str, raw: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c",
                           "from scriba.cli.mail import register; import typer;"
                           "app = typer.Typer(); register(app);"
                           "app.command('x')(lambda: None); app()",
                           "mail", "receive", "--db", db],
                          input=raw, capture_output=True, env=env, timeout=120)


def test_the_pipe_command_and_its_exit_codes(game: Service, tmp_path: object) -> None:
    db = game.commands.store.url
    intake = Intake(game)
    personal = personal_address(intake, "Bruno")
    env = {**os.environ, "SCRIBA_MAIL_DOMAIN": DOMAIN}
    raw = letter("bruno@players.test", personal, "proposta: Saluti\nlabel: p1\nTesto.\n")
    done = _pipe(db, raw, env)
    # kept only (a SQLite database): decided by the next round of an intake
    assert done.returncode == 0 and done.stdout.startswith(b"kept"), done.stderr
    assert _pipe(db, raw, env).stdout.startswith(b"kept")  # the same letter, still waiting
    assert [r.status for r in intake.decide_kept()] == ["decided"]
    assert _pipe(db, raw, env).stdout.startswith(b"duplicate")
    assert _pipe(db, b"", env).returncode == 65  # EX_DATAERR: nothing to keep
    broken = _pipe("sqlite:////nonexistent/dir/x.db", raw, env)
    assert broken.returncode == 75  # EX_TEMPFAIL: the mail server keeps it and retries
    assert [p["label"] for p in game.reads.proposals("dec")] == ["p1"]


def answers(mail_server: MailServer, reader: str, *words: str) -> int:
    """How many of the letters ``reader`` received hold all of ``words``."""
    return sum(all(w in m.get_content() for w in words)
               for m in mail_server.collector.to(reader))


def test_scriba_mail_serve_takes_letters_and_delivers_replies(
        game: Service, mail_server: MailServer) -> None:
    """The command a mail server delivers to, as its own process, end to end."""
    import time

    intake = Intake(game)
    personal = personal_address(intake, "Bruno")
    port = free_port()
    env = {**os.environ, "SCRIBA_MAIL_DOMAIN": DOMAIN, "SCRIBA_SMTP": mail_server.url()}
    process = subprocess.Popen(
        [sys.executable, "-c", "from scriba.cli.main import main; main()", "mail", "serve",
         "--listen", f"127.0.0.1:{port}", "--interval", "0.5", "--db", game.commands.store.url],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            try:
                client = smtplib.SMTP("127.0.0.1", port, timeout=5)
                break
            except OSError:
                time.sleep(0.2)
        with client:
            client.sendmail("bruno@players.test", [personal], letter(
                "bruno@players.test", personal, "proposta: Saluti\nlabel: p1\nTesto.\n"))
        # a letter the pipe keeps while the server runs is decided at its next round
        carla = personal_address(intake, "Carla")
        piped = _pipe(game.commands.store.url, letter(
            "carla@players.test", carla, "proposta: Addio\nlabel: p2\nTesto.\n"), env)
        assert piped.stdout.startswith(b"kept"), piped.stderr
        for _ in range(300):  # until both answers have come (30 s at most)
            if answers(mail_server, "bruno@players.test", "proposta 1", "Saluti") and \
                    answers(mail_server, "carla@players.test", "proposta 2", "Addio"):
                break
            time.sleep(0.1)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    # each is told of the other's proposal too; one letter answers each one's own
    assert answers(mail_server, "bruno@players.test", "proposta 1", "Saluti") == 1
    assert answers(mail_server, "carla@players.test", "proposta 2", "Addio") == 1
    assert [p["label"] for p in game.reads.proposals("dec")] == ["p1", "p2"]
    assert mail_server.collector.password.encode() not in errors

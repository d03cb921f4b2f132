"""Mail fixtures: a service on a SQLite file, letters as bytes, a DKIM key of the test."""

from __future__ import annotations

import base64
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

import dkim
import pytest

from scriba.mail.intake import Intake
from scriba.service import Service
from scriba.service.outbox import Outbox

DOMAIN = "scriba.test"
SIGNED = ("from", "to", "subject", "message-id", "date")  # what a test signature covers


@pytest.fixture(autouse=True)
def _mail_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIBA_MAIL_DOMAIN", DOMAIN)
    monkeypatch.setenv("SCRIBA_MAIL_LOCAL", "scriba")


@pytest.fixture
def mail_service(tmp_path: Path, make_service: Callable[..., Service]) -> Iterator[Service]:
    # rule code in-process: mail tests are about letters, not the sandbox
    svc = make_service(f"sqlite:///{tmp_path / 'mail.db'}")
    yield svc
    svc.close()


class Keys:
    """An RSA key made for the test and the DNS record that publishes it."""

    def __init__(self) -> None:
        # openssl makes the key (as dkimpy's own dknewkey does)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "key.pem"
            subprocess.run(["openssl", "genrsa", "-traditional", "-out", str(path), "2048"],
                           check=True, capture_output=True)
            self.private = path.read_bytes()
            public = subprocess.run(["openssl", "rsa", "-in", str(path), "-pubout",
                                     "-outform", "DER"], check=True,
                                    capture_output=True).stdout
        self.record = b"v=DKIM1; k=rsa; p=" + base64.b64encode(public)
        self.published: dict[str, bytes] = {}

    def publish(self, domain: str, selector: str = "sel") -> None:
        self.published[f"{selector}._domainkey.{domain}."] = self.record

    def dnsfunc(self, name: bytes | str, timeout: int = 5) -> bytes | None:
        name = name.decode() if isinstance(name, bytes) else name
        return self.published.get(name if name.endswith(".") else name + ".")

    def sign(self, raw: bytes, domain: str, selector: str = "sel",
             headers: tuple[str, ...] = SIGNED) -> bytes:
        signature = dkim.sign(raw, selector.encode(), domain.encode(), self.private,
                              include_headers=[name.encode() for name in headers])
        return signature + raw


@pytest.fixture(scope="session")
def keys() -> Keys:
    return Keys()


def letter(sender: str, to: str, body: str, subject: str = "move",
           message_id: str | None = None, html: str | None = None,
           attachments: dict[str, bytes] | None = None, date: datetime | None = None,
           **headers: str) -> bytes:
    """A letter as a mail client writes it: dated now (or ``date``)."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(date or datetime.now(UTC))
    message["Message-ID"] = message_id or make_msgid(domain=sender.rpartition("@")[2])
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    if html is not None and not body:
        message.set_content(html, subtype="html")
    else:
        message.set_content(body)
    for name, data in (attachments or {}).items():
        message.add_attachment(data, maintype="application", subtype="octet-stream",
                               filename=name)
    return message.as_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def seat_all(service: Service, game: str, players: list[str],
             domain: str = "players.test", language: str | None = None) -> dict[str, str]:
    emails = {}
    for player in players:
        email = f"{player.lower()}@{domain}"
        account = service.seats.seat(game, player, email)
        if language:
            service.accounts.update_preferences(account.id, language=language)
        emails[player] = email
    return emails


def make_intake(service: Service, keys: Keys | None = None, **kwargs: Any) -> Intake:
    return Intake(service, dnsfunc=keys.dnsfunc if keys else None, **kwargs)


def outbox_of(service: Service) -> Outbox:
    return service.outbox

"""Real SMTP parts for the tests: a mail server that collects what Scriba sends."""

from __future__ import annotations

import email
import email.policy
import socket
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Collector:
    """Keeps every message delivered to it; logins are checked against one password."""

    password: str = "s3cret-Pa55"
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.original_content or envelope.content,
                                           policy=email.policy.default)
        message["X-Envelope-To"] = ",".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                     auth_data: Any) -> AuthResult:
        ok = auth_data.password.decode() == self.password
        if ok:
            self.logins.append(auth_data.login.decode())
        return AuthResult(success=ok)

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["X-Envelope-To"] == address]


class MailServer:
    """The SMTP server Scriba delivers to (stopped and started to make an outage)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.collector = Collector()
        self.controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(self.collector, hostname="127.0.0.1", port=self.port,
                                     authenticator=self.collector.authenticate,
                                     auth_require_tls=False)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def url(self, user: str = "scriba") -> str:
        return f"smtp://{user}:{self.collector.password}@127.0.0.1:{self.port}"

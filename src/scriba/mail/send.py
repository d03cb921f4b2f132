"""Delivery: outbox rows become e-mails sent through ``SCRIBA_SMTP``.

``smtp://user:pass@host:port`` (STARTTLS when the server offers it) or
``smtps://user:pass@host:port`` (TLS from the start). The password is only handed to
smtplib; :func:`redacted` is what logs and errors show.
"""

from __future__ import annotations

import contextlib
import logging
import os
import smtplib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.header import Header
from email.message import EmailMessage
from email.policy import EmailPolicy
from email.utils import formatdate
from typing import Any
from urllib.parse import unquote, urlsplit

from scriba.service.letters import game_address
from scriba.service.outbox import Deferred, Outbox, PermanentFailure

log = logging.getLogger("scriba.mail")
_SKIP_HEADERS = {"n", "Reply-To"}  # n: a part's number; Reply-To: set first, once


@dataclass
class SmtpTarget:
    host: str
    port: int
    tls: bool  # TLS from the first byte (smtps)
    user: str | None
    password: str | None

    def __repr__(self) -> str:  # never the password
        return f"SmtpTarget({self.redacted()})"

    def redacted(self) -> str:
        who = f"{self.user}:***@" if self.user else ""
        return f"{'smtps' if self.tls else 'smtp'}://{who}{self.host}:{self.port}"


def smtp_target(url: str | None = None) -> SmtpTarget:
    url = url or os.environ.get("SCRIBA_SMTP", "smtp://localhost:25")
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps"):
        raise ValueError("SCRIBA_SMTP must be smtp://… or smtps://…")
    return SmtpTarget(host=parts.hostname or "localhost",
                      port=parts.port or (465 if parts.scheme == "smtps" else 25),
                      tls=parts.scheme == "smtps",
                      user=unquote(parts.username) if parts.username else None,
                      password=unquote(parts.password) if parts.password else None)


class MailPolicy(EmailPolicy):
    """The default policy, but a subject with letters beyond ASCII is written as RFC 2047
    encoded words only, each a whole number of characters (email.header's folding). The
    default folder mixes plain and encoded words and may end a folded line with the space
    it also folds with: a reader then sees two spaces, or none ("Saluticordiali")."""

    def fold(self, name: str, value: Any) -> str:
        if name.lower() == "subject" and not str(value).isascii():
            encoded = Header(str(value), "utf-8", header_name=name).encode(linesep=self.linesep)
            return f"{name}: {encoded}{self.linesep}"
        return super().fold(name, value)

    def fold_binary(self, name: str, value: Any) -> bytes:
        if name.lower() == "subject" and not str(value).isascii():
            return self.fold(name, value).encode("ascii")
        return super().fold_binary(name, value)


MAIL_POLICY = MailPolicy(linesep="\r\n")


def compose(row: Any) -> EmailMessage:
    message = EmailMessage(policy=MAIL_POLICY)
    message["From"] = f"Scriba <{game_address(row.game_id)}>"
    message["To"] = row.recipient
    message["Subject"] = row.subject
    message["Date"] = formatdate(localtime=False)
    # the reader's personal address when the outbox gave one (service.personal)
    message["Reply-To"] = (row.headers or {}).get("Reply-To") or game_address(row.game_id)
    message["X-Loop"] = game_address(None)
    if "Auto-Submitted" not in (row.headers or {}):
        message["Auto-Submitted"] = "auto-generated"
    for name, value in (row.headers or {}).items():
        if name not in _SKIP_HEADERS and value:
            message[name] = str(value)
    message.set_content(row.body)
    for attached in getattr(row, "attachments", None) or []:
        # text/plain, so that a reader's client shows it (rule code, UTF-8)
        message.add_attachment(str(attached.get("content", "")),
                               filename=str(attached.get("filename") or "attachment.txt"))
    return message


class SmtpTransport:
    """Send one row per call over a connection kept open between calls."""

    def __init__(self, target: SmtpTarget | None = None, timeout: float = 20.0,
                 context: ssl.SSLContext | None = None) -> None:
        self.target = target or smtp_target()
        self.timeout = timeout
        self.context = context or ssl.create_default_context()
        self._smtp: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        t = self.target
        try:
            if t.tls:
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(t.host, t.port, timeout=self.timeout,
                                                      context=self.context)
            else:
                smtp = smtplib.SMTP(t.host, t.port, timeout=self.timeout)
                smtp.ehlo()
                if smtp.has_extn("starttls"):
                    smtp.starttls(context=self.context)
                    smtp.ehlo()
            if t.user:
                smtp.login(t.user, t.password or "")
        except smtplib.SMTPAuthenticationError as error:
            raise ConnectionError(f"{t.redacted()}: login refused ({error.smtp_code})") \
                from None
        except (OSError, smtplib.SMTPException) as error:
            raise ConnectionError(f"{t.redacted()}: {type(error).__name__}") from None
        return smtp

    def __call__(self, row: Any) -> None:
        if self._smtp is None:
            self._smtp = self._connect()
        message = compose(row)
        try:
            refused = self._smtp.send_message(message, from_addr=game_address(None),
                                              to_addrs=[row.recipient])
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _ in error.recipients.values()]
            if codes and all(500 <= code < 600 for code in codes):
                raise PermanentFailure(f"refused: {codes}") from None
            raise Deferred(f"recipient deferred: {codes}") from None
        except (OSError, smtplib.SMTPException) as error:
            self.close()
            raise ConnectionError(f"{self.target.redacted()}: {type(error).__name__}") \
                from None
        if refused:
            raise PermanentFailure(f"refused: {refused}")

    def close(self) -> None:
        if self._smtp is not None:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                self._smtp.quit()
            self._smtp = None


def deliver_once(outbox: Outbox, transport: SmtpTransport | None = None) -> dict[str, int]:
    """Queue what time made due (reports, reminders, digests), then send what is due."""
    transport = transport or SmtpTransport()
    outbox.sweep()
    total = {"sent": 0, "retry": 0, "failed": 0}
    try:
        while True:
            counts = outbox.deliver_due(transport)
            for key, value in counts.items():
                total[key] += value
            if counts["sent"] + counts["failed"] == 0:
                break
    finally:
        transport.close()
    return total


def deliver_forever(outbox: Outbox, transport: SmtpTransport | None = None,
                    interval: float = 5.0, stop: Any = None,
                    before: Callable[[], object] | None = None) -> None:
    """The delivery loop of ``scriba mail serve`` (and ``scriba serve``); ``before`` runs
    first in each round (deciding the letters a pipe kept)."""
    transport = transport or SmtpTransport()
    while stop is None or not stop.is_set():
        try:
            if before is not None:
                before()
            counts = deliver_once(outbox, transport)
            if counts["retry"]:
                log.warning("mail: %s messages wait for %s", counts["retry"],
                            transport.target.redacted())
        except Exception:  # noqa: BLE001 - the loop must outlive any one failure
            log.exception("mail delivery failed")
        if stop is not None:
            stop.wait(interval)
        else:
            time.sleep(interval)

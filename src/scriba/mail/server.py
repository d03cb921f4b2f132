"""``scriba mail serve``: an SMTP and an LMTP server (aiosmtpd) for a mail server to
deliver to; each message goes to :class:`~scriba.mail.intake.Intake`.

The answer to DATA is given after the letter is kept: 250 when it is stored (whatever
its commands did), 451 (try again later) if it could not be stored, 552 if it is larger
than the hard limit. LMTP answers per recipient, as the protocol asks.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP

from scriba.mail.intake import Intake

log = logging.getLogger("scriba.mail")
HARD_LIMIT = 32 * 1024 * 1024  # larger letters are refused in SMTP; smaller ones by reply


class Handler:
    def __init__(self, intake: Intake) -> None:
        self.intake = intake
        self.lock = asyncio.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = envelope.original_content or envelope.content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        try:
            async with self.lock:  # the service is used by one letter at a time
                await asyncio.get_running_loop().run_in_executor(
                    None, lambda: self.intake.receive(
                        raw, "lmtp" if isinstance(server, LMTP) else "smtp",
                        envelope.mail_from or "", list(envelope.rcpt_tos)))
        except Exception:  # noqa: BLE001 - the sender's server will try again
            log.exception("letter not stored")
            status = "451 4.3.0 Letter not stored, please try again later"
        else:
            status = "250 2.0.0 Letter kept"
        if isinstance(server, LMTP):
            return "\r\n".join([status] * max(1, len(envelope.rcpt_tos)))
        return status


class IntakeController(Controller):
    def __init__(self, intake: Intake, hostname: str, port: int, lmtp: bool = False) -> None:
        self.lmtp = lmtp
        super().__init__(Handler(intake), hostname=hostname, port=port,
                         data_size_limit=HARD_LIMIT, decode_data=False)

    def factory(self) -> SMTP:
        cls = LMTP if self.lmtp else SMTP
        return cls(self.handler, data_size_limit=HARD_LIMIT, decode_data=False,
                   enable_SMTPUTF8=True, hostname=self.hostname)

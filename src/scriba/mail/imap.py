"""``scriba mail fetch``: for a group that only has a mailbox. IMAP over TLS (imaplib):
poll the folder for unseen letters, take each one (BODY.PEEK, so a crash leaves it
unseen), hand it to the intake, then mark it seen (and, with ``delete``, expunge it).
The letter is kept in the database before it is marked, and kept once by its
Message-ID, so a letter fetched twice after a crash is still decided once.
"""

from __future__ import annotations

import imaplib
import os
import ssl
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from scriba.mail.intake import Intake, Received


@dataclass
class ImapTarget:
    host: str
    port: int
    user: str
    password: str
    folder: str

    def __repr__(self) -> str:
        return f"ImapTarget(imaps://{self.user}:***@{self.host}:{self.port}/{self.folder})"


def imap_target(url: str | None = None) -> ImapTarget:
    url = url or os.environ.get("SCRIBA_IMAP", "")
    parts = urlsplit(url)
    if parts.scheme != "imaps" or not parts.hostname or not parts.username:
        raise ValueError("SCRIBA_IMAP must be imaps://user:password@host[:port][/FOLDER]")
    return ImapTarget(host=parts.hostname, port=parts.port or 993,
                      user=unquote(parts.username), password=unquote(parts.password or ""),
                      folder=unquote(parts.path.lstrip("/")) or "INBOX")


def fetch(intake: Intake, target: ImapTarget, context: ssl.SSLContext | None = None,
          delete: bool = False, limit: int = 500) -> list[Received]:
    """Take every unseen letter of the folder once; returns what the intake made of them."""
    context = context or ssl.create_default_context()
    out: list[Received] = []
    with imaplib.IMAP4_SSL(target.host, target.port, ssl_context=context,
                           timeout=30) as imap:
        imap.login(target.user, target.password)
        status, _ = imap.select(_quote(target.folder))
        if status != "OK":
            raise ConnectionError(f"no folder {target.folder!r}")
        status, data = imap.uid("SEARCH", None, "UNSEEN")
        uids = (data[0] or b"").split()[:limit] if status == "OK" else []
        for uid in uids:
            status, parts = imap.uid("FETCH", uid, "(BODY.PEEK[])")
            raw = next((p[1] for p in parts if isinstance(p, tuple)), None)
            if status != "OK" or raw is None:
                continue
            out.append(intake.receive(bytes(raw), "imap"))
            imap.uid("STORE", uid, "+FLAGS", "(\\Seen)")
            if delete:
                imap.uid("STORE", uid, "+FLAGS", "(\\Deleted)")
        if delete and uids:
            imap.expunge()
    return out


def _quote(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'

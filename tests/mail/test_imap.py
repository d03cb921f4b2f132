"""``scriba mail fetch`` against a real IMAP server: Debian's dovecot on loopback, TLS
with a certificate made by the test."""

from __future__ import annotations

import imaplib
import os
import pwd
import shutil
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriba.mail.imap import fetch, imap_target
from scriba.mail.intake import Intake
from scriba.service import Service

from .conftest import letter
from .helpers import decameronomic, personal, running
from .smtp_parts import free_port

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"


class Dovecot:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="scriba-imap-"))
        self.root.chmod(0o755)  # dovecot's unprivileged login processes read below it
        self.port = free_port()
        self.cert = self.root / "cert.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", str(self.root / "key.pem"), "-out", str(self.cert),
                        "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, capture_output=True)
        (self.root / "passwd").write_text("scriba:{PLAIN}letters-pw::::::\n")
        home = self.root / "home"
        home.mkdir()
        # mail is stored by an unprivileged user (dovecot refuses uid 0)
        uid = gid = os.getuid()
        if uid == 0:
            nobody = pwd.getpwnam("nobody")
            uid, gid = nobody.pw_uid, nobody.pw_gid
            os.chown(home, uid, gid)
        r = self.root
        self.conf = r / "dovecot.conf"
        self.conf.write_text(f"""
protocols = imap
listen = 127.0.0.1
base_dir = {r}/run
state_dir = {r}/state
log_path = {r}/log
ssl = required
ssl_cert = <{r}/cert.pem
ssl_key = <{r}/key.pem
auth_mechanisms = plain
first_valid_uid = 1
first_valid_gid = 1
service imap-login {{
  inet_listener imap {{
    port = 0
  }}
  inet_listener imaps {{
    port = {self.port}
    ssl = yes
  }}
}}
passdb {{
  driver = passwd-file
  args = {r}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={r}/home/%u
}}
mail_location = maildir:~/Maildir
""")

    def start(self) -> None:
        # in the foreground (-F), so the test owns the process and ends it
        self.process = subprocess.Popen([DOVECOT, "-F", "-c", str(self.conf)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(50):
            try:
                with imaplib.IMAP4_SSL("127.0.0.1", self.port, ssl_context=self.context()):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("dovecot did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))

    def url(self) -> str:
        return f"imaps://scriba:letters-pw@127.0.0.1:{self.port}/INBOX"

    def append(self, raw: bytes) -> None:
        with imaplib.IMAP4_SSL("127.0.0.1", self.port, ssl_context=self.context()) as imap:
            imap.login("scriba", "letters-pw")
            imap.append("INBOX", None, None, raw)

    def unseen(self) -> int:
        with imaplib.IMAP4_SSL("127.0.0.1", self.port, ssl_context=self.context()) as imap:
            imap.login("scriba", "letters-pw")
            imap.select("INBOX")
            return len(imap.search(None, "UNSEEN")[1][0].split())


@pytest.fixture
def dovecot() -> Iterator[Dovecot]:
    if not os.path.exists(DOVECOT):
        pytest.skip("dovecot is not installed (apt-get install dovecot-imapd; .ci/run does)")
    yield from running(Dovecot())


def test_fetch_takes_each_letter_once_and_marks_it(mail_service: Service,
                                                   dovecot: Dovecot) -> None:
    service = mail_service
    decameronomic(service)
    intake = Intake(service)
    bruno = personal(intake, "Bruno")
    proposal = letter("bruno@players.test", bruno, "proposta: Saluti\nlabel: p1\nTesto.\n")
    dovecot.append(proposal)
    dovecot.append(proposal)  # the same letter twice in the mailbox
    dovecot.append(letter("bruno@players.test", bruno, "vota p1 favorevole"))
    target = imap_target(dovecot.url())
    assert "letters-pw" not in repr(target)
    results = fetch(intake, target, dovecot.context())
    assert [r.status for r in results] == ["decided", "duplicate", "decided"]
    assert dovecot.unseen() == 0
    assert fetch(intake, target, dovecot.context()) == []  # nothing new
    assert [p["label"] for p in service.reads.proposals("dec")] == ["p1"]
    # a certificate nobody vouches for is refused
    with pytest.raises(ssl.SSLError):
        fetch(intake, target, ssl.create_default_context())

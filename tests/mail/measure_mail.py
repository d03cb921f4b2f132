"""Figures for the mail front (run: .venv/bin/python tests/mail/measure_mail.py).

- letters decided per second: letters to personal addresses, each a command, through
  the whole intake (kept raw, parsed, authenticated, performed, receipt and
  announcements queued) on a SQLite file;
- forged letters refused / tried: unsigned, signed by another domain, tampered after
  signing, signed with a key the domain did not publish; and genuine signed ones;
- delivery after a 10-minute SMTP outage is measured by tests/mail/test_smtp.py
  (``-s`` prints it), on the outbox's own clock.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("SCRIBA_MAIL_DOMAIN", "scriba.test")

from scriba.mail.intake import Intake  # noqa: E402
from scriba.service import open_service  # noqa: E402
from tests.mail.conftest import Keys, letter, seat_all  # noqa: E402

PLAYERS = [f"P{n:02d}" for n in range(10)]


def letters_per_second(rounds: int = 10) -> float:
    with tempfile.TemporaryDirectory() as folder:
        service = open_service(f"sqlite:///{folder}/m.db")
        service.commands.create_game("anderwelt", game_id="aw", players=PLAYERS,
                                     offices={"GM": "Max"}, start="2026-03-01T10:00:00Z")
        mail = seat_all(service, "aw", PLAYERS)
        service.commands.perform("aw", "Max", "set_zat", {"days": 7})
        intake = Intake(service)
        to = {p: f"scriba+aw.{intake.mailroom.secret('aw', p)}@scriba.test"
              for p in PLAYERS}
        raws = [letter(mail[p], to[p], f"nomic_number {r + 1}\n")
                for r in range(rounds) for p in PLAYERS]
        intake.receive(raws[0], "bench")
        start = time.perf_counter()
        statuses = [intake.receive(raw, "bench").status for raw in raws[1:]]
        elapsed = time.perf_counter() - start
        assert set(statuses) == {"decided"}, statuses
        service.close()
        return len(statuses) / elapsed


def forged_refused() -> tuple[int, int, int]:
    keys, stranger = Keys(), Keys()
    keys.publish("players.test")
    with tempfile.TemporaryDirectory() as folder:
        service = open_service(f"sqlite:///{folder}/f.db")
        service.commands.create_game("anderwelt", game_id="aw", players=PLAYERS,
                                     offices={"GM": "Max"}, start="2026-03-01T10:00:00Z")
        mail = seat_all(service, "aw", PLAYERS)
        intake = Intake(service, dnsfunc=keys.dnsfunc)
        to = "scriba+aw@scriba.test"
        forged = []
        for n, player in enumerate(PLAYERS):
            body = f"nomic_number {n + 1}\n"
            forged.append(letter(mail[player], to, body))  # unsigned
            keys.publish("evil.test")
            forged.append(keys.sign(letter(mail[player], to, body), "evil.test"))
            signed = keys.sign(letter(mail[player], to, body), "players.test")
            forged.append(signed.replace(f"nomic_number {n + 1}".encode(), b"nomic_number 99"))
            forged.append(stranger.sign(letter(mail[player], to, body), "players.test"))
        refused = sum(intake.receive(raw, "bench").status == "held" for raw in forged)
        genuine = [keys.sign(letter(mail[p], to, "nomic_number 3\n"), "players.test")
                   for p in PLAYERS]
        accepted = sum(intake.receive(raw, "bench").status == "decided" for raw in genuine)
        service.close()
        return refused, len(forged), accepted


if __name__ == "__main__":
    print(f"letters decided per second: {letters_per_second():.1f}")
    refused, tried, accepted = forged_refused()
    print(f"forged letters refused / tried: {refused} / {tried}; genuine signed "
          f"letters accepted: {accepted} / {len(PLAYERS)}")

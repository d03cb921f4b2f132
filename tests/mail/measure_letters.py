"""Mails per player in one DecameroNomic Giornata played by letters, in each delivery mode
(run: .venv/bin/python tests/mail/measure_letters.py; prints a table and, with ``--show
NAME``, every subject NAME received; ``--bodies`` adds the bodies of the "each" mode).

The Giornata: Bruno sends two letters (two proposals, then one), Dario one; the others
vote on each letter in one e-mail; the King votes everything in one. The outbox's clock
follows the game's, a day at a time, so digests and reminders fall as they would; every
message queued for a player is counted by kind once the Giornata's report is out.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("SCRIBA_MAIL_DOMAIN", "scriba.test")

from scriba.mail.intake import Intake  # noqa: E402
from scriba.service import open_service  # noqa: E402
from tests.mail.conftest import letter, seat_all  # noqa: E402

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
# (day, player, text): letters as players write them
LETTERS = [
    (0, "Bruno", "Cari amici,\n\nproposta: Saluti\nOgni giocatore saluta il Re.\n\n"
                 "proposta: Congedi\nOgni giocatore si congeda.\n\n-- \nBruno\n"),
    (0, "Dario", "proposta: Banchetto\nOgni Giornata si apre con un banchetto.\n"),
    (1, "Bruno", "Ancora una:\n\nproposta: Torneo\nOgni Giornata ha un torneo.\n"),
    (2, "Carla", "Caro Bruno,\n\nvota 1 favorevole\nvota 2 contrario\n\nCarla\n"),
    (2, "Carla", "vota 3 favorevole\nvota 4 favorevole\n"),
    (3, "Dario", "vota 1 favorevole\nvota 2 favorevole\n\nvota 4 contrario\n"),
    (3, "Bruno", "vota 3 favorevole\n"),
    (4, "Anna", "Il Re vota:\nvota 1 favorevole\nvota 2 favorevole\nvota 3 favorevole\n"
                "vota 4 favorevole\n"),
]


def one_giornata(mode: str | None) -> dict[str, Counter[str]]:
    with tempfile.TemporaryDirectory() as folder:
        service = open_service(f"sqlite:///{folder}/m.db")
        service.commands.create_game("decameronomic", game_id="dec", players=PLAYERS,
                                     offices={"King": "Anna", "Scriba": "Carla"},
                                     start=START.isoformat())
        mail = seat_all(service, "dec", PLAYERS)
        for seat in service.seats.seats("dec"):
            if mode is not None:
                service.accounts.update_preferences(seat.account_id, mail_mode=mode)
        now = [START]
        service.outbox.clock = lambda: now[0]
        intake = Intake(service)
        to = {p: f"scriba+dec.{intake.mailroom.secret('dec', p)}@scriba.test"
              for p in PLAYERS}
        for day in range(15):
            now[0] = START + timedelta(days=day, hours=1)
            service.commands.advance("dec", to=now[0].isoformat())
            for when, player, text in LETTERS:
                if when == day:
                    intake.receive(letter(mail[player], to[player], text, date=now[0]), "t")
            service.outbox.sweep()
        counts = {p: Counter() for p in PLAYERS}
        for message in service.outbox.messages():
            if message["status"] in ("part", "merged"):
                continue  # pieces of a receipt, announcements merged into a digest
            player = next((p for p in PLAYERS if mail[p] == message["recipient"]), None)
            if player is not None:
                counts[player][message["kind"]] += 1
        if "--show" in sys.argv:
            name = sys.argv[sys.argv.index("--show") + 1]
            for message in service.outbox.messages():
                if message["recipient"] == mail[name] and message["status"] not in (
                        "part", "merged"):
                    print(f"  [{mode or 'auto'}] {message['kind']:8} {message['subject']}")
                    if "--bodies" in sys.argv and mode == "each":
                        print("    " + message["body"].replace("\n", "\n    "))
                        for attached in message["attachments"]:
                            print(f"    [attached: {attached['filename']}]")
        service.close()
        return counts


def main() -> None:
    for mode in ("each", "digest", None):
        counts = one_giornata(mode)
        print(f"mode {mode or 'auto (default)'}: one Giornata (14 days)")
        for player, kinds in counts.items():
            detail = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            print(f"  {player}: {sum(kinds.values())} ({detail})")


if __name__ == "__main__":
    main()

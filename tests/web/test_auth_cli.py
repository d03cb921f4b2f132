"""The operator's commands: ``scriba token`` (the token is the last line), ``scriba revoke``,
``scriba officer`` (a guessable password refused); run as processes, as an operator
would."""

from __future__ import annotations

import subprocess

from serving import SCRIBA, run_scriba

from scriba.service import open_service


def test_token_revoke_and_officer(tmp_path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    service = open_service(db)
    service.commands.create_game("suber", game_id="g", players=["Anna", "Bruno"])
    token = run_scriba("token", "g", "Anna", "--label", "bot", "--db", db).splitlines()[-1]
    assert service.seats.token_identity(token)[1:] == ("g", "Anna")
    assert "1 token(s) revoked" in run_scriba("revoke", token, "--db", db)
    assert service.seats.token_identity(token) is None
    run_scriba("token", "g", "Bruno", "--db", db)
    run_scriba("token", "g", "Bruno", "--db", db)
    assert "2 token(s) revoked" in run_scriba("revoke", "--game", "g", "--player", "Bruno",
                                               "--db", db)
    refused = subprocess.run([str(SCRIBA), "token", "g", "Nobody", "--db", db],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "Nobody" in refused.stdout + refused.stderr
    weak = subprocess.run([str(SCRIBA), "officer", "g", "boss@example.org", "--db", db],
                          input="12345678\n12345678\n", capture_output=True, text=True,
                          timeout=60)
    assert weak.returncode == 2 and "too easy to guess" in weak.stdout + weak.stderr
    assert service.accounts.by_email("boss@example.org") is None
    made = subprocess.run([str(SCRIBA), "officer", "g", "boss@example.org", "--db", db],
                          input="quiet harbour lanterns\nquiet harbour lanterns\n",
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stdout + made.stderr
    boss = service.accounts.authenticate("boss@example.org", "quiet harbour lanterns")
    assert boss is not None and service.seats.role(boss.id, "g").kind == "officer"
    service.close()


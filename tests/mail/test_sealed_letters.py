"""A sealed move by mail (issue 20's finding): an Anderwelt round whose Nomiczahlen reach
the GM alone until the evaluation (R.1(1), R.4(1)).

Every letter comes through Scriba's intake server (SMTP on loopback, DKIM-signed) and every
answer, announcement and report leaves through the outbox to a real SMTP server (aiosmtpd).
Before the ZAT no player's mail shows another's number, while the mover's receipt shows
their own and the officer reads both; the evaluation's report tells everyone all of them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scriba.service import Service

from .conftest import DOMAIN, Keys, seat_all
from .test_games_by_mail import Post

ANNA, BERT = "31", "43"  # in no date or time of this game (no one wins with them)


@pytest.fixture
def mailroom(mail_service: Service, keys: Keys) -> Iterator[Post]:
    with Post.running(mail_service, keys) as running:
        yield running


def test_a_nomic_number_is_the_gms_alone_until_the_evaluation(mail_service: Service,
                                                              mailroom: Post) -> None:
    service, post = mail_service, mailroom
    players = ["Anna", "Bert", "Cora"]
    service.commands.create_game("anderwelt", game_id="aw", players=players,
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z", seed=4)
    mail = seat_all(service, "aw", players)
    game = f"scriba+aw@{DOMAIN}"
    gm = service.accounts.create_account("max@players.test", "Max", language="de")
    service.seats.set_officer("aw", gm.id)
    post.send("max@players.test", game, "set_zat deadline=2026-03-08T18:00\n", subject="ZAT")
    post.send(mail["Anna"], game, f"nomic_number {ANNA}\n", subject="Zug von Anna")
    # Bert's letter: his number (sealed) and his press (not): the others hear of the press
    post.send(mail["Bert"], game, f"nomic_number {BERT}\n\npress Guten Tag, Anderwelt!\n",
              subject="Zug von Bert")
    post.deliver()
    inbox = {player: post.inbox(mail[player]) for player in players}
    [receipt] = [m for m in inbox["Anna"] if m.startswith("AW: Zug von Anna")]
    assert ANNA in receipt  # the mover's receipt tells her own number
    [bert] = [m for m in inbox["Bert"] if m.startswith("AW: Zug von Bert")]
    assert BERT in bert and ANNA not in bert
    assert not any(BERT in m for m in inbox["Anna"] + inbox["Cora"])
    assert not any(ANNA in m for m in inbox["Bert"] + inbox["Cora"])
    # Bert's letter reached Cora as his press alone, and Anna's did not reach her at all
    told = [m for m in inbox["Cora"] if "Guten Tag, Anderwelt!" in m]
    assert len(told) == 1 and "Nomiczahl" not in told[0]
    assert not any("Anna" in m.split("\n", 1)[0] for m in inbox["Cora"])
    # the officer (the GM) reads both numbers; a player's own chronicle shows theirs only
    officer = "\n".join(e["text"] for e in service.reads.chronicle("aw", officer=True))
    assert ANNA in officer and BERT in officer
    cora = "\n".join(e["text"] for e in service.reads.chronicle("aw", viewer="Cora"))
    assert ANNA not in cora and BERT not in cora
    # the ZAT passes: the evaluation's report reaches every player with every number
    service.commands.advance("aw", to="2026-03-08T19:00:00Z")
    post.deliver()
    for player in players:
        [report] = [m for m in post.inbox(mail[player]) if m.startswith("[aw] Runde 1")]
        assert f"Nomiczahlen der Runde 1: Anna {ANNA}, Bert {BERT}." in report, player
    cora = "\n".join(e["text"] for e in service.reads.chronicle("aw", viewer="Cora"))
    assert f"Nomiczahl: {ANNA}" in cora and f"Nomiczahl: {BERT}" in cora

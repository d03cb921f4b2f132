"""Whole games by mail only: a DecameroNomic Giornata and an Anderwelt round.

Every player's action arrives as a letter (SMTP into Scriba's intake server, signed with
the players' domain's DKIM key, or sent to a personal address); every answer, announcement
and report leaves through the outbox to a real SMTP server.
"""

from __future__ import annotations

import smtplib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from scriba.mail.intake import Intake
from scriba.mail.send import SmtpTransport, deliver_once, smtp_target
from scriba.mail.server import IntakeController
from scriba.service import Service

from .conftest import DOMAIN, Keys, letter, seat_all
from .helpers import decameronomic, personal
from .smtp_parts import MailServer, free_port


class Post:
    """Scriba's intake server on loopback plus the mail server its outbox delivers to."""

    def __init__(self, service: Service, keys: Keys) -> None:
        keys.publish("players.test")
        self.keys = keys
        self.intake = Intake(service, dnsfunc=keys.dnsfunc)
        self.port = free_port()
        self.server = IntakeController(self.intake, "127.0.0.1", self.port)
        self.out = MailServer()

    @classmethod
    @contextmanager
    def running(cls, service: Service, keys: Keys) -> Iterator[Post]:
        """Both servers started, and stopped after."""
        post = cls(service, keys)
        post.server.start()
        post.out.start()
        try:
            yield post
        finally:
            post.server.stop()
            post.out.stop()

    def send(self, sender: str, to: str, body: str, subject: str = "mossa",
             sign: bool = True, **kwargs: object) -> None:
        raw = letter(sender, to, body, subject=subject, **kwargs)
        if sign:
            raw = self.keys.sign(raw, "players.test")
        with smtplib.SMTP("127.0.0.1", self.port) as client:
            client.sendmail(sender, [to], raw)

    def deliver(self) -> dict[str, int]:
        return deliver_once(self.intake.outbox, SmtpTransport(smtp_target(self.out.url())))

    def inbox(self, address: str) -> list[str]:
        # the text of each message (a proposal's code comes as an attachment beside it)
        return [f"{m['Subject']}\n{m.get_body(('plain',)).get_content()}"
                for m in self.out.collector.to(address)]


@pytest.fixture
def post(mail_service: Service, keys: Keys) -> Iterator[Post]:
    with Post.running(mail_service, keys) as running:
        yield running


def test_a_decameronomic_giornata_by_mail(mail_service: Service, post: Post) -> None:
    service = mail_service
    players = ["Anna", "Bruno", "Carla", "Dario"]
    mail = decameronomic(service, players=players)
    game = f"scriba+dec@{DOMAIN}"
    # Carla writes from her personal address, unsigned
    carla = personal(post.intake, "Carla")
    post.send(mail["Carla"], carla, "proposta: Banchetto\nlabel: p3\n"
              "Ogni Giornata si apre con un banchetto.\n", sign=False)
    # Bruno: one letter with two proposals and his vote on Carla's
    post.send(mail["Bruno"], game,
              "Cari tutti,\n\nproposta: Saluti\nlabel: p1\nOgni giocatore saluta il Re.\n\n"
              "proposta: Congedi\nlabel: p2\nletter: 1\nOgni giocatore si congeda.\n"
              "```\ndef query_congedo(game, args):\n    return \"addio\"\n```\n\n"
              "vota p3 favorevole rating=7\n\n-- \nBruno\n")
    # Dario: the votes on Bruno's letter together, as rule 2600 wants, and on p3
    post.send(mail["Dario"], game, "vote_letter\nvota p1 favorevole\nvota p2 contrario\n\n"
              "vota p3 favorevole\n")
    # the King: his votes, and his veto of p3, by letter
    post.send(mail["Anna"], game, "vote_letter\nvota p1 favorevole\nvota p2 favorevole\n\n"
              "veto p3\n\nOn Mon, 2 Mar 2026, Bruno <bruno@players.test> wrote:\n"
              "> vota p3 favorevole\n")
    post.send(mail["Carla"], carla, "vote_letter\nvota p1 favorevole\nvota p2 contrario\n",
              sign=False)
    proposals = {p["label"]: p for p in service.reads.proposals("dec")}
    assert set(proposals) == {"p1", "p2", "p3"}
    assert proposals["p2"]["changes"][0]["code"].startswith("def query_congedo")
    assert all(letter["status"] == "decided" for letter in post.intake.mailroom.letters())
    votes = proposals["p1"]["votes"]
    assert set(votes) == {"Anna", "Bruno", "Carla", "Dario"}

    # the Giornata ends; its report reaches every player
    service.commands.advance("dec", to="2026-03-16T09:00:01Z")
    proposals = {p["label"]: p for p in service.reads.proposals("dec")}
    assert proposals["p1"]["status"] == "adopted"
    assert proposals["p3"]["status"] == "vetoed" or proposals["p3"].get("reason") == "veto"
    counts = post.deliver()
    assert counts["retry"] == counts["failed"] == 0
    for player in players:
        box = post.inbox(mail[player])
        reports = [m for m in box if "Giornata 1" in m.split("\n", 1)[0]]
        assert reports, f"{player} got no report of Giornata 1: {[b[:60] for b in box]}"
        assert "proposta 1" in reports[-1]
    # Bruno got one receipt for his letter, answering its four commands in order
    [receipt] = [m for m in post.inbox(mail["Bruno"]) if m.startswith("R: mossa")]
    assert receipt.index("> proposta: Saluti") < receipt.index("> proposta: Congedi") \
        < receipt.index("> vota p3")
    assert "Cari tutti" not in receipt  # the greeting is prose, passed over
    # everyone else heard of Bruno's proposals, as the seeds require
    for player in ("Anna", "Carla", "Dario"):
        assert any("Bruno" in m and "proposta 1" in m for m in post.inbox(mail[player]))
    # the veto was announced too
    assert any("veto" in m.lower() and "proposta 3" in m for m in post.inbox(mail["Carla"]))


def test_an_anderwelt_round_by_mail(mail_service: Service, post: Post) -> None:
    service = mail_service
    players = ["Anna", "Bert", "Cora"]
    service.commands.create_game("anderwelt", game_id="aw", players=players, offices={"GM": "Max"},
                                 start="2026-03-01T10:00:00Z", seed=4)
    mail = seat_all(service, "aw", players)
    game = f"scriba+aw@{DOMAIN}"
    # the GM is the game's officer, not a player: his letters act as the GM
    gm = service.accounts.create_account("max@players.test", "Max", language="de")
    service.seats.set_officer("aw", gm.id)
    post.send("max@players.test", game, "set_zat deadline=2026-03-08T18:00\n",
              subject="ZAT")
    assert service.reads.status("aw")["deadline"] == "2026-03-08T18:00:00Z"
    post.send(mail["Anna"], game, "Vorschlag: Grußpflicht\nclass: R\n"
              "Jeder Spieler grüßt den GM.\n\nnomic_number 5\n\n"
              "press Hallo Anderwelt!\n\nAm 1. März 2026 schrieb Max <max@gm.test>:\n"
              "> Bitte die Züge bis zum ZAT.\n", subject="Zug Runde 1")
    post.send(mail["Bert"], game, "Vorschlag: Pünktlichkeit\nKlasse: G\n"
              "Der GM wertet jede Runde pünktlich aus.\n\nnomic_number 7\n", subject="Zug")
    # G.8(2), G.6(1), R.6(1): every proposal in full to every player before its vote, with
    # what the rules say of it (a Grundregel-Änderung, G.6(3)); the vote is next round
    post.deliver()
    published = {"Bert": ("[aw] Vorschlag 2 „Pünktlichkeit“ \u2014 Runde 1",
                          "Der GM wertet jede Runde pünktlich aus.", "Grundregel-Änderung"),
                 "Anna": ("[aw] Vorschlag 1 „Grußpflicht“ \u2014 Runde 1",
                          "Jeder Spieler grüßt den GM.", "Änderung einfacher Regeln")}
    for author, (subject, text, kind) in published.items():
        for player in players:
            if player == author:
                continue
            [told] = [m for m in post.inbox(mail[player]) if m.startswith(subject + "\n")]
            assert text in told and kind in told and "Abstimmung in Runde: 2" in told
    assert {p["data"]["ballot_round"] for p in service.reads.proposals("aw")} == {2}
    # a day before the ZAT, Cora (who has not moved) is reminded, the others are not
    service.commands.advance("aw", to="2026-03-07T20:00:00Z")
    post.deliver()
    reminders = {p: [m for m in post.inbox(mail[p]) if "Erinnerung" in m] for p in players}
    assert reminders["Cora"] and not reminders["Anna"] and not reminders["Bert"]
    assert "(ZAT)" in reminders["Cora"][0]  # the deadline by its name in the game, not "zat"
    # Cora's move arrives after the ZAT: refused, and her round is an NMR
    service.commands.advance("aw", to="2026-03-08T19:00:00Z")
    post.send(mail["Cora"], game, "nomic_number 3\n", subject="Zug")
    [cora] = [x for x in post.intake.mailroom.letters() if x["player"] == "Cora"]
    assert cora["status"] == "decided" and "ZAT" in cora["result"]
    players_now = service.reads.summary("aw")["players"]
    nmr = [e["payload"]["player"] for e in service.reads.log("aw")
           if e["type"] == "notice" and e["payload"].get("kind") == "nmr"]
    assert nmr == ["Cora"]  # Anna and Bert moved by letter before the ZAT
    assert players_now["Cora"]["points"] < players_now["Bert"]["points"]
    post.deliver()
    [receipt] = [m for m in post.inbox(mail["Cora"]) if m.startswith("AW: Zug")]
    assert "ZAT" in receipt
    # G.2(1): the round ends at its ZAT with its evaluation, and its report reaches every
    # player then, before the GM has set the next ZAT
    assert service.reads.status("aw")["period"] == "Runde 1"
    for player in players:
        [report] = [m for m in post.inbox(mail[player]) if m.startswith("[aw] Runde 1")]
        assert report.startswith("[aw] Runde 1 \u2014 Auswertung\n")
        assert "Cora: Nomic-Punkte -20" in report
        # the evaluation as the GM published it: the rules' results, the proposals in
        # full for next round's vote, the standings, and that the next ZAT is not set yet
        assert "Veröffentlicht: Antrag 1 von Anna" in report and "NMR" in report
        assert "Jeder Spieler grüßt den GM." in report
        assert "Der GM wertet jede Runde pünktlich aus." in report
        assert "Punktestand:\nAnna: Nomic-Punkte 60\n" in report.replace("\r\n", "\n")
        assert "Die nächste Frist ist noch nicht festgesetzt." in report
    # the GM opens the next round: no second report of the first
    post.send("max@players.test", game, "as Max\nset_zat\ndays: 7\n", subject="Runde 2")
    assert service.reads.status("aw")["period"] == "Runde 2"
    post.deliver()
    for player in players:
        assert len([m for m in post.inbox(mail[player]) if m.startswith("[aw] Runde 1")]) == 1
    assert service.outbox.messages(status="pending") == []

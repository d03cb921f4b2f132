"""Letters as real mail clients write them, through the intake: Gmail (multipart, quoted
reply), Outlook (HTML only, Windows-1252 labelled ISO-8859-1), Apple Mail (format=flowed,
DelSp=yes), Thunderbird (signature after "-- "), iPhone ("Inviato da iPhone", quoted-printable),
plain ISO-8859-1, a forwarded letter, German in base64: every vote counted."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from email.utils import format_datetime, make_msgid

from scriba.mail.intake import Intake
from scriba.mail.letter import read_letter
from scriba.service import Service

from .helpers import decameronomic, personal

PLAYERS = ["Anna", "Bruno", "Carla", "Dario", "Elena", "Fabio", "Gino", "Ilaria"]


def _raw(sender: str, to: str, headers: str, body: bytes) -> bytes:
    """A letter's bytes: the client's own MIME headers and body, as it sends them."""
    head = (f"From: {sender}\r\nTo: {to}\r\nSubject: Re: [dec] proposta\r\n"
            f"Date: {format_datetime(datetime.now(UTC))}\r\n"
            f"Message-ID: {make_msgid(domain='players.test')}\r\nMIME-Version: 1.0\r\n")
    return (head + headers.replace("\n", "\r\n") + "\r\n\r\n").encode() + body


def _votes(service: Service) -> dict[str, str]:
    [p1] = [p for p in service.reads.proposals("dec") if p["label"] == "p1"]
    return p1["votes"]


def _receipt(service: Service, address: str) -> str:
    return "\n".join(m["body"] for m in service.outbox.messages()
                     if m["recipient"] == address and m["kind"] in ("receipt", "unclear"))


def test_letters_as_clients_write_them(mail_service: Service) -> None:
    service = mail_service
    mail = decameronomic(service, players=PLAYERS)
    intake = Intake(service)

    def send(player: str, headers: str, body: bytes) -> None:
        received = intake.receive(_raw(mail[player], personal(intake, player), headers, body),
                                  "t")
        assert received.status == "decided", (player, received)

    # Apple Mail, format=flowed with DelSp=yes: the proposal's sentence comes back whole
    send("Bruno", "Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes\n"
         "Content-Transfer-Encoding: 8bit",
         b"proposta: Cortesia\r\nlabel: p1\r\nOgni giocatore saluta il Re all'inizio di  \r\n"
         b"ogni Giornata, con garbo e con  \r\npazienza.\r\n")
    [p1] = [p for p in service.reads.proposals("dec") if p["label"] == "p1"]
    assert "all'inizio di ogni Giornata, con garbo e con pazienza." in str(p1["changes"])

    # Gmail: multipart/alternative, quoted-printable, the answered letter quoted below
    send("Anna", 'Content-Type: multipart/alternative; boundary="000000000000abc"',
         b"--000000000000abc\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\n"
         b"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
         b"Cari amici,\r\n\r\nvota p1 favorevole\r\n\r\nIl giorno lun 2 mar 2026 alle ore "
         b"10:00 Bruno <bruno@players.test> ha\r\nscritto:\r\n\r\n> vota p1 contrario\r\n"
         b"--000000000000abc\r\nContent-Type: text/html; charset=\"UTF-8\"\r\n"
         b"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
         b"<div dir=3D\"ltr\">vota p1 favorevole</div>\r\n--000000000000abc--\r\n")
    # Outlook: HTML only, Windows-1252 bytes labelled ISO-8859-1 (its dash is 0x96)
    send("Carla", "Content-Type: text/html; charset=\"iso-8859-1\"\n"
         "Content-Transfer-Encoding: 8bit",
         "<html><body><p class=MsoNormal>vota p1 contrario</p>"
         "<p class=MsoNormal>votta p1 contrario</p>"
         "<p class=MsoNormal>Saluti \u2013 Carla</p></body></html>".encode("cp1252"))
    # Thunderbird: a signature after "-- " holding a line that looks like a command
    send("Dario", "Content-Type: text/plain; charset=UTF-8; format=flowed\n"
         "Content-Transfer-Encoding: 7bit",
         b"vota p1 favorevole\r\n\r\n-- \r\nDario\r\nvota p1 contrario\r\n")
    # German, base64, from a player who writes German
    send("Elena", "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64",
         base64.encodebytes("Stimme p1 favorevole\n\nViele Grüße\nElena\n".encode()))
    # iPhone: quoted-printable, "Inviato da iPhone" under the vote, the answered letter
    # quoted with its attribution inside the quote
    send("Gino", "Content-Type: text/plain; charset=utf-8\n"
         "Content-Transfer-Encoding: quoted-printable",
         b"Voto favorevole alla p1, ovviamente.\r\n\r\nInviato da iPhone\r\n\r\n"
         b"> Il giorno 2 mar 2026, alle ore 10:00, Bruno <bruno@players.test> ha scritto:"
         b"\r\n>=20\r\n> vota p1 contrario\r\n")
    # plain ISO-8859-1 text with accents, the vote word abbreviated
    send("Ilaria", "Content-Type: text/plain; charset=ISO-8859-1\n"
         "Content-Transfer-Encoding: 8bit",
         "Buongiorno!\r\n\r\nIo voto contr. sulla p1: perché sì.\r\n\r\nCiao\r\n"
         "Ilaria\r\n".encode("latin-1"))
    votes = _votes(service)
    assert {p: votes[p] for p in ("Anna", "Carla", "Dario", "Elena", "Gino", "Ilaria")} == {
        "Anna": "for", "Carla": "against", "Dario": "for", "Elena": "for", "Gino": "for",
        "Ilaria": "against"}
    for player in ("Gino", "Ilaria"):  # nothing to note in letters fully understood
        assert "Scriba non ha capito" not in _receipt(service, mail[player])
    # prose is passed over without a word; a line meant as a command is answered
    assert "Cari amici" not in _receipt(service, mail["Anna"])
    assert "Viele Grüße" not in _receipt(service, mail["Elena"])
    carla = _receipt(service, mail["Carla"])
    assert "votta p1 contrario" in carla and "Saluti" not in carla
    # the Windows dash in Carla's letter is a dash, not a control character
    outlook = "<p>Saluti \u2013 Carla</p>".encode("cp1252")
    text = read_letter(_raw(mail["Carla"], "x@scriba.test", "Content-Type: text/html; "
                            "charset=iso-8859-1", outlook)).text
    assert "Saluti \u2013 Carla" in text

    # A forwarded letter whose one command is the letter's only one: acted on
    send("Fabio", "Content-Type: text/plain; charset=UTF-8",
         b"Vedi sotto, vale anche per me.\r\n\r\n---------- Forwarded message ---------\r\n"
         b"From: Anna <anna@players.test>\r\nDate: lun 2 mar 2026 alle ore 10:00\r\n"
         b"Subject: voto\r\nTo: <scriba+dec@scriba.test>\r\n\r\nvota p1 contrario\r\n")
    assert _votes(service)["Fabio"] == "against"
    # ... and when the writer also wrote a command, the forward is skipped, and said so
    send("Bruno", "Content-Type: text/plain; charset=UTF-8",
         b"vota p1 favorevole\r\n\r\nBegin forwarded message:\r\n\r\n"
         b"From: Carla <carla@players.test>\r\nSubject: voto\r\n\r\nvota p1 contrario\r\n")
    assert _votes(service)["Bruno"] == "for"
    assert "inoltrata" in _receipt(service, mail["Bruno"])  # the note, in Italian

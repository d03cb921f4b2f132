"""Subjects short and whole: never cut inside a word, and folded so that no reader loses a
space (sent through a real SMTP server and read back from the bytes it received)."""

from __future__ import annotations

from collections.abc import Iterator
from email.header import decode_header, make_header

import pytest

from scriba.mail.intake import Intake
from scriba.mail.send import SmtpTransport, deliver_once, smtp_target
from scriba.service import Service
from scriba.service.letters import SUBJECT_LIMIT, short_subject

from .conftest import letter
from .helpers import decameronomic, personal
from .smtp_parts import MailServer

TITLE = "Saluti cordiali e cortesia reciproca fra tutti i Giocatori della Brigata"


@pytest.fixture
def out() -> Iterator[MailServer]:
    server = MailServer()
    server.start()
    yield server
    server.stop()


def test_a_long_subject_is_cut_at_a_word_and_read_back_whole(mail_service: Service,
                                                            out: MailServer) -> None:
    mail = decameronomic(mail_service)
    intake = Intake(mail_service)
    intake.receive(letter(mail["Bruno"], personal(intake, "Bruno"),
                          f"proposta: {TITLE}\nOgni giocatore saluta il Re.\n",
                          subject="Una proposta con un oggetto lungo, lunghissimo, " * 3), "t")
    counts = deliver_once(mail_service.outbox, SmtpTransport(smtp_target(out.url())))
    assert counts["failed"] == counts["retry"] == 0
    announced = [m for m in out.collector.messages if "Bruno" in m.get_content()
                 and m["X-Envelope-To"] != mail["Bruno"]]
    assert len(announced) == 2  # Anna and Carla
    receipts = [m for m in out.collector.to(mail["Bruno"])]
    assert receipts
    for message in announced + receipts:
        raw = dict(message.raw_items())["Subject"]  # as folded on the wire
        shown = str(message["Subject"])
        # the same subject for a reader of the modern parser and of the old one
        assert str(make_header(decode_header("".join(raw.splitlines())))) == shown
        assert len(shown) <= SUBJECT_LIMIT and "\n" not in shown
    for message in announced:
        # the proposal by its number and title, the period whole: the title is what is cut,
        # at a word, inside its quotes (as Italian writes them)
        shown = str(message["Subject"])
        assert shown.startswith("[dec] Proposta 1 «Saluti cordiali") and shown.endswith(
            "» \u2014 Giornata 1")
        kept = shown[len("[dec] Proposta 1 «"):-len("» \u2014 Giornata 1")]
        assert kept.endswith("…") and TITLE.startswith(kept[:-1]) \
            and TITLE[len(kept) - 1] == " "
        assert TITLE in message.get_content()  # the title whole in the letter


@pytest.mark.parametrize(("text", "expected"), [
    ("[dec] short", "[dec] short"),
    ("[dec] a\tb\r\nc", "[dec] a b c"),  # one line, control characters gone
    ("y" * 77 + " z", "y" * 77 + "…"),  # the word that fits is kept whole
    ("x" * 100, "x" * 77 + "…"),  # one word longer than a subject: cut, and marked
])
def test_short_subject(text: str, expected: str) -> None:
    assert short_subject(text) == expected

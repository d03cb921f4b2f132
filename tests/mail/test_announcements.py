"""Announcements that carry the game, and the period's report, as a player's mailbox holds
them: every proposal in full to every other player before the vote (a new rule's text and
its code attached, an amendment with its diff, a repeal naming the rule, what the rules say
about it), and at the period's end its report entirely in the game's language — every
decision with its votes in words, every new or changed rule in full, the standings, what is
due next. Letters go in through the intake, messages out through a real SMTP server."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage

import pytest

from scriba.mail.intake import Intake
from scriba.mail.send import SmtpTransport, deliver_once, smtp_target
from scriba.service import Service, open_service
from scriba.service.proposaltext import proposal_in_full
from scriba.service.words import Words

from .conftest import letter, seat_all
from .helpers import decameronomic, personal
from .smtp_parts import MailServer

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
CODE = 'def query_congedo(game, args):\n    return "addio"\n'
RULE_300 = ("In ogni Giornata, ogni Cortigiano può inviare al massimo 2 lettere di Proposte, "
            "ognuna delle quali contenga al massimo 2 proposte.")
NEW_300 = RULE_300.replace("massimo 2 lettere", "massimo 3 lettere")


@pytest.fixture
def out() -> Iterator[MailServer]:
    server = MailServer()
    server.start()
    yield server
    server.stop()


def _text(message: EmailMessage) -> str:
    """The message's text as a reader's client shows it (lines ended by newlines)."""
    return message.get_body(("plain",)).get_content().replace("\r\n", "\n")


def _files(message: EmailMessage) -> list[tuple[str | None, str, str]]:
    """Its attachments: (file name, content type, text)."""
    return [(part.get_filename(), part.get_content_type(),
             part.get_content().replace("\r\n", "\n")) for part in message.iter_attachments()]


def _announced(out: MailServer, address: str, subject: str) -> EmailMessage:
    [message] = [m for m in out.collector.to(address) if m["Subject"] == subject]
    return message


def _giornata(service: Service, out: MailServer) -> tuple[dict[str, str], Intake]:
    """Three proposals by letter — a new rule with code, an amendment, a repeal — and
    the votes on them, delivered."""
    mail = decameronomic(service, players=PLAYERS)
    intake = Intake(service)

    def send(player: str, body: str) -> None:
        raw = letter(mail[player], personal(intake, player), body, subject="mossa")
        assert intake.receive(raw, "t").status == "decided"

    send("Bruno", f"Cari tutti,\n\nproposta: Congedi\nOgni giocatore si congeda.\n"
                  f"```\n{CODE}```\n\nUn saluto,\nBruno\n")
    send("Carla", f"proposta: Più lettere\nemenda: 300\n{NEW_300}\n")
    send("Dario", "proposta: Via le scuole\nabroga: 1600\n")
    send("Carla", "vota 1 favorevole\n")
    send("Dario", "vota 1 contrario\n")
    send("Bruno", "vota 2 favorevole\nvota 3 contrario\n")
    send("Carla", "vota 3 contrario\n")
    counts = deliver_once(service.outbox, SmtpTransport(smtp_target(out.url())))
    assert counts["failed"] == counts["retry"] == 0
    return mail, intake


def test_every_proposal_reaches_every_other_player_whole(mail_service: Service,
                                                        out: MailServer) -> None:
    mail, _ = _giornata(mail_service, out)
    for player in ("Anna", "Carla", "Dario"):
        new_rule = _announced(out, mail[player], "[dec] Proposta 1 «Congedi» \u2014 Giornata 1")
        text = _text(new_rule)
        assert "Proposta 1 «Congedi» di Bruno" in text
        assert "lettera di Proposte: 1" in text  # what rule 300 counts, in its words
        assert "Introdurre una nuova regola, “Congedi”:\nOgni giocatore si congeda." in text
        assert "Un saluto" not in text  # the sign-off is not part of the rule
        assert _files(new_rule) == [("rule-p1-1.star", "text/plain", CODE)]
        assert "rule-p1-1.star" in text  # the letter says it is attached
    for player in ("Anna", "Bruno", "Dario"):
        amendment = _text(_announced(out, mail[player],
                                     "[dec] Proposta 2 «Più lettere» \u2014 Giornata 1"))
        assert f"Modificare la regola 300 («Ogni limite ha una pazienza»):\n{NEW_300}" \
            in amendment
        # the unified diff against the rule in force, line by line
        assert "--- regola 300 in vigore\n+++ proposta 2\n" in amendment
        assert f"\n-{RULE_300}\n+{NEW_300}" in amendment
    for player in ("Anna", "Bruno", "Carla"):
        repeal = _text(_announced(out, mail[player],
                                  "[dec] Proposta 3 «Via le scuole» \u2014 Giornata 1"))
        assert "Abrogare la regola 1600 («Scuole per Gladiatori»)." in repeal
    # every announcement's subject short and whole, naming the period: a vote's too
    subjects = [m["Subject"] for m in out.collector.to(mail["Anna"])]
    assert "[dec] Carla vota favorevole sulla proposta 1 “Congedi” \u2014 Giornata 1" \
        in subjects
    assert all(s.endswith(" \u2014 Giornata 1") and len(s) <= 78 for s in subjects)
    # nobody is told their own proposal as news (their receipt answers them)
    assert not [m for m in out.collector.to(mail["Bruno"])
                if m["Subject"].startswith("[dec] Proposta 1")]


def test_one_letter_reaches_each_other_player_as_one_mail(mail_service: Service,
                                                          out: MailServer) -> None:
    """Bruno's one e-mail of two votes is one mail to each other player, telling both
    votes in order; Anna, who wrote nothing, is told each letter once."""
    mail, _ = _giornata(mail_service, out)
    for player in ("Anna", "Carla", "Dario"):
        [told] = [m for m in out.collector.to(mail[player])
                  if m["Subject"] == "[dec] Lettera di Bruno \u2014 Giornata 1"]
        text = _text(told)
        assert text.index("Bruno vota favorevole sulla proposta 2") \
            < text.index("Bruno vota contrario sulla proposta 3")
        assert text.count("\n-- \nScriba, dec") == 1  # one letter, one signature
    # Anna got one mail per letter the others sent: three proposals, five of votes
    assert len(out.collector.to(mail["Anna"])) == 3 + 4


def test_the_giornata_report_entirely_in_italian(mail_service: Service,
                                                 out: MailServer) -> None:
    mail, _ = _giornata(mail_service, out)
    mail_service.commands.advance("dec", to="2026-03-16T09:00:01Z")
    deliver_once(mail_service.outbox, SmtpTransport(smtp_target(out.url())))
    adopted = [r for r in mail_service.reads.rules_at("dec") if r["title"] == "Congedi"]
    assert adopted, "proposal 1 was adopted"
    for player in PLAYERS:
        [report] = [m for m in out.collector.to(mail[player])
                    if m["Subject"] == "[dec] Giornata 1 \u2014 resoconto"]
        text = _text(report)
        decided = text.split("Proposte decise:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        # each decision with its votes in words: Bruno's own vote and Carla's for, Dario's
        # against; the rest of the rules' tally by the ruleset's words
        assert decided[0].startswith("Proposta 1 «Congedi» di Bruno: approvata \u2014 "
                                     "2 favorevoli, 1 contrario (Tesoro dei favorevoli ")
        assert decided[1].startswith("Proposta 2 «Più lettere» di Carla: approvata \u2014 "
                                     "2 favorevoli, 0 contrari")
        assert decided[2].startswith("Proposta 3 «Via le scuole» di Dario: respinta")
        # a flag not raised and a quorum of 0 say nothing: left out
        assert "seconda metà" not in decided[0] and "quorum 0" not in decided[0]
        rules = text.split("Regole nuove o modificate, per intero:\n", 1)[1]
        assert "«Congedi»:\nOgni giocatore si congeda.\n" in rules
        assert re.search(rf"Regola 300 «[^»\n]+»:\n{re.escape(NEW_300)}\n", rules)
        standings = text.split("Classifica:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert sorted(line.split(":")[0] for line in standings) == PLAYERS
        assert all(" Tesoro " in line and line.endswith(" N") for line in standings)
        # what is due next: the next deadline by its name in the game, the time in words
        assert "Cosa viene ora:\nProssima scadenza: fine della Giornata, " \
            "lunedì 30 marzo 2026, 09:00 UTC." in text
        # nothing in a developer's or in English words
        for leftover in ("second half", "owner", "Reason", "Motivo: vote", "True", "False",
                         " for ", "against", "_"):
            assert leftover not in text, f"{leftover!r} in {player}'s report:\n{text}"
        assert len(report["Subject"]) <= 78


def test_a_digest_reader_gets_the_proposal_whole_and_its_code(mail_service: Service,
                                                              out: MailServer) -> None:
    mail = decameronomic(mail_service, players=PLAYERS)
    intake = Intake(mail_service)
    intake.receive(letter(mail["Dario"], personal(intake, "Dario"), "digest"), "t")
    intake.receive(letter(mail["Bruno"], personal(intake, "Bruno"),
                          f"proposta: Congedi\nOgni giocatore si congeda.\n```\n{CODE}```\n"),
                   "t")
    later = mail_service.outbox.clock() + timedelta(days=1, minutes=1)
    mail_service.outbox.clock = lambda: later
    deliver_once(mail_service.outbox, SmtpTransport(smtp_target(out.url())))
    # the day's digest, its subject in the reader's language too
    [digest] = [m for m in out.collector.to(mail["Dario"])
                if m["Subject"] == "[dec] Riassunto del giorno"]
    assert "Ogni giocatore si congeda." in _text(digest)
    assert _files(digest) == [("rule-p1-1.star", "text/plain", CODE)]


def test_a_revision_says_what_changed() -> None:
    old = {"number": 4, "title": "Gruß", "author": "Anna", "text": "",
           "changes": [{"type": "enact", "title": "Gruß", "text": "Jeder grüßt den GM."}]}
    new = {**old, "number": 6, "data": {"replaces": 4, "stage": "deferred"},
           "changes": [{"type": "enact", "title": "Gruß", "text": "Jeder grüßt alle."}]}
    words = Words(language="de", proposal_data={
        "stage": {"label": "", "values": {"deferred": "vertagt (R.6(2))"}},
        "replaces": {"label": "ersetzt den vertagten Antrag", "values": {}}})
    text, files = proposal_in_full(new, {}, words, replaced=old)
    assert text.startswith("Vorschlag 6 „Gruß“ von Anna\nvertagt (R.6(2))\n"
                           "ersetzt den vertagten Antrag: 4\n")
    assert "Er ersetzt den Vorschlag 4; was sich geändert hat:" in text
    assert "\n-Jeder grüßt den GM.\n+Jeder grüßt alle." in text and files == []


def test_a_deferred_proposal_revised_is_announced_with_what_changed(
        mail_service: Service) -> None:
    """Anderwelt R.6(2), R.6(4): deferred in round 2, rewritten by its author in round 3 —
    the other players are told the new version whole and what changed against the old."""
    service, players = mail_service, ["Anna", "Bert", "Cora"]
    service.commands.create_game("anderwelt", game_id="aw", players=players,
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z", seed=4)
    mail = seat_all(service, "aw", players)

    def do(actor: str, action: str, args: dict[str, object]) -> None:
        outcome = service.commands.perform("aw", actor, action, args)
        assert outcome.accepted, outcome.message

    def enact(text: str) -> list[dict[str, str]]:
        return [{"type": "enact", "title": "Gruß", "text": text}]

    do("Max", "set_zat", {"days": 7})
    do("Anna", "propose", {"title": "Gruß", "changes": enact("Jeder grüßt den GM.")})
    service.commands.advance("aw", to="2026-03-08T11:00:00Z")
    do("Max", "set_zat", {"days": 7})
    for player in players:
        do(player, "vote", {"proposal": 1, "choice": "for", "deferral": "Ja"})
    service.commands.advance("aw", to="2026-03-15T12:00:00Z")
    do("Max", "set_zat", {"days": 7})
    do("Anna", "revise", {"replaces": 1, "title": "Gruß", "changes": enact("Jeder grüßt alle.")})
    [told] = [m for m in service.outbox.messages(kind="announce")
              if m["recipient"] == mail["Bert"] and m["subject"].startswith("[aw] Vorschlag 2")]
    assert told["subject"] == "[aw] Vorschlag 2 „Gruß“ \u2014 Runde 3"
    body = told["body"]
    assert "Vorschlag 1 „Gruß“ ist zurückgezogen" in body  # the old one, withdrawn
    assert "vertagt (R.6(2))\nAbstimmung in Runde: 4\nersetzt den vertagten Antrag: 1" in body
    assert "Er ersetzt den Vorschlag 1; was sich geändert hat:\n--- Vorschlag 1\n" in body
    assert "\n-Jeder grüßt den GM.\n+Jeder grüßt alle." in body


def test_attachments_kept_on_postgresql(postgres_url: str) -> None:
    service = open_service(postgres_url)
    try:
        game = f"att{uuid.uuid4().hex[:10]}"
        emails = decameronomic(service, game, domain=f"{game}.test")
        intake = Intake(service)
        raw = letter(emails["Bruno"], personal(intake, "Bruno", game),
                     f"proposta: Congedi\nOgni giocatore si congeda.\n```\n{CODE}```\n")
        assert intake.receive(raw, "t").status == "decided"
        announced = [m for m in service.outbox.messages(kind="announce") if m["game"] == game]
        assert len(announced) == 2
        assert all(m["attachments"] == [{"filename": "rule-p1-1.star", "content": CODE}]
                   for m in announced)
    finally:
        service.close()

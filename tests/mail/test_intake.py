"""Letters in: kept once, decided once, authenticated, answered (or not) as they deserve."""

from __future__ import annotations

import pytest

from scriba.mail.intake import Intake
from scriba.service import Service

from .conftest import DOMAIN, Keys, letter
from .helpers import decameronomic, personal


@pytest.fixture
def game(mail_service: Service) -> Service:
    decameronomic(mail_service)
    return mail_service


def _proposals(service: Service) -> dict[str, str]:
    return {p["label"]: p["status"] for p in service.reads.proposals("dec")}


def test_the_same_letter_twice_is_decided_once(game: Service) -> None:
    intake = Intake(game)
    raw = letter("bruno@players.test", personal(intake, "Bruno"),
                 "proposta: Saluti\nlabel: p1\nOgni giocatore saluta.\n")
    first = intake.receive(raw, "test")
    second = intake.receive(raw, "test")
    assert (first.status, second.status) == ("decided", "duplicate")
    assert list(_proposals(game)) == ["p1"]
    assert len(intake.mailroom.letters()) == 1
    receipts = game.outbox.messages(kind="receipt")
    assert len(receipts) == 1 and "proposta 1" in receipts[0]["body"]
    assert receipts[0]["headers"]["In-Reply-To"] == first.message_id


def test_a_forged_from_is_held_and_the_real_player_told(game: Service, keys: Keys) -> None:
    keys.publish("players.test")
    intake = Intake(game, dnsfunc=keys.dnsfunc)
    forged = letter("bruno@players.test", f"scriba+dec@{DOMAIN}",
                    "proposta: Saluti\nlabel: p1\nTesto.\n", subject="my move")
    received = intake.receive(forged, "test")
    assert received.status == "held" and _proposals(game) == {}
    [note] = game.outbox.messages(kind="held")
    assert note["recipient"] == "bruno@players.test"
    assert "my move" in note["body"] and personal(intake, "Bruno") in note["body"]
    # signed by the player's domain, the same letter counts
    signed = keys.sign(letter("bruno@players.test", f"scriba+dec@{DOMAIN}",
                              "proposta: Saluti\nlabel: p1\nTesto.\n"), "players.test")
    assert intake.receive(signed, "test").status == "decided"
    assert _proposals(game) == {"p1": "open"}


def test_a_signature_of_another_domain_or_a_tampered_letter_does_not_count(
        game: Service, keys: Keys) -> None:
    keys.publish("evil.test")
    keys.publish("players.test")
    intake = Intake(game, dnsfunc=keys.dnsfunc)
    other = keys.sign(letter("bruno@players.test", f"scriba+dec@{DOMAIN}",
                             "proposta: A\nlabel: p1\nT.\n"), "evil.test")
    assert intake.receive(other, "test").status == "held"
    signed = keys.sign(letter("bruno@players.test", f"scriba+dec@{DOMAIN}",
                              "proposta: A\nlabel: p2\nT.\n"), "players.test")
    tampered = signed.replace(b"label: p2", b"label: p9")
    assert intake.receive(tampered, "test").status == "held"
    assert _proposals(game) == {}


def test_personal_address_rotation(game: Service) -> None:
    intake = Intake(game)
    old = personal(intake, "Bruno")
    intake.mailroom.secret("dec", "Bruno", rotate=True)
    body = "proposta: A\nlabel: p1\nT.\n"
    assert intake.receive(letter("bruno@players.test", old, body), "test").status == "held"
    new = personal(intake, "Bruno")
    assert new != old
    assert intake.receive(letter("bruno@players.test", new, body), "test").status == \
        "decided"


def test_unknown_senders_get_one_short_reply(game: Service) -> None:
    intake = Intake(game)
    for n in range(3):
        raw = letter("stranger@else.test", f"scriba+dec@{DOMAIN}", f"vote {n} for")
        assert intake.receive(raw, "test").status == "refused"
    replies = game.outbox.messages(kind="unknown_sender")
    assert len(replies) == 1 and replies[0]["recipient"] == "stranger@else.test"


def test_automatic_replies_and_bounces_are_never_answered(game: Service) -> None:
    intake = Intake(game)
    to = personal(intake, "Bruno")
    cases = [letter("bruno@players.test", to, "I am away", Auto_Submitted="auto-replied"),
             letter("bruno@players.test", to, "list", Precedence="list"),
             letter("MAILER-DAEMON@players.test", to, "Undelivered"),
             letter("bruno@players.test", to, "ours", X_Loop=f"scriba@{DOMAIN}")]
    assert [intake.receive(raw, "test").status for raw in cases] == ["ignored"] * 4
    bounce = letter("bruno@players.test", to, "bounce")
    assert intake.receive(bounce, "test", envelope_from="").status == "ignored"
    assert game.outbox.messages() == []


def test_a_mail_loop_stops(game: Service) -> None:
    """An autoresponder that strips every header answers each reply it gets."""
    intake = Intake(game)
    outbox = game.outbox
    raw = letter("bruno@players.test", personal(intake, "Bruno"), "Hello there")
    for n in range(20):
        intake.receive(raw, "test")
        replies = [m for m in outbox.messages() if m["recipient"] == "bruno@players.test"]
        raw = letter("bruno@players.test", personal(intake, "Bruno"),
                     f"Thanks for your message {n}, I am away", subject="Re: move")
    replies = [m for m in outbox.messages() if m["recipient"] == "bruno@players.test"]
    assert len(replies) == 1  # one "no command found" a day, then silence


def test_a_ten_megabyte_attachment_is_refused_politely(game: Service) -> None:
    intake = Intake(game)
    raw = letter("bruno@players.test", personal(intake, "Bruno"),
                 "proposta: Grande\nlabel: p1\nTesto.\n",
                 attachments={"big.star": b"x" * (10 * 1024 * 1024)})
    received = intake.receive(raw, "test")
    assert received.status == "refused" and _proposals(game) == {}
    [reply] = game.outbox.messages(kind="too_large")
    assert "MB" in reply["body"] and reply["recipient"] == "bruno@players.test"
    kept = intake.mailroom.letters()[0]
    assert kept["status"] == "refused" and kept["size"] < 100_000


def test_game_by_subject_tag_and_no_game(game: Service, keys: Keys) -> None:
    keys.publish("players.test")
    intake = Intake(game, dnsfunc=keys.dnsfunc)
    tagged = keys.sign(letter("bruno@players.test", f"scriba@{DOMAIN}",
                              "proposta: A\nlabel: p1\nT.\n", subject="[dec] mossa"),
                       "players.test")
    assert intake.receive(tagged, "test").game == "dec"
    lost = letter("bruno@players.test", f"scriba@{DOMAIN}", "vote 1 for")
    assert intake.receive(lost, "test").status == "refused"
    assert game.outbox.messages(kind="no_game")


def test_each_command_answered_in_order_in_the_players_language(game: Service) -> None:
    intake = Intake(game)
    raw = letter("carla@players.test", personal(intake, "Carla"),
                 "Buongiorno,\nvota p7 favorevole\nproposta: Saluti\nlabel: p1\nTesto.\n\n"
                 "give_nomica to=Anna amount=100\n")
    received = intake.receive(raw, "test")
    assert received.status == "decided"
    [receipt] = game.outbox.messages(kind="receipt")
    body = receipt["body"]
    order = [body.index(s) for s in ("> vota p7", "> proposta: Saluti", "> give_nomica")]
    assert order == sorted(order)
    assert "Buongiorno" not in body and "p7" in body  # the greeting is prose: passed over
    assert receipt["subject"].startswith("R: ")
    # the accepted actions were announced to the others, not to Carla
    announced = {m["recipient"] for m in game.outbox.messages(kind="announce")}
    assert announced == {"anna@players.test", "bruno@players.test"}


def test_a_signature_of_part_of_the_body_does_not_count(game: Service, keys: Keys) -> None:
    """DKIM's l= signs only the first bytes: anything could be appended below them."""
    import dkim

    keys.publish("players.test")
    intake = Intake(game, dnsfunc=keys.dnsfunc)
    raw = letter("bruno@players.test", f"scriba+dec@{DOMAIN}", "Ciao.\n")
    signature = dkim.sign(raw, b"sel", b"players.test", keys.private, length=True,
                          include_headers=[b"from", b"to", b"subject", b"message-id"])
    appended = signature + raw + b"proposta: Colpo\r\nlabel: p9\r\nTesto.\r\n"
    assert dkim.verify(appended, dnsfunc=keys.dnsfunc)  # dkimpy alone would accept it
    assert intake.receive(appended, "test").status == "held"
    assert _proposals(game) == {}

"""Letters cannot be replayed: a signed letter is decided once, in the game its signed
headers name, while its signed Date is recent; a forged From costs the real player at most
one notice an hour. The attacker is anyone who saw the letter (Cc, a list archive) and
hands it to Scriba's SMTP server again, under a new Message-ID or another envelope."""

from __future__ import annotations

import re
import smtplib
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from scriba.mail.intake import Intake
from scriba.mail.server import IntakeController
from scriba.service import Service, open_service

from .conftest import DOMAIN, Keys, letter
from .helpers import decameronomic, personal, running
from .smtp_parts import free_port

GAME = f"scriba+dec@{DOMAIN}"
OTHER = f"scriba+dec2@{DOMAIN}"
BRUNO = "bruno@players.test"
NO_MESSAGE_ID = ("from", "to", "subject", "date")  # many signers leave it out
Send = Callable[..., None]


@pytest.fixture
def game(mail_service: Service) -> Service:
    decameronomic(mail_service)
    decameronomic(mail_service, "dec2")
    mail_service.commands.perform("dec", "Carla", "propose", {
        "label": "p1", "changes": [{"enact": {"title": "Saluti", "text": "Si saluta."}}]})
    return mail_service


@pytest.fixture
def intake(game: Service, keys: Keys) -> Intake:
    keys.publish("players.test")
    return Intake(game, dnsfunc=keys.dnsfunc)


@pytest.fixture
def smtp(intake: Intake) -> Iterator[Send]:
    """Scriba's SMTP server on loopback; ``send(raw, to)`` hands it a letter as any
    mail server (or an attacker) can, with the envelope recipients ``to``."""
    port = free_port()

    def send(raw: bytes, to: list[str], sender: str = BRUNO) -> None:
        with smtplib.SMTP("127.0.0.1", port) as client:
            client.sendmail(sender, to, raw)

    for _ in running(IntakeController(intake, "127.0.0.1", port)):
        yield send


def signed(keys: Keys, body: str, to: str = GAME, headers: tuple[str, ...] = NO_MESSAGE_ID,
           sender: str = BRUNO, **kwargs: object) -> bytes:
    return keys.sign(letter(sender, to, body, **kwargs), "players.test", headers=headers)


def new_message_id(raw: bytes, n: int = 1) -> bytes:
    """The same letter under a new Message-ID, as a replay sends it."""
    return re.sub(rb"(?im)^Message-ID:.*$", f"Message-ID: <replay-{n}@evil.test>".encode(),
                  raw, count=1)


def statuses(intake: Intake) -> list[str]:
    return [kept["status"] for kept in intake.mailroom.letters()]


def acts(service: Service, game: str, player: str = "Bruno") -> list[str]:
    """What the player did in the game, as its log tells (refused commands included)."""
    return [e["type"] for e in service.reads.log(game) if e.get("actor") == player]


def receipts(service: Service, to: str = BRUNO) -> list[dict]:
    return [m for m in service.outbox.messages(kind="receipt") if m["recipient"] == to]


def labels(service: Service, game: str) -> list[str]:
    return [p["label"] for p in service.reads.proposals(game)]


# --- a letter's identity is its signature ---------------------------------------------------
def test_a_signed_vote_sent_again_under_a_new_message_id_is_decided_once(
        game: Service, intake: Intake, keys: Keys, smtp: Send) -> None:
    vote = signed(keys, "vota p1 favorevole")
    smtp(vote, [GAME])
    smtp(new_message_id(vote), [GAME])
    smtp(new_message_id(vote, 2), [GAME], sender="someone@evil.test")
    assert statuses(intake) == ["decided", "duplicate", "duplicate"]
    assert acts(game, "dec") == ["vote_cast"]  # not even a refused second vote
    assert len(receipts(game)) == 1  # the sender gets no second set of answers
    kept = intake.mailroom.letters()
    assert len({k["message_id"] for k in kept}) == 3  # every copy kept as received


def test_a_signed_letter_sent_to_another_games_address_does_not_act_there(
        game: Service, intake: Intake, keys: Keys, smtp: Send) -> None:
    proposal = signed(keys, "proposta: Saluti\nlabel: p7\nOgni giocatore saluta.\n")
    smtp(proposal, [GAME])
    smtp(new_message_id(proposal), [OTHER])  # the envelope says dec2, the signed To dec
    assert statuses(intake) == ["decided", "duplicate"]
    assert labels(game, "dec2") == [] and labels(game, "dec") == ["p1", "p7"]
    # never seen before, and delivered only to dec2: it acts in the game it names
    fresh = signed(keys, "proposta: Congedi\nlabel: p8\nOgni giocatore si congeda.\n")
    smtp(fresh, [OTHER])
    assert labels(game, "dec2") == [] and labels(game, "dec") == ["p1", "p7", "p8"]


def test_racing_copies_of_a_signed_letter_are_decided_once(
        game: Service, keys: Keys) -> None:
    """Two intake processes take two copies at once; the unique signature decides."""
    assert _race(game, "dec", "players.test", keys) == ["decided", "duplicate"]
    assert acts(game, "dec") == ["vote_cast"]
    assert len(receipts(game)) == 1


def test_racing_copies_are_decided_once_on_postgresql(postgres_url: str, keys: Keys) -> None:
    service = open_service(postgres_url)
    try:
        game = f"race{datetime.now(UTC).strftime('%H%M%S%f')}"
        decameronomic(service, game, domain=f"{game}.test")
        service.commands.perform(game, "Carla", "propose", {
            "label": "p1", "changes": [{"enact": {"title": "T", "text": "x"}}]})
        assert _race(service, game, f"{game}.test", keys) == ["decided", "duplicate"]
        assert acts(service, game) == ["vote_cast"]
        assert len(receipts(service, f"bruno@{game}.test")) == 1
    finally:
        service.close()


def _race(service: Service, game: str, domain: str, keys: Keys) -> list[str]:
    """Bruno's signed vote and a copy under a new Message-ID, taken at once by two
    intakes on two connections; what each made of its copy."""
    keys.publish(domain)
    both_verifying = threading.Barrier(2, timeout=30)

    def dns(name: bytes | str, timeout: int = 5) -> bytes | None:
        both_verifying.wait()  # each copy is kept and claimed before either goes on
        return keys.dnsfunc(name)

    services = [service, open_service(service.commands.store.url)]
    intakes = [Intake(each, dnsfunc=dns) for each in services]
    vote = keys.sign(letter(f"bruno@{domain}", f"scriba+{game}@{DOMAIN}",
                            "vota p1 favorevole"), domain, headers=NO_MESSAGE_ID)
    copies = [vote, new_message_id(vote)]
    results: list[str] = []
    threads = [threading.Thread(target=lambda i=i: results.append(
        intakes[i].receive(copies[i], "smtp").status)) for i in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        services[1].close()
    return sorted(results)


# --- the game comes from the signed headers -----------------------------------------------
def test_a_signature_that_does_not_cover_to_or_date_authenticates_nothing(
        game: Service, intake: Intake, keys: Keys) -> None:
    for n, headers in enumerate([("from", "subject", "date", "message-id"),
                                 ("from", "to", "subject", "message-id")]):
        raw = signed(keys, f"proposta: Colpo\nlabel: q{n}\nTesto.\n", headers=headers)
        assert intake.receive(raw, "smtp", BRUNO, [OTHER]).status == "held"
    assert labels(game, "dec") == ["p1"] and labels(game, "dec2") == []


def test_headers_added_above_or_hidden_beside_the_signed_ones_are_not_believed(
        game: Service, intake: Intake, keys: Keys) -> None:
    # a second To above the signed one (DKIM checks the lowest, a reader sees the top)
    proposal = signed(keys, "proposta: Saluti\nlabel: p7\nTesto.\n")
    assert intake.receive(f"To: {OTHER}\r\n".encode() + proposal, "smtp").status == "held"
    # a lone CR hides a line from DKIM that Python's email reads: Anna's letter made
    # Bruno's, or a greeting of Bruno's given a command before its body
    anna = signed(keys, "Ciao a tutti", sender="anna@players.test")
    as_bruno = b"X-Note: ok\rFrom: " + BRUNO.encode() + b"\r\n" + anna
    greeting = signed(keys, "Ciao a tutti")
    head, _, body = greeting.partition(b"\r\n\r\n")
    smuggled = head + b"\r\nX-Note: ok\rvota p1 contrario\r\n\r\n" + body
    for raw in (as_bruno, smuggled):
        assert intake.receive(raw, "smtp").status == "held"
    assert labels(game, "dec2") == [] and acts(game, "dec") == []


def test_a_letter_acts_only_in_a_game_its_signed_to_or_cc_names(
        game: Service, intake: Intake, keys: Keys) -> None:
    friends = "amici@players.test"
    bcc = signed(keys, "proposta: A\nlabel: p2\nT.\n", to=friends)
    elsewhere = signed(keys, "proposta: B\nlabel: p3\nT.\n", to="scriba+dec@other.test")
    unsigned_cc = signed(keys, "proposta: C\nlabel: p4\nT.\n", to=friends, Cc=GAME)
    for raw in (bcc, elsewhere, unsigned_cc):
        assert intake.receive(raw, "smtp", BRUNO, [GAME]).status == "refused"
    refusals = game.outbox.messages(kind="not_addressed")
    assert len(refusals) == 3 and all(m["recipient"] == BRUNO for m in refusals)
    assert GAME in refusals[0]["body"] and "Ccn" in refusals[0]["body"]  # in Italian
    signed_cc = signed(keys, "proposta: D\nlabel: p5\nT.\n", to=friends, Cc=GAME,
                       headers=(*NO_MESSAGE_ID, "cc"))
    assert intake.receive(signed_cc, "smtp", BRUNO, [GAME]).status == "decided"
    assert labels(game, "dec") == ["p1", "p5"]


# --- a signed Date must be recent ----------------------------------------------------------
def test_a_signed_date_eight_days_old_is_refused_with_the_reason(
        game: Service, keys: Keys) -> None:
    now = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
    keys.publish("players.test")
    game.outbox.clock = lambda: now
    intake = Intake(game, dnsfunc=keys.dnsfunc)
    bruno = next(s for s in game.seats.seats("dec") if s.player == "Bruno")
    game.accounts.update_preferences(bruno.account_id, language="de")
    old = signed(keys, "proposta: Vecchia\nlabel: p2\nT.\n", date=now - timedelta(days=8))
    ahead = signed(keys, "proposta: Futura\nlabel: p3\nT.\n", date=now + timedelta(days=1))
    for raw in (old, ahead):
        assert intake.receive(raw, "smtp").status == "refused"
    replies = game.outbox.messages(kind="stale")
    assert [m["recipient"] for m in replies] == [BRUNO, BRUNO]
    assert "7 Tagen" in replies[0]["body"] and "Oct 2026" in replies[0]["body"]
    assert intake.receive(old, "smtp").status == "duplicate"  # and told only once
    recent = signed(keys, "proposta: Recente\nlabel: p4\nT.\n", date=now - timedelta(days=6))
    assert intake.receive(recent, "smtp").status == "decided"
    assert labels(game, "dec") == ["p1", "p4"]


# --- personal addresses ---------------------------------------------------------------------
def test_a_letter_to_a_personal_address_counts_and_is_decided_once(
        game: Service, intake: Intake, keys: Keys, smtp: Send) -> None:
    mine = personal(intake, "Bruno")
    vote = letter(BRUNO, mine, "vota p1 favorevole")  # no signature: the address vouches
    smtp(vote, [mine])
    smtp(new_message_id(vote), [mine])
    assert statuses(intake) == ["decided", "duplicate"]
    # signed as well, and sent again to the game's public address
    proposal = signed(keys, "proposta: Saluti\nlabel: p7\nTesto.\n", to=mine)
    smtp(proposal, [mine])
    smtp(new_message_id(proposal, 2), [GAME])
    assert statuses(intake)[2:] == ["decided", "duplicate"]
    assert acts(game, "dec") == ["vote_cast", "proposal_submitted"]
    assert len(receipts(game)) == 2


# --- held-letter notices --------------------------------------------------------------------
def test_forged_letters_tell_the_real_player_once_an_hour(game: Service) -> None:
    now = [datetime(2026, 11, 2, 12, 0, tzinfo=UTC)]
    game.outbox.clock = lambda: now[0]
    intake = Intake(game)
    for n in range(5):
        forged = letter(BRUNO, GAME, f"proposta: Falsa\nlabel: f{n}\nT.\n",
                        subject=f"mossa {n}")
        assert intake.receive(forged, "smtp").status == "held"
        now[0] += timedelta(minutes=10)
    notices = game.outbox.messages(kind="held")
    assert [m["recipient"] for m in notices] == [BRUNO]
    assert "mossa 0" in notices[0]["body"]
    now[0] += timedelta(minutes=20)  # the next hour
    intake.receive(letter(BRUNO, GAME, "proposta: Falsa\nlabel: f9\nT.\n"), "smtp")
    assert len(game.outbox.messages(kind="held")) == 2
    assert labels(game, "dec") == ["p1"]

"""One e-mail is one letter to the rules, and Reply just works: a DecameroNomic Giornata
by mail, letters written as players write them (greetings, prose, sign-offs), through
Scriba's SMTP intake and out through a real SMTP server.

Rule 300: "al massimo 2 lettere di Proposte, ognuna delle quali contenga al massimo 2
proposte"; rule 2600: the votes on a letter's proposals are given "contestualmente in
un'unica lettera". Every mail a player receives names their personal address as Reply-To
and List-Post; a plain Reply from their registered address counts without a signature, a
letter to another player's address is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest

from scriba.mail.intake import Intake
from scriba.service import Service

from .conftest import DOMAIN, Keys, letter
from .helpers import decameronomic, personal
from .test_games_by_mail import Post

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
PUBLIC = "https://scriba.example"


@pytest.fixture
def post(mail_service: Service, keys: Keys, monkeypatch: pytest.MonkeyPatch) -> Iterator[Post]:
    monkeypatch.setenv("SCRIBA_PUBLIC_URL", PUBLIC)
    with Post.running(mail_service, keys) as running:
        yield running


def _box(post: Post, address: str) -> list[EmailMessage]:
    return post.out.collector.to(address)


def _text(message: EmailMessage) -> str:
    part = message.get_body(("plain",)) if message.is_multipart() else message
    return f"{message['Subject']}\n{part.get_content() if part is not None else ''}"


def _letters(service: Service) -> dict[int, int]:
    return {p["number"]: p["data"]["letter"] for p in service.reads.proposals("dec")}


def test_one_email_is_one_letter_and_reply_just_works(mail_service: Service,
                                                      post: Post) -> None:
    service = mail_service
    mail = decameronomic(service, players=PLAYERS)
    game = f"scriba+dec@{DOMAIN}"
    # Bruno's first e-mail: two proposals, one letter (rule 300 allows two of two)
    post.send(mail["Bruno"], game,
              "Cari amici,\n\necco le mie proposte per questa Giornata.\n\n"
              "proposta: Saluti\nOgni giocatore saluta il Re.\n\n"
              "proposta: Congedi\nOgni giocatore si congeda.\n\n-- \nBruno\n",
              subject="Due proposte")
    assert _letters(service) == {1: 1, 2: 1}
    # his second e-mail is his second letter; a third is one too many
    post.send(mail["Bruno"], game, "Ancora una.\n\nproposta: Banchetto\n"
              "Ogni Giornata si apre con un banchetto.\n", subject="Seconda lettera")
    assert _letters(service) == {1: 1, 2: 1, 3: 2}
    post.send(mail["Bruno"], game, "proposta: Torneo\nOgni Giornata ha un torneo.\n",
              subject="Terza lettera")
    assert _letters(service) == {1: 1, 2: 1, 3: 2}

    # Carla votes on Bruno's first letter in one e-mail, a line for each proposal
    post.send(mail["Carla"], game, "Caro Bruno,\n\nvota 1 favorevole\nvota 2 contrario\n\n"
              "A presto,\nCarla\n", subject="I miei voti")
    # Dario votes on proposal 1 without 2: refused by 2600; his vote on 3 counts
    post.send(mail["Dario"], game, "vota 1 favorevole\nvota 3 favorevole\n",
              subject="Voti")
    votes = {p["number"]: set(p["votes"]) for p in service.reads.proposals("dec")}
    assert votes == {1: {"Bruno", "Carla"}, 2: {"Bruno", "Carla"}, 3: {"Bruno", "Dario"}}
    # then both, in one letter
    post.send(mail["Dario"], game, "Scusate:\nvota 1 favorevole\nvota 2 favorevole\n",
              subject="Voti sulla prima lettera")
    assert post.deliver()["failed"] == 0

    # Anna (the King) answers a mail she got with her client's Reply: her personal address,
    # unsigned (her domain does not sign), from her registered address: it counts
    [first, *_] = _box(post, mail["Anna"])
    anna = personal(post.intake, "Anna")
    assert first["Reply-To"] == anna and first["List-Post"] == f"<mailto:{anna}>"
    post.send(mail["Anna"], first["Reply-To"], "vota 1 favorevole\nvota 2 contrario\n\n"
              f"> {_text(first).splitlines()[1]}\n", subject=f"Re: {first['Subject']}",
              sign=False)
    # Dario writes to Anna's address: nobody acts as another player
    post.send(mail["Dario"], anna, "vota 3 contrario\n", subject="Re: voto", sign=False)
    votes = {p["number"]: set(p["votes"]) for p in service.reads.proposals("dec")}
    assert votes == {1: {"Anna", "Bruno", "Carla", "Dario"},
                     2: {"Anna", "Bruno", "Carla", "Dario"}, 3: {"Bruno", "Dario"}}
    assert post.deliver()["failed"] == 0

    # what every mailbox holds
    boxes = {p: [_text(m) for m in _box(post, mail[p])] for p in PLAYERS}
    bruno = boxes["Bruno"]
    assert any("Hai già inviato 2 lettere" in m and "300" in m for m in bruno), bruno
    dario = boxes["Dario"]
    assert any("manca il voto sulla proposta 2" in m and "2600" in m for m in dario)
    assert any("Rifiutato" in m and "indirizzo personale" in m for m in dario)
    for player in ("Anna", "Carla", "Dario"):  # Bruno's three proposals reached them all
        told = "\n".join(boxes[player])
        for title in ("Saluti", "Congedi", "Banchetto"):
            assert title in told, (player, title)
        assert "Torneo" not in told  # the refused third letter was announced to nobody
    # every mail names its reader's own address, and one-click unsubscribe
    for player in PLAYERS:
        address = personal(post.intake, player)
        for message in _box(post, mail[player]):
            assert message["Reply-To"] == address, (player, message["Subject"])
            assert message["List-Post"] == f"<mailto:{address}>"
            assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
            assert message["List-Unsubscribe"].startswith(f"<{PUBLIC}/mail/unsubscribe/dec/")
            assert player not in message["Reply-To"]  # the token is not the name


def test_a_stranger_asks_for_the_rules_and_joins_by_mail(mail_service: Service,
                                                         post: Post) -> None:
    service = mail_service
    mail = decameronomic(service, players=PLAYERS)
    game = f"scriba+dec@{DOMAIN}"
    elena = "elena@players.test"
    # Elena plays no game: she asks for a rule and to join (rule 4: "dopo averne fatto
    # richiesta all'Umile Scriba"), in a letter as people write them
    post.send(elena, game, "Buongiorno,\n\nho letto delle vostre Giornate.\n\n"
              "Iscrivimi come Elena\n\nregola 300\n\nGrazie,\nElena\n",
              subject="Vorrei giocare")
    # someone else asks, unsigned, for the standings and the open proposals, and to join
    post.send("zoe@elsewhere.test", game, "classifica\nproposte\niscrivimi\n",
              subject="Domande", sign=False)
    # a player asks for the rules: answered, not "no command found"
    post.send(mail["Carla"], game, "Ciao Scriba,\n\nregolamento\n\nCarla\n",
              subject="Regole")
    assert post.deliver()["failed"] == 0
    [answer] = [_text(m) for m in _box(post, elena)]
    assert "partecipare alla partita dec come Elena" in answer
    assert "Elena ha chiesto di partecipare" in answer  # the rules' own answer
    assert "Regola 300" in answer and "al massimo 2 lettere di Proposte" in answer
    [zoe] = [_text(m) for m in _box(post, "zoe@elsewhere.test")]
    assert "La classifica della partita dec" in zoe and "Bruno" in zoe
    assert "non c'è alcuna proposta in attesa" in zoe
    assert "firma DKIM" in zoe  # her request to join, unsigned, was not acted on
    carla = [_text(m) for m in _box(post, mail["Carla"])]
    assert any("Le regole in vigore nella partita dec" in m and "Regola 2600" in m
               for m in carla)
    assert "Elena" not in service.reads.status("dec")["players"]  # not before the Giornata
    # the other players heard of her request
    for player in PLAYERS:
        assert any("Elena ha chiesto di partecipare" in m
                   for m in [_text(m) for m in _box(post, mail[player])]), player

    # a proposal approved, so that a new King begins Giornata 2 (rule 3)
    post.send(mail["Bruno"], game, "proposta: Benvenuti\nOgni nuovo Giocatore è accolto.\n",
              subject="Proposta")
    for player in ("Anna", "Carla", "Dario"):
        post.send(mail[player], game, "vota 1 favorevole\n", subject="Voto")
    # Giornata 2 begins: rule 4 makes her a player, and her seat is bound: her mail starts
    service.commands.advance("dec", to="2026-03-16T09:00:01Z")
    assert "Elena" in service.reads.status("dec")["players"]
    assert service.seats.player_for_email("dec", elena) == "Elena"
    assert post.deliver()["failed"] == 0
    after = [m for m in _box(post, elena)][1:]
    assert any("Giornata 1" in str(m["Subject"]) for m in after), [m["Subject"] for m in after]
    assert all(m["Reply-To"] == personal(post.intake, "Elena") for m in after)
    # and she plays by mail: a Reply from her registered address, unsigned
    post.send(elena, after[0]["Reply-To"], "vota 1 favorevole\n", sign=False,
              subject="Re: Giornata")
    letters = post.intake.mailroom.letters("dec")
    assert letters[-1]["player"] == "Elena" and letters[-1]["status"] == "decided"


def test_a_join_request_waits_for_the_officer_when_the_rules_have_no_way_in(
        mail_service: Service, post: Post) -> None:
    service = mail_service
    service.commands.create_game("suber", game_id="sub", players=["Anna", "Bert"],
                                 start="2026-03-02T09:00:00Z")
    newcomer = "nora@players.test"
    post.send(newcomer, f"scriba+sub@{DOMAIN}", "Hello!\n\njoin as Nora\n\nNora\n",
              subject="May I play?")
    [waiting] = service.joins.queue("sub")
    assert (waiting["player"], waiting["email"]) == ("Nora", newcomer)
    assert "Nora" not in service.reads.status("sub")["players"]
    service.joins.accept("sub", waiting["id"])
    assert service.joins.queue("sub") == []
    assert service.seats.player_for_email("sub", newcomer) == "Nora"
    assert post.deliver()["failed"] == 0
    [answer] = [_text(m) for m in _box(post, newcomer)]
    assert "is with its officer" in answer


def test_a_busy_game_sends_a_digest_to_readers_who_never_chose(
        mail_service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIBA_MAIL_BUSY_PER_DAY", "3")
    service = mail_service
    mail = decameronomic(service, players=PLAYERS)
    anna = next(s for s in service.seats.seats("dec") if s.player == "Anna")
    service.accounts.update_preferences(anna.account_id, mail_mode="each")  # her choice
    now = [datetime(2026, 3, 2, 9, 0, tzinfo=UTC)]
    service.outbox.clock = lambda: now[0]
    for n in range(1, 5):  # Bruno: two letters of two proposals; Carla votes on each
        together = {"id": f"letter-{(n + 1) // 2}", "commands": []}
        assert service.commands.perform("dec", "Bruno", "propose", {"changes": [
            {"enact": {"title": f"Legge {n}", "text": "Testo."}}]}, letter=together).accepted
    for first in (1, 3):
        votes = [{"action": "vote", "args": {"proposal": n, "choice": "favorevole"}}
                 for n in (first, first + 1)]
        for n in (first, first + 1):
            assert service.commands.perform(
                "dec", "Carla", "vote", {"proposal": n, "choice": "favorevole"},
                letter={"id": f"votes-{first}", "commands": votes}).accepted
    announced = service.outbox.messages(kind="announce")
    status = {p: [m["status"] for m in announced if m["recipient"] == mail[p]]
              for p in PLAYERS}
    assert status["Anna"] == ["pending"] * 8  # her explicit choice wins
    assert status["Dario"] == ["pending"] * 3 + ["digest"] * 5  # busy after the third
    assert status["Bruno"] == ["pending"] * 3 + ["digest"]  # his own four are not told him
    assert status["Carla"] == ["pending"] * 3 + ["digest"]
    now[0] += timedelta(days=1, minutes=1)
    service.outbox.sweep()
    digests = {m["recipient"] for m in service.outbox.messages(kind="digest")}
    assert digests == {mail["Bruno"], mail["Carla"], mail["Dario"]}


def test_a_stranger_is_answered_a_limited_number_of_times(
        mail_service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIBA_STRANGER_LIMITS", "2/day")
    decameronomic(mail_service, players=PLAYERS)
    intake = Intake(mail_service)
    statuses = [intake.receive(letter("pest@elsewhere.test", f"scriba+dec@{DOMAIN}",
                                      f"classifica\n\n{n}\n"), "t").status for n in range(4)]
    assert statuses == ["decided", "decided", "ignored", "ignored"]
    answers = [m for m in mail_service.outbox.messages(kind="requests")
               if m["recipient"] == "pest@elsewhere.test"]
    assert len(answers) == 2 and all("La classifica della partita dec" in m["body"]
                                     for m in answers)

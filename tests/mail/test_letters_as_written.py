"""Whole letters as players write them (greetings, prose, quotes of earlier mails,
sign-offs, several commands a letter), in Italian and German, through the intake: what is
recorded, and what the receipt says of it."""

from __future__ import annotations

from scriba.mail.intake import Intake
from scriba.service import Service

from .conftest import letter, seat_all
from .helpers import decameronomic, personal


def _receipt(service: Service, address: str) -> str:
    [mail] = [m for m in service.outbox.messages()
              if m["recipient"] == address and m["kind"] in ("receipt", "unclear")]
    return mail["body"]


def _texts(service: Service, game: str) -> dict[str, str]:
    return {str(p.get("title")): p["changes"][0].get("text", "")
            for p in service.reads.proposals(game)}


BRUNO = """Cari amici,

ecco le mie proposte per questa tornata, spero vi piacciano.

Proposta: Cortesia
Ogni giocatore saluta il Re
all'inizio di ogni periodo.
fine

proposta: Banchetto
Ogni periodo si apre con un banchetto.
Voto favorevole alla proposta 1
Cedi Nomica a Carla 50

Un saluto,
Bruno

Il giorno lun 2 mar 2026 alle 10:00 Carla <carla@players.test> ha scritto:
> proposta: Altro
> vota 1 contrario
"""


def test_an_italian_letter_with_two_proposals_a_vote_and_a_gift(mail_service: Service) -> None:
    service = mail_service
    mail = decameronomic(service)
    intake = Intake(service)
    received = intake.receive(letter(mail["Bruno"], personal(intake, "Bruno"), BRUNO,
                                     subject="mosse"), "t")
    assert received.status == "decided"
    # each text ends at its boundary: "fine", the vote under it; no sign-off in a law
    assert _texts(service, "dec") == {
        "Cortesia": "Ogni giocatore saluta il Re\nall'inizio di ogni periodo.",
        "Banchetto": "Ogni periodo si apre con un banchetto."}
    receipt = _receipt(service, mail["Bruno"])
    # each command answered in order, each proposal's text quoted back as recorded
    assert receipt.index("> Proposta: Cortesia") < receipt.index("> proposta: Banchetto") \
        < receipt.index("> Voto favorevole alla proposta 1") \
        < receipt.index("> Cedi Nomica a Carla 50")
    assert "Testo registrato della proposta 1:\n* introdurre una nuova regola, “Cortesia”\n" \
           "> Ogni giocatore saluta il Re\n> all'inizio di ogni periodo.\n" in receipt
    assert "Testo registrato della proposta 2:\n* introdurre una nuova regola, " \
           "“Banchetto”\n> Ogni periodo si apre con un banchetto.\n" in receipt
    # a refusal says so in Italian, with the rule and its reason
    assert "Rifiutato: “Vota” (proposta: 1, scelta: favorevole) — regola 1700: " in receipt
    assert "Accettato: Bruno esegue “Cedi Nomica” (Quanti N: 50, A: Carla)" in receipt
    assert service.reads.summary("dec")["players"]["Carla"]["treasure_pending"] == 50
    # prose, the sign-off and the quoted letter pass without a word
    for prose in ("Cari amici", "ecco le mie", "Un saluto", "Altro", "Scriba non ha capito"):
        assert prose not in receipt


def test_near_misses_are_answered_once_in_the_games_words(mail_service: Service) -> None:
    service = mail_service
    mail = decameronomic(service)
    intake = Intake(service)
    intake.receive(letter(mail["Bruno"], personal(intake, "Bruno"),
                          "proposta: Saluti\nOgni giocatore saluta.\n"), "t")
    carla = ("Ciao Bruno,\n\nbella idea.\n\nStimme 1 Ja\nvotta 1 contrario\n"
             "Cedi Nomca Bruno 5\nvota 1 fav.\nveto 1\n\nA presto,\nCarla\n")
    intake.receive(letter(mail["Carla"], personal(intake, "Carla"), carla), "t")
    [p1] = service.reads.proposals("dec")
    assert p1["votes"]["Carla"] == "for"  # "fav." is favorevole
    receipt = _receipt(service, mail["Carla"])
    assert receipt.count("Scriba non ha capito") == 1  # one note, after the answers
    assert receipt.index("> vota 1 fav.") < receipt.index("Scriba non ha capito")
    assert "- “Stimme 1 Ja” — in questa partita si vota con: favorevole, contrario." \
        in receipt
    assert "- “votta 1 contrario” — un voto indica la proposta" in receipt
    assert "- “Cedi Nomca Bruno 5” — forse intendevi “Cedi Nomica”?" in receipt
    # a move of another's office: refused by the rules, in the game's words
    assert "> veto 1\nRifiutato: “Poni il Veto” (Proposta: 1) — Solo chi ricopre la " \
        "carica Re può fare 'Poni il Veto'; Carla non la ricopre." in receipt
    for word in ("give_nomica", "Ciao Bruno", "bella idea", "A presto", "expected", "King",
                 "'veto'"):
        assert word not in receipt


def test_a_letter_of_prose_alone_gets_no_list_of_its_lines(mail_service: Service) -> None:
    service = mail_service
    mail = decameronomic(service)
    intake = Intake(service)
    intake.receive(letter(mail["Anna"], personal(intake, "Anna"),
                          "Ciao a tutti,\n\nci vediamo venerdì a cena?\n\nAnna\n"), "t")
    reply = _receipt(service, mail["Anna"])
    assert reply.startswith("Scriba non ha trovato comandi nella tua lettera")
    assert "Scriba non ha capito" not in reply and "venerdì" not in reply
    # what can be written, by the game's own labels
    assert "“vota 3 favorevole”" in reply and "“Cedi Nomica”" in reply
    assert "give_nomica" not in reply and "vote_letter" not in reply


ANNA = """Hallo zusammen,

hier mein Zug für diese Runde.

Antrag: Grußpflicht
Klasse: R
Jeder Spieler grüßt den GM
zu Beginn jeder Runde.
Presse: Hallo Anderwelt!
Nomiczahl: 17
Ich stimme mit Ja für 1

Viele Grüße
Anna

Am 1. März 2026 um 10:00 schrieb Max <max@gm.test>:
> Bitte die Züge bis zum ZAT.
> Vorschlag: Alt
"""


def test_a_german_letter_with_a_proposal_press_and_a_number(mail_service: Service) -> None:
    service = mail_service
    players = ["Anna", "Bert", "Cora"]
    service.commands.create_game("anderwelt", game_id="aw", players=players,
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z", seed=4)
    mail = seat_all(service, "aw", players)
    intake = Intake(service)
    to = personal(intake, "Anna", "aw")
    assert intake.receive(letter(mail["Anna"], to, ANNA, subject="Zug"), "t").status \
        == "decided"
    [proposal] = service.reads.proposals("aw")
    change = proposal["changes"][0]
    # "Presse: …" right under the text is the next command, not part of it
    assert change["text"] == "Jeder Spieler grüßt den GM\nzu Beginn jeder Runde."
    assert change["class"] == "R"
    assert service.reads.summary("aw")["players"]["Anna"]["nomic_number"] == 17
    receipt = _receipt(service, mail["Anna"])
    assert "Aufgezeichneter Text des Vorschlags 1:\n* eine neue Regel einführen, " \
           "„Grußpflicht“\n> Jeder Spieler grüßt den GM\n> zu Beginn jeder Runde.\n" \
        in receipt
    assert "Angenommen: Anna führt „Presse“ aus (Text: Hallo Anderwelt!)" in receipt
    assert "Abgelehnt: „Abstimmen“ (Vorschlag: 1, Wahl: ja) — Regel G.12: " in receipt
    for prose in ("Hallo zusammen", "Viele Grüße", "Alt", "nomic_number"):
        assert prose not in receipt
    # a vote word of another language: the game's own words, in German
    intake.receive(letter(mail["Bert"], personal(intake, "Bert", "aw"),
                          "Moin,\nvota 1 favorevole\nNomiczahl 5\nGruß\nBert\n"), "t")
    bert = _receipt(service, mail["Bert"])
    assert "- „vota 1 favorevole“ — in dieser Partie stimmt man mit: ja, nein, enthaltung." \
        in bert
    assert service.reads.summary("aw")["players"]["Bert"]["nomic_number"] == 5


def test_a_forward_of_several_commands_is_skipped_and_said_once(mail_service: Service,
                                                                  ) -> None:
    service = mail_service
    mail = decameronomic(service)
    intake = Intake(service)
    intake.receive(letter(mail["Bruno"], personal(intake, "Bruno"),
                          "proposta: Saluti\nOgni giocatore saluta.\n"), "t")
    forward = ("Guardate cosa mi ha scritto Anna!\n\n"
               "---------- Forwarded message ---------\nDa: Anna <anna@players.test>\n"
               "Oggetto: voti\n\nvota 1 contrario\nCedi Nomica a Carla 10\n")
    intake.receive(letter(mail["Carla"], personal(intake, "Carla"), forward), "t")
    [p1] = service.reads.proposals("dec")
    assert "Carla" not in p1["votes"]  # not acted on: the forward held two commands
    reply = _receipt(service, mail["Carla"])
    assert reply.count("La lettera inoltrata nella tua è stata ignorata") == 1
    assert "Guardate" not in reply

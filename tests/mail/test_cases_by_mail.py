"""The court by mail, through Scriba's SMTP intake and out through a real SMTP server: a
letter's ``giudizio: …`` line opens a case by the ruleset's action of kind "case" (the lines
below it give its other values by their labels), the judge judges by letter in the rule's
words ("Giudica 1 vero perché …"), and a judgment the ruleset does not know is answered
with the words it does."""

from __future__ import annotations

from scriba.service import Service

from .conftest import DOMAIN, seat_all
from .test_games_by_mail import Post, post  # noqa: F401 - the fixture, shared

from casegame import PLAYERS, court_game  # isort: skip - the tests' folder, on the path


def test_a_case_is_opened_and_judged_by_letter(mail_service: Service, post: Post) -> None:  # noqa: F811
    service = mail_service
    game = court_game(service, "tribunale")
    mail = seat_all(service, game, list(PLAYERS))
    to = f"scriba+{game}@{DOMAIN}"
    post.send(mail["Bruno"], to, "Cari amici,\n\ngiudizio: Un cappello è una regola?\n"
              "Sulla regola: 212\n\nSaluti,\nBruno\n", subject="Una domanda")
    [case] = service.cases.docket(game, "it")
    assert case["question"] == "Un cappello è una regola?"
    assert case["opened_by"] == "Bruno" and case["judge"] == "Anna"
    assert [c["id"] for c in case["concerns"]] == ["212"]

    # German and English words open cases too; a line that merely starts with "Fall" not.
    post.send(mail["Carla"], to, "Klage: Darf Bruno zweimal stimmen?\n\n"
              "Fall 3 ist mir egal.\n", subject="Klage")
    assert [c["question"] for c in service.cases.docket(game)] == [
        "Darf Bruno zweimal stimmen?", "Un cappello è una regola?"]

    # Anna, the judge, first with a word the rule does not know: told the ones it does.
    post.send(mail["Anna"], to, "Giudica 1 forse\n", subject="Giudizio")
    assert service.cases.case(game, 1)["judgment"] is None
    post.send(mail["Anna"], to, "Giudica il caso 1 vero perché lo dice la regola 212.\n"
              "rules: 212\n", subject="Giudizio")
    judged = service.cases.case(game, 1, "it")
    assert judged["status"] == "judged"
    assert judged["judgment"]["word"] == "VERO"
    assert judged["judgment"]["reasons"] == "lo dice la regola 212."
    assert [r["rule"] for r in judged["judgment"]["rules"]] == ["212"]

    post.deliver()
    replies = post.inbox(mail["Anna"])
    assert any("one of: VERO, FALSO" in reply for reply in replies), replies
    assert any("Anna judges case 1: VERO" in reply for reply in replies), replies

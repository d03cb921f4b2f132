"""The outbox and the mailroom on their own: preferences, digests, a crash between
keeping and deciding a letter, and the same on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scriba.mail.intake import Intake
from scriba.service import Service, open_service

from .conftest import letter
from .helpers import decameronomic, personal


def _game(service: Service) -> None:
    decameronomic(service)


def test_preferences_by_letter_digest_and_none(mail_service: Service) -> None:
    _game(mail_service)
    now = [datetime(2026, 3, 2, 9, 0, tzinfo=UTC)]
    outbox = mail_service.outbox
    outbox.clock = lambda: now[0]
    intake = Intake(mail_service)
    intake.receive(letter("anna@players.test", personal(intake, "Anna"), "digest"), "t")
    # List-Unsubscribe's mailto: the word in the subject, nothing in the body
    intake.receive(letter("carla@players.test", personal(intake, "Carla"), "",
                          subject="unsubscribe"), "t")
    modes = {s.player: s.mail_mode for s in mail_service.seats.seats("dec")}
    assert modes == {"Anna": "digest", "Bruno": "auto", "Carla": "none"}  # Bruno never chose
    for label in ("p1", "p2"):
        intake.receive(letter("bruno@players.test", personal(intake, "Bruno"),
                              f"proposta: T {label}\nlabel: {label}\nTesto.\n"), "t")
    announced = outbox.messages(kind="announce")
    assert {m["recipient"] for m in announced} == {"anna@players.test"}
    assert {m["status"] for m in announced} == {"digest"}
    outbox.sweep()
    assert outbox.messages(kind="digest") == []  # not a day yet
    now[0] += timedelta(days=1, minutes=1)
    outbox.sweep()
    [digest] = outbox.messages(kind="digest")
    assert digest["recipient"] == "anna@players.test"
    assert "p1" in digest["body"] and "p2" in digest["body"]
    assert {m["status"] for m in outbox.messages(kind="announce")} == {"merged"}


def test_a_letter_kept_before_a_crash_is_decided_once_after(mail_service: Service) -> None:
    _game(mail_service)
    intake = Intake(mail_service)
    raw = letter("bruno@players.test", personal(intake, "Bruno"),
                 "proposta: Saluti\nlabel: p1\nTesto.\n")
    # the crash: kept, claimed, then the process died before deciding
    kept = intake.mailroom.keep(raw, "<crash@players.test>", "smtp")
    assert intake.mailroom.claim(kept.id)
    assert intake.mailroom.unfinished() == [kept.id]
    assert [r.status for r in intake.recover()] == ["decided"]
    assert intake.recover() == []
    assert [p["label"] for p in mail_service.reads.proposals("dec")] == ["p1"]


def test_the_whole_path_on_postgresql(postgres_url: str) -> None:
    service = open_service(postgres_url)
    try:
        game = f"pg{datetime.now(UTC).strftime('%H%M%S%f')}"
        emails = decameronomic(service, game, domain=f"{game}.test")
        intake = Intake(service)
        to = personal(intake, "Bruno", game)
        raw = letter(emails["Bruno"], to, "proposta: Saluti\nlabel: p1\nTesto.\n")
        assert intake.receive(raw, "t").status == "decided"
        assert intake.receive(raw, "t").status == "duplicate"
        mine = [m for m in service.outbox.messages() if m["game"] == game]
        assert sorted(m["kind"] for m in mine if m["status"] == "pending") == [
            "announce", "announce", "receipt"]
    finally:
        service.close()


def test_a_crash_after_the_commands_does_not_decide_them_twice(
        mail_service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    _game(mail_service)
    intake = Intake(mail_service)
    raw = letter("bruno@players.test", personal(intake, "Bruno"),
                 "proposta: Uno\nTesto.\n\ngive_nomica to=Anna amount=100\n")

    def crash(letter: object) -> None:
        raise RuntimeError("power cut")

    with monkeypatch.context() as patch:
        patch.setattr(intake.outbox, "close_receipt", crash)
        with pytest.raises(RuntimeError):
            intake.receive(raw, "t")
    assert [r.status for r in intake.recover()] == ["decided"]
    assert len(mail_service.reads.proposals("dec")) == 1
    gifts = [e for e in mail_service.reads.log("dec") if e["type"] == "action_taken"
             and e["payload"].get("action") == "give_nomica"]
    assert len(gifts) == 1
    [receipt] = mail_service.outbox.messages(kind="receipt")
    assert "give_nomica" in receipt["body"] and "Uno" in receipt["body"]


def test_announcing_never_undoes_the_decision_on_in_memory_sqlite(service: Service) -> None:
    """On a one-connection pool a second session inside the listener would roll the
    decision back; the outbox reads through the decision's own connection."""
    _game(service)
    outbox = service.outbox
    outcome = service.commands.perform("dec", "Bruno", "propose",
                                       {"label": "p1", "changes": [{"enact": {"title": "T",
                                                                     "text": "x"}}]})
    assert outcome.accepted
    service.commands._states.clear()  # read back from the database, not the cache
    assert [p["label"] for p in service.reads.proposals("dec")] == ["p1"]
    assert {m["recipient"] for m in outbox.messages(kind="announce")} == {
        "anna@players.test", "carla@players.test"}

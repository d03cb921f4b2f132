"""Asking to join by mail reaches each bundled ruleset's own way in (scriba.service.joining):
a join action seats the newcomer at once, in the same transaction; a request for
admission or an application is given to the rules with the letter's words; a name that
looks like a player's is refused; a ruleset with no way in queues it for the officer."""

from __future__ import annotations

from scriba.service import Service


def _ask(service: Service, game: str, email: str, name: str, text: str = "") -> object:
    kept = service.mailroom.keep(f"From: {email}\r\n\r\n{text}\r\n".encode(),
                                 f"<{name}-{game}@x.test>", "smtp")
    return service.joins.ask(game, kept.id, email, name, text)


def test_each_ruleset_s_way_in(service: Service) -> None:
    service.commands.create_game("agora", game_id="ag")
    joined = _ask(service, "ag", "zoe@x.test", "Zoe")
    assert joined.way == "rules" and "Zoe" in service.reads.status("ag")["players"]
    assert service.seats.player_for_email("ag", "zoe@x.test") == "Zoe"  # seated with it

    service.commands.create_game("nomic3", game_id="n3", players=["Anna", "Bert"])
    applied = _ask(service, "n3", "rossi@x.test", "Rossi")
    assert applied.way == "rules" and applied.outcome.accepted  # surname: the name asked
    assert "Rossi" not in service.reads.status("n3")["players"]  # the players decide
    assert service.seats.player_for_email("n3", "rossi@x.test") is None

    service.commands.create_game("anderwelt", game_id="aw", players=["Anna", "Bert"],
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z")
    application = _ask(service, "aw", "jo@x.test", "Jörg", "Ich spiele gern Nomic.")
    assert application.way == "rules"
    assert "Ich spiele gern Nomic." in service.reads.describe_outcome(
        "aw", application.outcome, "de")

    look_alike = _ask(service, "aw", "fake@x.test", "Bеrt")  # a Cyrillic e
    assert look_alike.way == "refused" and "Bert" in look_alike.reason

    service.commands.create_game("suber", game_id="sub", players=["Anna", "Bert"])
    assert _ask(service, "sub", "nora@x.test", "Nora").way == "queued"
    assert [r["player"] for r in service.joins.queue("sub")] == ["Nora"]

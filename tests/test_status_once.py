"""What the rules say comes next (their ``status`` query) is told twice for each accepted
command — in the letters to the other players and in the reply to its player — and asked
of the rules once: the same state, the same answer, one rule worker's round trip."""

from __future__ import annotations

from typing import Any

from scriba.service import open_service

START = "2026-01-05T09:00:00Z"
ENACT = {"enact": {"title": "Courtesy", "text": "Players greet each other."}}


def test_a_command_tells_the_status_in_its_letters_and_its_reply_asking_once() -> None:
    service = open_service("sqlite://")
    try:
        game = service.commands.create_game("suber", game_id="s", start=START,
                                            players=["Anna", "Bruno", "Carla"]).game_id
        for player in ("Anna", "Bruno", "Carla"):
            service.seats.seat(game, player, f"{player.lower()}@players.test")
        mover = service.reads.status(game)["text"].split(": ", 1)[1].split()[0]
        host = service.commands.host
        asked: list[str] = []
        real_call = host.call

        def counted(order: Any, targets: Any, hook: str, *args: Any) -> Any:
            asked.append(hook)
            return real_call(order, targets, hook, *args)

        host.call = counted  # type: ignore[method-assign]
        outcome = service.commands.perform(game, mover, "propose", {"changes": [ENACT]})
        reply = service.reads.describe_outcome(game, outcome, "en")
        host.call = real_call  # type: ignore[method-assign]

        assert outcome.accepted, outcome.message
        said = service.reads.status(game)["text"]
        assert "must vote" in said or "awaits the votes" in said
        assert said in reply
        letters = [m for m in service.outbox.messages(kind="announce")
                   if m["player"] != mover]
        assert len(letters) == 2 and all(said in m["body"] for m in letters)
        assert asked.count("query_status") == 1
    finally:
        service.close()

"""What the mail tests share: the decameronomic game they play, a player's personal
address, and a test server started for one test and stopped after it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from scriba.mail.intake import Intake
from scriba.service import Service

from .conftest import DOMAIN, seat_all

PLAYERS = ["Anna", "Bruno", "Carla"]
Server = TypeVar("Server")


def decameronomic(service: Service, game_id: str = "dec", players: list[str] | None = None,
                  **seat: Any) -> dict[str, str]:
    """A game of decameronomic (Anna the King, Carla the Scriba), every player seated at
    ``<name>@players.test`` (or ``seat``'s domain); their addresses by name."""
    players = players or PLAYERS
    service.commands.create_game("decameronomic", game_id=game_id, players=players,
                                 offices={"King": "Anna", "Scriba": "Carla"},
                                 start="2026-03-02T09:00:00Z")
    return seat_all(service, game_id, players, **seat)


def personal(intake: Intake, player: str, game_id: str = "dec") -> str:
    """The player's personal address for the game: letters to it need no signature."""
    return f"scriba+{game_id}.{intake.mailroom.secret(game_id, player)}@{DOMAIN}"


def running(server: Server) -> Iterator[Server]:
    """For a fixture: ``yield from running(X())`` starts X, and stops it after the test."""
    server.start()  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        server.stop()  # type: ignore[attr-defined]

"""``scriba fork GAME [--at WHEN | --seq EVENT] --game NEW [--name NAME] [--player NAME]``:
a new game with GAME's history up to that point (its whole record without either), to play
on without touching GAME (:mod:`scriba.service.forks`). Answered in one sentence in the
game's language (``--lang`` for another)."""

from __future__ import annotations

from typing import Annotated

import typer

from scriba.cli.apps import DbOption
from scriba.cli.common import _service
from scriba.cli.output import safe, say


def register(app: typer.Typer) -> None:
    app.command("fork")(fork_command)


def fork_command(
    game: str,
    new: Annotated[str, typer.Option("--game", help="The fork's id (a new game)")],
    at: Annotated[str | None, typer.Option(
        help="Copy every event until this time (2026-03-04 or 2026-03-04T10:00:00Z)")] = None,
    seq: Annotated[int | None, typer.Option(
        help="Copy the events up to this one (its number in the record)")] = None,
    name: Annotated[str | None, typer.Option(help="The fork's name (default: "
                                                  "“NAME (fork)”)")] = None,
    player: Annotated[list[str] | None, typer.Option(
        help="A player of the fork's own, besides the copied ones (repeatable)")] = None,
    lang: Annotated[str | None, typer.Option(help="it, de or en (default: the game's)")]
    = None,
    db: str = DbOption,
) -> None:
    """Fork a game: a new game with its history up to a point, played apart from it."""
    service = _service(db)
    try:
        state = service.forks.fork(game, new_id=new, at=at, seq=seq, name=name,
                                   players=player)
        say(safe(service.forks.told(state.game_id, lang) or ""))
    finally:
        service.close()

"""``scriba publish GAME --out DIR``: the game's public pages as a static site."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from scriba.cli.opened import opened_service

console = Console()


def publish_command(
    game: str,
    out: Annotated[Path, typer.Option("--out", help="Folder to write the site into")],
    lang: Annotated[str | None, typer.Option(
        "--lang", help="it, de or en (default: the game's)")] = None,
    db: Annotated[str | None, typer.Option(
        "--db", help="Database URL (default: $SCRIBA_DB or sqlite:///scriba.db)")] = None,
) -> None:
    """Write a game's public pages (rules, histories, proposals, chronicle, feed) as files."""
    from scriba.web.publish import publish

    with opened_service(db, console, 1) as service:
        written = publish(service, game, out, lang)
    console.print(f"{len(written)} files written to {out} (open {out / 'index.html'}).",
                  highlight=False)


def register(app: typer.Typer) -> None:
    app.command("publish")(publish_command)

"""One service for one command: opened on ``--db``, closed after, refusals said in red."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from scriba.service import Service, default_db_url, open_service
from scriba.service.errors import ServiceError


@contextmanager
def opened_service(db: str | None, console: Console, code: int) -> Iterator[Service]:
    """The service on ``db`` ($SCRIBA_DB or sqlite:///scriba.db without one); a refusal
    inside is printed in red and ends the command with exit ``code``."""
    service = open_service(db or default_db_url())
    try:
        yield service
    except ServiceError as refusal:
        console.print(f"[red]{escape(str(refusal))}[/red]", highlight=False)
        raise typer.Exit(code) from None
    finally:
        service.close()

"""``scriba mail``: letters in (serve, receive, fetch), letters out (send), addresses."""

from __future__ import annotations

import logging
import ssl
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from scriba.service import Service, default_db_url, open_service

mail_app = typer.Typer(help="Play by e-mail: take letters in, send replies and notices.",
                       no_args_is_help=True)
DbOption = typer.Option(None, "--db", help="Database URL (default: $SCRIBA_DB)")

# exit codes a mail server's pipe understands (sysexits.h)
EX_OK, EX_DATAERR, EX_TEMPFAIL = 0, 65, 75


def register(app: typer.Typer) -> None:
    app.add_typer(mail_app, name="mail")


def _service(db: str | None) -> Service:
    return open_service(db or default_db_url())


@mail_app.command("receive")
def receive_command(db: str = DbOption,
                    sender: str = typer.Option(None, "--from", help="Envelope sender"),
                    recipient: Annotated[list[str] | None, typer.Option(
                        "--to", help="Envelope recipient (repeatable)")] = None) -> None:
    """Take one letter on standard input (for a mail server's pipe)."""
    from scriba.mail.intake import Intake

    raw = sys.stdin.buffer.read()
    if not raw.strip():
        typer.echo("scriba: empty letter", err=True)
        raise typer.Exit(EX_DATAERR)
    try:
        service = _service(db)
        received = Intake(service).receive(raw, "pipe", sender, recipient or None)
    except Exception as error:  # noqa: BLE001 - the mail server keeps it and retries
        typer.echo(f"scriba: letter not stored ({type(error).__name__}); try again later",
                   err=True)
        raise typer.Exit(EX_TEMPFAIL) from None
    typer.echo(f"{received.status} {received.message_id}")
    service.close()


@mail_app.command("serve")
def serve_command(listen: str = typer.Option("127.0.0.1:8025", help="HOST:PORT for SMTP"),
                  lmtp: str = typer.Option(None, help="HOST:PORT for LMTP as well"),
                  deliver: bool = typer.Option(True, help="Send the outbox continuously"),
                  interval: float = typer.Option(5.0, help="Seconds between deliveries"),
                  db: str = DbOption) -> None:
    """An SMTP (and LMTP) server for letters, and the outbox sent as it fills."""
    from scriba.mail.intake import Intake
    from scriba.mail.send import deliver_forever
    from scriba.mail.server import IntakeController

    logging.basicConfig(level=logging.INFO)
    service = _service(db)
    intake = Intake(service)
    intake.recover()
    controllers = []
    for address, is_lmtp in ((listen, False), (lmtp, True)):
        if address:
            host, _, port = address.rpartition(":")
            controller = IntakeController(intake, host or "127.0.0.1", int(port), is_lmtp)
            controller.start()
            controllers.append(controller)
            typer.echo(f"{'LMTP' if is_lmtp else 'SMTP'} on {host}:{port}")
    stop = threading.Event()
    # delivery gets its own Service (its own sandbox pool and caches): the intake's is
    # used by the SMTP server's thread
    sender = _service(db)
    try:
        if deliver:
            deliver_forever(sender.outbox, interval=interval, stop=stop)
        else:
            stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for controller in controllers:
            controller.stop()
        sender.close()
        service.close()


@mail_app.command("fetch")
def fetch_command(db: str = DbOption,
                  url: str = typer.Option(None, help="imaps://user:pass@host:port/FOLDER "
                                          "(default: $SCRIBA_IMAP)"),
                  cafile: Annotated[Path | None, typer.Option(
                      help="CA certificate to trust")] = None,
                  delete: bool = typer.Option(False, help="Expunge letters once taken")) -> None:
    """Take the unseen letters of an IMAP mailbox, once."""
    from scriba.mail.imap import fetch, imap_target
    from scriba.mail.intake import Intake

    service = _service(db)
    context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    try:
        results = fetch(Intake(service), imap_target(url), context, delete)
    except (OSError, ValueError) as error:
        typer.echo(f"scriba: {error}", err=True)
        raise typer.Exit(EX_TEMPFAIL) from None
    finally:
        service.close()
    for received in results:
        typer.echo(f"{received.status} {received.message_id}")


@mail_app.command("send")
def send_command(db: str = DbOption) -> None:
    """Send what the outbox has due, once ($SCRIBA_SMTP), and exit."""
    from scriba.mail.send import deliver_once

    service = _service(db)
    try:
        counts = deliver_once(service.outbox)
    finally:
        service.close()
    typer.echo(f"sent {counts['sent']}, waiting {counts['retry']}, "
               f"refused {counts['failed']}")


@mail_app.command("address")
def address_command(game: str, name: str, db: str = DbOption,
                    rotate: bool = typer.Option(False, help="Make a new secret")) -> None:
    """The personal address of a player: letters to it count as theirs."""
    from scriba.service.letters import game_address

    service = _service(db)
    try:
        status = service.reads.status(game)
        if name not in status["players"] and name not in status["offices"].values():
            typer.echo(f"scriba: {name} is neither a player nor an office holder of "
                       f"{game}", err=True)
            raise typer.Exit(2)
        typer.echo(game_address(game, service.mailroom.secret(game, name, rotate)))
    finally:
        service.close()

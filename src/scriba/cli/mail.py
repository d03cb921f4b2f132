"""``scriba mail``: letters in (serve, receive, fetch), letters out (send), addresses."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from scriba.service import Service

mail_app = typer.Typer(help="Play by e-mail: take letters in, send replies and notices.",
                       no_args_is_help=True)
DbOption = typer.Option(None, "--db", help="Database URL (default: $SCRIBA_DB)")

# exit codes a mail server's pipe understands (sysexits.h)
EX_OK, EX_DATAERR, EX_TEMPFAIL = 0, 65, 75


def register(app: typer.Typer) -> None:
    app.add_typer(mail_app, name="mail")


def _db_url(db: str | None) -> str:
    from scriba.service import default_db_url

    return db or default_db_url()


def _service(db: str | None) -> Service:
    from scriba.service import open_service

    return open_service(_db_url(db))


@mail_app.command("receive")
def receive_command(db: str = DbOption,
                    sender: str = typer.Option(None, "--from", help="Envelope sender"),
                    recipient: Annotated[list[str] | None, typer.Option(
                        "--to", help="Envelope recipient (repeatable)")] = None) -> None:
    """Take one letter on standard input (for a mail server's pipe).

    The letter is only kept, without loading the service (a process per letter starts
    in a fraction of its time); scriba mail serve decides it at its next round, or
    scriba mail send. A letter too large to take is refused at once."""
    code = receive(db, sender, recipient or [])
    if code != EX_OK:
        raise typer.Exit(code)


def receive_argv(args: list[str]) -> int | None:
    """``scriba mail receive ARGS`` without building the typer app, whose parameter
    adapters import pydantic (~0.13 s, half a pipe delivery's start-up): the exit code, or
    None for anything but the plain options (``--help``, a typo), which typer answers."""
    import argparse

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    parser.add_argument("--db")
    parser.add_argument("--from", dest="sender")
    parser.add_argument("--to", action="append", default=[])
    try:
        options, rest = parser.parse_known_args(args)
    except argparse.ArgumentError:
        return None
    if rest:
        return None
    return receive(options.db, options.sender, options.to)


def receive(db: str | None, sender: str | None, recipients: list[str]) -> int:
    """The pipe: take the letter on standard input; the exit code for the mail server."""
    import os

    from scriba.service.inbound import (
        MAX_LETTER_BYTES,
        envelope_sender,
        keep_letter,
        message_id_of,
    )

    raw = sys.stdin.buffer.read()
    if not raw.strip():
        typer.echo("scriba: empty letter", err=True)
        return EX_DATAERR
    # $SCRIBA_DB read as default_db_url reads it, not to import the service for it
    url = db or os.environ.get("SCRIBA_DB", "sqlite:///scriba.db")
    try:
        if len(raw) <= MAX_LETTER_BYTES:  # a larger one is refused at once, below
            message_id = message_id_of(raw)
            status = keep_letter(url, raw, message_id, "pipe", envelope_sender(sender),
                                 ",".join(recipients))
            if status is not None:
                # a letter kept before and not yet decided is decided once, like this one
                typer.echo(f"{'kept' if status in ('kept', 'deciding') else 'duplicate'} "
                           f"{message_id}")
                return EX_OK
        from scriba.mail.intake import Intake

        service = _service(url)
        received = Intake(service).receive(raw, "pipe", sender, recipients or None)
    except Exception as error:  # noqa: BLE001 - the mail server keeps it and retries
        typer.echo(f"scriba: letter not stored ({type(error).__name__}); try again later",
                   err=True)
        return EX_TEMPFAIL
    typer.echo(f"{received.status} {received.message_id}")
    service.close()
    return EX_OK


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
    # used by the SMTP server's thread. Each round first decides the letters a pipe kept
    # (scriba mail receive), so that their replies leave in the same round.
    sender = _service(db)
    piped = Intake(sender)
    try:
        if deliver:
            deliver_forever(sender.outbox, interval=interval, stop=stop,
                            before=piped.decide_kept)
        else:
            while True:
                piped.decide_kept()
                stop.wait(interval)
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
    import ssl

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
    """Decide the letters a pipe kept, send what the outbox has due, once ($SCRIBA_SMTP),
    and exit."""
    from scriba.mail.intake import Intake
    from scriba.mail.send import deliver_once

    service = _service(db)
    try:
        Intake(service).decide_kept()
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


@mail_app.command("requests")
def requests_command(game: str, db: str = DbOption,
                     accept: int = typer.Option(0, help="Admit the request with this number"),
                     decline: int = typer.Option(0, help="Decline the request with this number"),
                     ) -> None:
    """The requests to join that wait for the officer (asked by mail); admit or decline one."""
    from scriba.service.errors import ServiceError

    service = _service(db)
    try:
        if accept:
            service.joins.accept(game, accept)
            typer.echo(f"admitted: request {accept}")
        elif decline:
            service.joins.decline(game, decline)
            typer.echo(f"declined: request {decline}")
        waiting = service.joins.queue(game)
        for request in waiting:
            typer.echo(f"{request['id']}\t{request['player']}\t{request['email']}\t"
                       f"{request['received']:%Y-%m-%d %H:%M}")
        if not waiting:
            typer.echo(f"no request waiting in {game}")
    except ServiceError as error:
        typer.echo(f"scriba: {error}", err=True)
        raise typer.Exit(2) from None
    finally:
        service.close()

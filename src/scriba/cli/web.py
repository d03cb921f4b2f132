"""``scriba serve`` (the web server, with deadlines on time) and ``scriba token``."""

from __future__ import annotations

import gc
import os
import sys

import typer
from rich.console import Console

from scriba.cli.opened import opened_service
from scriba.service import Service, default_db_url, migrate_database, open_service

console = Console()
DEMO_GAME = "demo"
DEMO_RULESET = "suber"
# Sign-ins of the demo game's people; printed by ``scriba serve --demo``. Demo only.
DEMO_PEOPLE = [("Anna", "anna@example.org", "anna-demo-pass"),
               ("Bruno", "bruno@example.org", "bruno-demo-pass"),
               ("Carla", "carla@example.org", "carla-demo-pass")]
DEMO_OFFICER = ("Scriba", "scriba@example.org", "scriba-demo-pass")
BODY_SECONDS = 30.0  # as scriba.web.app.BODY_SECONDS (imported late: --help stays fast)
# Connections and requests at once; past it uvicorn answers 503 rather than run out of
# file descriptors (slow clients holding connections open cannot starve the machine).
CONCURRENCY = 500


def _deliver_mail_in_background(url: str) -> None:
    """The outbox sent as it fills, and the letters a mail server's pipe kept decided first
    in each round, as ``scriba mail serve`` does, on a service of its own (its own sandbox
    pool and caches; the web server's is used by its threads)."""
    import threading

    from scriba.mail.intake import Intake
    from scriba.mail.send import deliver_forever

    service = open_service(url)
    threading.Thread(target=deliver_forever, args=(service.outbox,),
                     kwargs={"before": Intake(service).decide_kept},
                     name="scriba-mail-delivery", daemon=True).start()
    console.print("Sending the outbox through $SCRIBA_SMTP as it fills.", highlight=False)


def ensure_demo(service: Service) -> bool:
    """Create the demo game with three players who have accounts, unless it exists."""
    if any(game["id"] == DEMO_GAME for game in service.reads.games()):
        return False
    service.commands.create_game(DEMO_RULESET, game_id=DEMO_GAME, name="Demo: Peter Suber's Nomic",
                                 players=[name for name, _, _ in DEMO_PEOPLE], clock="real")
    accounts = service.accounts
    for name, email, password in [*DEMO_PEOPLE, DEMO_OFFICER]:
        account = accounts.by_email(email) or accounts.create_account(email, name, password)
        if (name, email, password) == DEMO_OFFICER:
            service.seats.set_officer(DEMO_GAME, account.id)
        else:
            service.seats.seat(DEMO_GAME, name, email)
    return True


def serve_command(
    host: str = typer.Option("127.0.0.1", help="Address to listen on"),
    port: int = typer.Option(8000, help="Port to listen on"),
    demo: bool = typer.Option(False, "--demo/--no-demo",
                              help="Create the demo game (if absent) and print its sign-ins"),
    db: str = typer.Option(None, "--db", help="Database URL (default: $SCRIBA_DB or "
                           "sqlite:///scriba.db)"),
    ssl_certfile: str = typer.Option(None, help="Serve https with this certificate"),
    ssl_keyfile: str = typer.Option(None, help="… and this key"),
    forwarded_allow_ips: str = typer.Option(
        "", help="Addresses (or networks) of the reverse proxies in front, comma-separated, "
        "'*' for any: only their X-Forwarded-For/-Proto are believed. Behind a proxy set it, "
        "or every visitor shares the proxy's address (and its sign-in limits)"),
    proxy_headers: bool = typer.Option(
        True, "--proxy-headers/--no-proxy-headers",
        help="Read the client's address and scheme from those proxies' X-Forwarded-For "
        "and X-Forwarded-Proto"),
    body_timeout: float = typer.Option(
        BODY_SECONDS, min=1, help="Seconds a request body may take to arrive (then 408)"),
) -> None:
    """Serve the web pages and the JSON API; fire real-clock games' deadlines on time."""
    import uvicorn

    from scriba.web.app import create_app

    url = db or default_db_url()
    migrate_database(url)  # once, before anything else opens the database
    service = open_service(url)
    _ = service.accounts.limits  # a malformed SCRIBA_*_LIMITS is refused now, not later
    service.commands.recover()  # inputs a crash left undecided are decided before new ones
    if demo:
        made = ensure_demo(service)
        address = f"http://{'localhost' if host in ('0.0.0.0', '::') else host}:{port}"
        console.print(("Created" if made else "Using") +
                      f" the demo game [bold]{DEMO_GAME}[/bold] ({DEMO_RULESET}).",
                      highlight=False)
        console.print(f"Open {address}/games/{DEMO_GAME} and sign in as one of:",
                      highlight=False)
        for name, email, password in DEMO_PEOPLE:
            console.print(f"  {name:6} {email:22} password {password}", highlight=False)
        console.print(f"  officer {DEMO_OFFICER[1]:21} password {DEMO_OFFICER[2]}",
                      highlight=False)
    if os.environ.get("SCRIBA_SMTP"):
        _deliver_mail_in_background(url)
    https = bool(ssl_certfile) or None
    app = create_app(service, run_deadlines=True, https_only=https, body_seconds=body_timeout)
    console.print(f"Serving on http{'s' if https else ''}://{host}:{port} "
                  f"(database {service.commands.store.url}); Ctrl-C stops.", highlight=False)
    sys.stdout.flush()
    trusted = [address.strip() for address in forwarded_allow_ips.split(",")
               if address.strip()]
    # The long-lived heap (modules, the app, what the start loaded) out of the collector's
    # sight: a full collection then scans only what came since, not the whole heap
    # (95-300 ms each, measured in issue 18).
    gc.collect()
    gc.freeze()
    uvicorn.run(app, host=host, port=port, log_level=os.environ.get("SCRIBA_LOG", "warning"),
                ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
                # Forwarded headers only from the proxies named: uvicorn would otherwise
                # believe any local process (or a proxy passing its clients' headers on).
                proxy_headers=proxy_headers and bool(trusted),
                forwarded_allow_ips=trusted or None,
                timeout_keep_alive=5,          # an idle connection between requests
                timeout_graceful_shutdown=10,  # Ctrl-C does not wait for idle browsers
                limit_concurrency=CONCURRENCY)


def token_command(
    game: str, name: str,
    label: str = typer.Option("", help="What the token is for (shown in lists)"),
    db: str = typer.Option(None, "--db", help="Database URL"),
) -> None:
    """Print a new API token acting as player NAME in GAME (its last line is the token)."""
    with opened_service(db, console, 2) as service:
        token = service.seats.new_token(game, name, label)
    console.print(f"A new token for {name} in {game} (shown once; revocable):",
                  highlight=False, markup=False)
    print(token)


def revoke_command(
    token: str = typer.Argument(None, help="The token to revoke"),
    game: str = typer.Option(None, help="With --player: revoke all of that player's tokens"),
    player: str = typer.Option(None, help="The player whose tokens to revoke"),
    db: str = typer.Option(None, "--db", help="Database URL"),
) -> None:
    """Revoke an API token, or every token of one player (--game G --player P)."""
    if not token and not (game and player):
        console.print("[red]Give a TOKEN, or --game and --player.[/red]")
        raise typer.Exit(2)
    with opened_service(db, console, 2) as service:
        if token:
            revoked = int(service.seats.revoke_token(token))
        else:
            revoked = sum(service.seats.revoke_token(token_id=t["id"])
                          for t in service.seats.tokens(game, player) if not t["revoked"])
    console.print(f"{revoked} token(s) revoked.", highlight=False)


def officer_command(
    game: str, email: str,
    name: str = typer.Option(None, help="Display name of a new account"),
    db: str = typer.Option(None, "--db", help="Database URL"),
) -> None:
    """Make the account of EMAIL the officer of GAME (asks for a password if it has none)."""
    with opened_service(db, console, 2) as service:
        accounts = service.accounts
        account = accounts.by_email(email)
        if account is None or not account.has_password:
            password = typer.prompt(f"Password for {email}", hide_input=True,
                                    confirmation_prompt=True)
            if account is None:
                account = accounts.create_account(email, name or email.split("@")[0],
                                                  password)
            else:
                accounts.set_password(account.id, password)
        service.seats.set_officer(game, account.id)
    console.print(f"{account.email} is the officer of {game}.", highlight=False,
                  markup=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
    app.command("token")(token_command)
    app.command("revoke")(revoke_command)
    app.command("officer")(officer_command)

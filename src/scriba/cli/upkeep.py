"""The house's upkeep: games exported and imported, scenarios run, the database upgraded,
backed up and restored, the demo played and the bench run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from scriba.cli.apps import DbOption, cli, db_app, export_app, import_app, scenario_app
from scriba.cli.common import Mistake, _service, winner_sentence
from scriba.cli.output import console, fail, safe, say


@export_app.command("game")
def export_game(game: str,
                out: Annotated[Path | None, typer.Option(help="File (default: stdout)")] = None,
                db: str = DbOption) -> None:
    """Export a game's log as JSON lines."""
    service = _service(db)
    service.reads.load(game)  # an unknown game says so before any file is made
    lines = service.commands.export_game(game)
    if out is None:
        for line in lines:
            sys.stdout.write(line + "\n")
        return
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line + "\n")
        partial.replace(out)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise Mistake(f"cannot write {out}: {error.strerror or error}") from None


@import_app.command("game")
def import_game(file: Path, game: str = typer.Option(None, help="New game id"),
                name: str = typer.Option(None, help="The copy's name (default: the file's, "
                                                    "or '… (copy)' if taken)"),
                db: str = DbOption) -> None:
    """Import a game exported as JSON lines; it is checked whole first, and a refused
    file leaves nothing behind."""
    if not file.is_file():
        raise Mistake(f"cannot read {file}: no such file")
    state = _service(db).commands.import_game(file, game, name)
    say(f"imported {safe(state.game_id, None)} ({safe(state.name)}): {state.seq} events")


@scenario_app.command("run")
def scenario_run(file: Path, as_json: bool = typer.Option(False, "--json"),
                 db: str = typer.Option("sqlite://", "--db",
                                        help="Database (default: in memory)")) -> None:
    """Run a scenario file; exit non-zero when a step goes otherwise than written."""
    from scriba.service import open_service
    from scriba.service.scenario import ScenarioError, load_scenario, run_scenario
    from scriba.service.words import key_word, show_value

    def refuse(error: Exception) -> None:
        if as_json:
            print(json.dumps({"error": str(error)}))
        raise Mistake(f"{file}: {error}")

    try:
        scenario = load_scenario(file)
    except (ScenarioError, OSError) as error:
        refuse(error)
    service = open_service(db)
    try:
        result = run_scenario(service.commands, scenario)
    except ScenarioError as error:
        refuse(error)
    finally:
        service.close()
    if as_json:
        print(json.dumps(result.summary, ensure_ascii=False, indent=2))
    else:
        say(f"{safe(str(file))}: game {safe(result.game_id, None)}. "
            + winner_sentence(result.summary.get("winners") or [],
                              result.summary.get("ended")))
        for name, values in result.summary["players"].items():
            told = ", ".join(f"{safe(key_word(k, 'en'))} {safe(show_value(v))}"
                             for k, v in values.items())
            say(f"  {safe(name)}: {told}")
    for error in result.errors:
        typer.echo(error, err=True)
    if not result.ok:
        raise typer.Exit(1)


@db_app.command("upgrade")
def db_upgrade_command(db: str = DbOption) -> None:
    """Create or upgrade the database's schema, then decide what a crash left undecided."""
    from scriba.service import default_db_url, migrate_database

    url = db or default_db_url()
    revision = migrate_database(url)
    service = _service(url)
    try:
        decided = service.commands.recover()
    finally:
        service.close()
    say(f"database at revision {safe(revision)}; {len(decided)} waiting input(s) decided")


def _copying(title: str) -> Any:
    """A progress bar for a copy, and the callback that moves it (pages done, in all)."""
    from rich.progress import Progress

    bar = Progress(console=console(), transient=True)
    task = bar.add_task(title, total=None)
    return bar, lambda done, total: bar.update(task, completed=done, total=total)


@cli.command("backup")
def backup_command(to: Annotated[Path, typer.Argument(help="The new file to write the copy to")],
                   db: str = DbOption) -> None:
    """Copy the database (SQLite) to a new file while the server keeps running."""
    from scriba.service import default_db_url
    from scriba.service.backup import BackupError, backup

    bar, progress = _copying("copying")
    try:
        with bar:
            backup(db or default_db_url(), to, progress)
    except BackupError as error:
        fail(str(error))
        raise typer.Exit(1) from None
    say(f"backup written to {safe(str(to))}")


@cli.command("restore")
def restore_command(backup_file: Annotated[Path, typer.Argument(
                        help="A file made by scriba backup")], db: str = DbOption) -> None:
    """Put a backup back into the database (SQLite). Stop the server first: a running one
    would go on from the games as it last knew them."""
    from scriba.service import default_db_url
    from scriba.service.backup import BackupError, head_revision, restore

    bar, progress = _copying("restoring")
    try:
        with bar:
            revision = restore(db or default_db_url(), backup_file, progress)
    except BackupError as error:
        fail(str(error))
        raise typer.Exit(1) from None
    say(f"restored from {safe(str(backup_file))}")
    if revision != head_revision():
        say("the backup is from an older version: run `scriba db upgrade` before serving")


@cli.command("demo")
def demo_command(db: str = DbOption) -> None:
    """Play the bundled demo game end to end and show how it went."""
    from scriba.cli.demo import run_demo

    run_demo(_service(db), console())


@cli.command("bench")
def bench_command(turns: int = typer.Option(150, help="Turns of the long game"),
                  hook_calls: int = typer.Option(2000, help="Hook calls to time"),
                  as_json: bool = typer.Option(
                      False, "--json", help="Print every figure as one JSON object"),
                  host: bool = typer.Option(
                      True, "--host/--no-host",
                      help="With --json: also many games over HTTP (a few minutes)"),
                  postgres: str | None = typer.Option(
                      None, "--postgres", metavar="URL",
                      help="With --json: also the writers and 16 games served by 1 and 2 "
                           "processes on this PostgreSQL database (it gets new games)")
                  ) -> None:
    """Measure replay speed, vote latency and the cost of a sandboxed hook call."""
    from scriba.bench import run, run_json

    if as_json:
        print(json.dumps(run_json(turns=min(turns, 100), hook_calls=min(hook_calls, 1000),
                                  host=host, postgres=postgres)))
        return
    run(turns=turns, hook_calls=hook_calls, say=console().print)

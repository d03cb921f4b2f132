"""The ``scriba`` command: a thin shell over :class:`scriba.service.Service`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from scriba.cli.agora import register as register_agora
from scriba.kernel.changes import revision
from scriba.kernel.timeutil import parse_duration
from scriba.rulesets import RulesetError, list_rulesets
from scriba.service.scenario import ScenarioError, load_scenario, run_scenario
from scriba.service.service import Service, default_db_url
from scriba.service.summary import summarize
from scriba.store.eventstore import UnknownGame

app = typer.Typer(help="Scriba: host games of Nomic whose rules carry their own code.",
                  no_args_is_help=True)
player_app = typer.Typer(help="Players of a game.", no_args_is_help=True)
scenario_app = typer.Typer(help="Scenario files: games written down as YAML.",
                           no_args_is_help=True)
export_app = typer.Typer(help="Export a game or its ruleset.", no_args_is_help=True)
import_app = typer.Typer(help="Import a game or a ruleset.", no_args_is_help=True)
app.add_typer(player_app, name="player")
app.add_typer(scenario_app, name="scenario")
app.add_typer(export_app, name="export")
app.add_typer(import_app, name="import")
console = Console()
DbOption = typer.Option(None, "--db", help="Database URL (default: $SCRIBA_DB or "
                        "sqlite:///scriba.db)")


def _service(db: str | None) -> Service:
    return Service(db or default_db_url())


def _fail(message: str, code: int = 2) -> None:
    console.print(f"[red]{message}[/red]")
    raise typer.Exit(code)


def _parse_args(pairs: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            _fail(f"arguments are KEY=VALUE, not {pair!r}")
        args[key] = yaml.safe_load(value) if value else ""
    return args


@app.command("rulesets")
def rulesets_command() -> None:
    """List the bundled rulesets."""
    table = Table("id", "name", "language", "rules", "source")
    for ruleset in list_rulesets():
        table.add_row(ruleset.id, ruleset.name, ruleset.language, str(len(ruleset.rules)),
                      ruleset.source)
    console.print(table)


@app.command("games")
def games_command(db: str = DbOption) -> None:
    """List the games in the database."""
    table = Table("id", "name", "ruleset", "events")
    for game in _service(db).games():
        table.add_row(game["id"], game["name"], game["ruleset"], str(game["events"]))
    console.print(table)


@app.command("new")
def new_command(
    ruleset: str,
    game: Annotated[str | None, typer.Option(help="Game id")] = None,
    player: Annotated[list[str] | None, typer.Option(
        "--player", "-p", help="A player (repeat, in order)")] = None,
    office: Annotated[list[str] | None, typer.Option(help="OFFICE=HOLDER (repeat)")] = None,
    start: Annotated[str | None, typer.Option(help="Start time (ISO); default now")] = None,
    seed: int = 0,
    real_clock: Annotated[bool, typer.Option(
        help="Time follows the wall clock instead of events")] = False,
    db: str = DbOption,
) -> None:
    """Create a game from a bundled ruleset."""
    offices = dict(o.split("=", 1) for o in office or [])
    try:
        state = _service(db).create_game(ruleset, game_id=game, seed=seed, start=start,
                                         players=player or None, offices=offices,
                                         clock="real" if real_clock else "simulated")
    except (RulesetError, ValueError) as error:
        _fail(str(error))
    console.print(f"created game [bold]{state.game_id}[/bold] ({ruleset}), "
                  f"players: {', '.join(state.players) or '-'}")


@player_app.command("add")
def player_add(game: str, name: str, db: str = DbOption) -> None:
    """Add a player to a game (as its officer)."""
    outcome = _service(db).add_player(game, name)
    if not outcome.accepted:
        _fail(outcome.message, 1)
    console.print(f"{name} joined {game}")


@app.command("actions")
def actions_command(game: str, db: str = DbOption) -> None:
    """The actions the rules in force declare."""
    service = _service(db)
    decl = service.engine.declarations(service.load(game))
    table = Table("action", "kind", "who", "parameters", "rule", "help")
    for name, action in sorted(decl.actions.items()):
        table.add_row(name, action.get("kind", "plain"), str(action.get("who", "player")),
                      ", ".join(f"{k}:{v}" for k, v in (action.get("params") or {}).items()),
                      action["rule"], action.get("help", ""))
    console.print(table)


@app.command("act")
def act_command(
    game: str, player: str, action: str,
    arg: Annotated[list[str] | None, typer.Argument(
        help="KEY=VALUE (values read as YAML)")] = None,
    changes: Annotated[Path | None, typer.Option(
        help="YAML file with a proposal's changes")] = None,
    db: str = DbOption,
) -> None:
    """Perform an action as a player."""
    args = _parse_args(arg or [])
    if changes is not None:
        args["changes"] = yaml.safe_load(changes.read_text(encoding="utf-8"))
    outcome = _service(db).perform(game, player, action, args, channel="cli")
    if not outcome.accepted:
        _fail(outcome.message, 1)
    for event in outcome.events:
        console.print(f"[dim]{event['seq']:>5}[/dim] {event['type']} {_brief(event['payload'])}")


@app.command("advance")
def advance_command(game: str, by: str = typer.Option(None, help="e.g. 3d, 12h"),
                    to: str = typer.Option(None, help="ISO time"), db: str = DbOption) -> None:
    """Move a game's clock; due timers fire in order."""
    if (by is None) == (to is None):
        _fail("give exactly one of --by or --to")
    outcome = _service(db).advance(game, to=to, by=parse_duration(by) if by else None)
    for event in outcome.events:
        console.print(f"[dim]{event['seq']:>5}[/dim] {event['type']} {_brief(event['payload'])}")


@app.command("tick")
def tick_command(db: str = DbOption) -> None:
    """Fire the timers that are due now in every game (run this from a scheduler)."""
    service = _service(db)
    for game in service.games():
        fired = service.tick(game["id"]).events
        if fired:
            console.print(f"{game['id']}: {len(fired)} events")


@app.command("rules")
def rules_command(game: str, at: str = typer.Option(None, help="As the rules stood then"),
                  seq: int = typer.Option(None, help="As they stood after this event"),
                  full: bool = typer.Option(False, help="Show texts and history"),
                  db: str = DbOption) -> None:
    """Show the ruleset in force (now, or at a past time or event)."""
    service = _service(db)
    state = service.replay(game, upto_seq=seq, upto_time=at) if (at or seq) else service.load(game)
    for rule in state.rules_in_force():
        attrs = ", ".join(f"{k}={v}" for k, v in rule["attributes"].items())
        console.print(f"[bold]{rule['id']}[/bold] [{revision(rule)}] {rule['title']}"
                      f"{'  (' + attrs + ')' if attrs else ''}{'  ⚙' if rule['code'] else ''}")
        if full:
            console.print(rule["text"], markup=False)
            for entry in rule["history"]:
                cause = entry.get("cause") or {}
                who = f" by proposal {cause['proposal']} ({cause.get('author')})" \
                    if cause.get("proposal") else ""
                console.print(f"  [dim]{entry['change']}{who}, {entry.get('date')}[/dim]")
            console.print()


@app.command("state")
def state_command(game: str, as_json: bool = typer.Option(False, "--json"),
                  db: str = DbOption) -> None:
    """Show a game's state."""
    service = _service(db)
    summary = summarize(service.load(game))
    if as_json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return
    status = service.query(game, "status")
    console.print(f"[bold]{game}[/bold] — {summary['ruleset']} — {summary['time']}"
                  + (f" — {status}" if status else ""))
    keys = sorted({k for p in summary["players"].values() for k in p if k != "status"})
    table = Table("player", "status", *keys)
    for name, values in summary["players"].items():
        table.add_row(name, values["status"], *[str(values.get(k, "")) for k in keys])
    console.print(table)
    console.print(f"offices: {summary['offices']}  winner: {summary['winner']}")
    for proposal in summary["proposals"][-10:]:
        console.print(f"proposal {proposal['number']} ({proposal['label']}) by "
                      f"{proposal['author']}: {proposal['status']} {proposal['votes']}")


@app.command("log")
def log_command(game: str, db: str = DbOption) -> None:
    """Show a game's event log."""
    for event in _service(db).log(game):
        console.print(f"[dim]{event['seq']:>5} {event['time']}[/dim] {event['type']} "
                      f"{event['actor'] or ''} {_brief(event['payload'])}")


@app.command("query")
def query_command(game: str, name: str,
                  arg: Annotated[list[str] | None, typer.Argument()] = None,
                  db: str = DbOption) -> None:
    """Ask the rules a question (query hooks), e.g. status."""
    print(json.dumps(_service(db).query(game, name, _parse_args(arg or [])), ensure_ascii=False))


@export_app.command("game")
def export_game(game: str,
                out: Annotated[Path | None, typer.Option(help="File (default: stdout)")] = None,
                db: str = DbOption) -> None:
    """Export a game's log as JSON lines."""
    lines = list(_service(db).export_game(game))
    text = "\n".join(lines) + "\n"
    if out:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


@import_app.command("game")
def import_game(file: Path, game: str = typer.Option(None, help="New game id"),
                db: str = DbOption) -> None:
    """Import a game exported as JSON lines."""
    try:
        state = _service(db).import_game(file.read_text(encoding="utf-8").splitlines(), game)
    except (ValueError, KeyError) as error:
        _fail(f"cannot import {file}: {error}")
    console.print(f"imported {state.game_id}: {state.seq} events")


@scenario_app.command("run")
def scenario_run(file: Path, as_json: bool = typer.Option(False, "--json"),
                 db: str = typer.Option("sqlite://", "--db",
                                        help="Database (default: in memory)")) -> None:
    """Run a scenario file; exit non-zero when a step goes otherwise than written."""
    try:
        scenario = load_scenario(file)
    except (ScenarioError, OSError) as error:
        if as_json:
            print(json.dumps({"error": str(error)}))
        _fail(f"{file}: {error}")
    service = Service(db)
    try:
        result = run_scenario(service, scenario)
    except ScenarioError as error:
        if as_json:
            print(json.dumps({"error": str(error)}))
        _fail(f"{file}: {error}")
    finally:
        service.close()
    if as_json:
        print(json.dumps(result.summary, ensure_ascii=False, indent=2))
    else:
        console.print(f"{file}: game {result.game_id}, winner: {result.summary['winner']}")
        for name, values in result.summary["players"].items():
            console.print(f"  {name}: {values}")
    for error in result.errors:
        typer.echo(error, err=True)
    if not result.ok:
        raise typer.Exit(1)


@app.command("demo")
def demo_command(db: str = DbOption) -> None:
    """Play the bundled demo game end to end and show how it went."""
    from scriba.cli.demo import run_demo

    run_demo(_service(db), console)


@app.command("bench")
def bench_command(turns: int = typer.Option(150, help="Turns of the long game"),
                  hook_calls: int = typer.Option(2000, help="Hook calls to time"),
                  as_json: bool = typer.Option(
                      False, "--json", help="Print every figure as one JSON object")) -> None:
    """Measure replay speed, vote latency and the cost of a sandboxed hook call."""
    from scriba.bench import run, run_json

    if as_json:
        print(json.dumps(run_json(turns=min(turns, 100), hook_calls=min(hook_calls, 1000))))
        return
    run(turns=turns, hook_calls=hook_calls, say=console.print)


register_agora(app, import_app, export_app)


def _brief(payload: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in payload.items() if k not in ("rules", "changes")},
                      ensure_ascii=False, default=str)
    return text if len(text) < 160 else text[:157] + "..."


def main() -> None:
    try:
        app()
    except UnknownGame as missing:
        console.print(f"[red]no game {missing} in {default_db_url()}[/red]")
        sys.exit(2)


if __name__ == "__main__":
    main()

"""The ``scriba`` command: a thin shell over :class:`scriba.service.Service`.

It speaks to people: player text is printed, never interpreted (:mod:`scriba.cli.output`);
every mistake is one clear line on standard error and a non-zero exit, never a traceback
(``SCRIBA_DEBUG=1`` shows it); commands answer in sentences in the game's language.
Heavy modules (the service, its database, the Agora tools) are imported only by the
commands that need them, so that ``scriba --help`` starts at once.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scriba.cli.output import console, fail, precedent_lines, safe, safe_block, say

if TYPE_CHECKING:
    from scriba.service import Service

cli = typer.Typer(help="Scriba: host games of Nomic whose rules carry their own code.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
player_app = typer.Typer(help="Players of a game.", no_args_is_help=True)
scenario_app = typer.Typer(help="Scenario files: games written down as YAML.",
                           no_args_is_help=True)
export_app = typer.Typer(help="Export a game or its ruleset.", no_args_is_help=True)
import_app = typer.Typer(help="Import a game or a ruleset.", no_args_is_help=True)
cli.add_typer(player_app, name="player")
cli.add_typer(scenario_app, name="scenario")
cli.add_typer(export_app, name="export")
cli.add_typer(import_app, name="import")
db_app = typer.Typer(help="The database: its schema.", no_args_is_help=True)
cli.add_typer(db_app, name="db")
DbOption = typer.Option(None, "--db", help="Database URL (default: $SCRIBA_DB or "
                        "sqlite:///scriba.db)")

# Command groups of other modules, registered only when the command line needs them
# (their imports are heavy): (module, the first words that need it, help for --help).
# Each module has ``register(app)``; the Agora one ``register(app, import_app, export_app)``.
EXTRAS: list[tuple[str, tuple[str, ...], dict[str, str]]] = [
    ("scriba.cli.agora", ("agora", "import", "export"),
     {"agora": "Agora Nomic: re-tally its recorded votes."}),
    ("scriba.cli.web", ("serve", "token", "revoke", "officer"),  # the web server, tokens
     {"serve": "Serve the web pages and the API.", "token": "Print a new API token.",
      "revoke": "Revoke API tokens.", "officer": "Make an account a game's officer."}),
    ("scriba.cli.publish", ("publish",),  # the public pages as a static site
     {"publish": "Write a game's public pages as a static site."}),
    ("scriba.cli.mail", ("mail",),  # letters in and out
     {"mail": "Play by e-mail: receive, serve, fetch and send letters."}),
    ("scriba.cli.checkrule", ("check-rule",),  # a rule's code checked, not proposed
     {"check-rule": "Check a rule's code without proposing it."}),
    ("scriba.cli.cases", ("cases",),  # the docket, one case
     {"cases": "A game's cases: the docket, or one case whole."}),
    ("scriba.cli.correct", ("correct",),  # the record corrected, the game recomputed
     {"correct": "Correct a game's record: the game recomputed, the difference shown."}),
    ("scriba.cli.fork", ("fork",),  # a new game with another's history up to a point
     {"fork": "Fork a game: a new game with its history up to a point, played apart."}),
    ("scriba.cli.simulate", ("simulate",),  # bots play a ruleset; what went wrong
     {"simulate": "Let bots play a ruleset and report stalls, runaways and errors."}),
]


class Mistake(Exception):
    """A mistake on the command line; the message is the one line shown."""


def _service(db: str | None) -> Service:
    from scriba.service import default_db_url, open_service

    return open_service(db or default_db_url())


def _parse_args(pairs: list[str]) -> dict[str, str]:
    """KEY=VALUE pairs; values stay text (the action's declared types are applied by the
    game: ``ruling=yes`` is "yes", ``question=Rule 301: does it bind?`` is that question)."""
    args: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise Mistake(f"arguments are KEY=VALUE, not {pair!r}")
        if key in args:
            raise Mistake(f"the argument {key} is given twice")
        args[key] = value
    return args


def _read_text(path: Path, what: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise Mistake(f"cannot read the {what} {path}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Mistake(f"the {what} {path} is not UTF-8 text (byte {error.start})") from None


def _table(headers: list[str], rows: list[list[str]]) -> None:
    """Aligned columns, never cut: long cells push the line out and the terminal wraps
    it; cells are already made safe."""
    widths = [max([len(h)] + [len(_plain(r[i])) for r in rows]) for i, h in enumerate(headers)]
    say("[bold]" + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
        .rstrip() + "[/bold]")
    for row in rows:
        say("  ".join(cell + " " * (w - len(_plain(cell)))
                      for cell, w in zip(row, widths, strict=True)).rstrip())


def winner_sentence(winners: list[str], ended: Any = False) -> str:
    """Who won, as a sentence ("Anna wins." / "No winner yet.")."""
    if winners:
        names = ", ".join(safe(w) for w in winners)
        if ended:
            return f"{names} won."
        return f"{names} {'wins' if len(winners) == 1 else 'win'}."
    return "The game is over without a winner." if ended else "No winner yet."


def language_name(code: str) -> str:
    """A language's English name ("it" → "Italian")."""
    from babel import Locale

    return str(Locale("en").languages.get(code, code))


def _plain(markup: str) -> str:
    from rich.text import Text

    return Text.from_markup(markup).plain


# --- games --------------------------------------------------------------------------

@cli.command("rulesets")
def rulesets_command() -> None:
    """List the bundled rulesets."""
    from scriba.service.rulesets import list_rulesets

    # The id is what `scriba new` takes; the seed files they come from are no one's business
    _table(["id", "name", "language", "rules"],
           [[safe(r.id, None), safe(r.name), safe(language_name(r.language)),
             str(len(r.rules))] for r in list_rulesets()])


@cli.command("games")
def games_command(db: str = DbOption) -> None:
    """List the games in the database."""
    _table(["id", "name", "ruleset", "events"],
           [[safe(g["id"], None), safe(g["name"]), safe(g["ruleset"], None), str(g["events"])]
            for g in _service(db).reads.games()])


@cli.command("new")
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
    from scriba.service import validation
    from scriba.service.rulesets import RulesetError

    offices = {}
    for pair in office or []:
        name, sep, holder = pair.partition("=")
        if not sep or not name:
            raise Mistake(f"--office is OFFICE=HOLDER, not {pair!r}")
        offices[name] = holder
    if start is not None:
        start = validation.moment(start, "start")
    try:
        state = _service(db).commands.create_game(ruleset, game_id=game, seed=seed, start=start,
                                                  players=player or None, offices=offices,
                                                  clock="real" if real_clock else "simulated")
    except RulesetError as error:
        raise Mistake(str(error)) from None
    say(f"created game [bold]{safe(state.game_id, None)}[/bold] ({safe(ruleset)}), "
        f"players: {', '.join(safe(p) for p in state.players) or '-'}")


@player_app.command("add")
def player_add(game: str, name: str,
               email: Annotated[str | None, typer.Option(
                   help="Seat an account with this address as the player")] = None,
               db: str = DbOption) -> None:
    """Add a player to a game (as its officer)."""
    service = _service(db)
    outcome = service.commands.add_player(game, name)
    if not outcome.accepted:
        fail(outcome.message)
        raise typer.Exit(1)
    joined = outcome.events[0]["payload"]["player"] if outcome.events else name
    say(f"{safe(joined, None)} joined {safe(game, None)}")
    if email is not None:
        service.seats.seat(game, joined, email)
        say(f"{safe(email, None)} now plays as {safe(joined, None)}")


@cli.command("actions")
def actions_command(game: str, player: Annotated[str | None, typer.Argument(
        help="Only what this player may do now")] = None, db: str = DbOption) -> None:
    """The actions of the rules in force: parameters, who may act, the vote words."""
    service = _service(db)
    if player is None:
        actions = service.reads.declared_actions(game)
    else:
        actions = service.reads.actions_for(game, player)
        if not actions:
            say(f"{safe(player)} may do nothing now in {safe(game, None)}.")
            return
        say(f"What {safe(player)} may do now in {safe(game, None)}:")
    # Listed for a player: the owed moves first, as the rules put them; all: by name.
    for action in actions if player is not None else sorted(actions, key=lambda a: a.name):
        who = ", ".join(safe(w) for w in action.who)
        say(f"[bold]{safe(action.name, None)}[/bold] ({safe(action.kind)}; who: {who}; "
            f"rule {safe(action.rule, None)})")
        if action.due:
            by = f", by {safe(action.deadline)}" if action.deadline else ""
            say(f"    you must do this now{by}: {safe(action.due_reason, 500) or '-'}")
        params = ", ".join(f"{safe(k, None)}: {safe(v)}" for k, v in action.params.items())
        say(f"    parameters: {params or '-'}")
        for param, values in action.options.items():
            say(f"    {safe(param, None)} may be: {', '.join(safe(v) for v in values)}")
        if action.choices:
            words = ", ".join(f"{safe(w)} = {safe(c)}" for w, c in action.choices.items())
            say(f"    votes: {words}")
        if action.help:
            say(f"    {safe(action.help, 500)}")


@cli.command("act")
def act_command(
    game: str, player: str, action: str,
    arg: Annotated[list[str] | None, typer.Argument(
        help="KEY=VALUE (values are text; the action's declared types apply)")] = None,
    changes: Annotated[Path | None, typer.Option(
        help="YAML file with a proposal's changes")] = None,
    events: Annotated[bool, typer.Option(
        "--events", help="Also list the events recorded")] = False,
    db: str = DbOption,
) -> None:
    """Perform an action as a player; the reply is told in the game's language."""
    args: dict[str, Any] = dict(_parse_args(arg or []))
    if changes is not None:
        args["changes"] = _yaml(_read_text(changes, "changes file"), changes)
    service = _service(db)
    outcome = service.commands.perform(game, player, action, args, channel="cli")
    say(safe_block(service.reads.describe_outcome(game, outcome)))
    if events:
        for event in outcome.events:
            _event_line(event)
    if not outcome.accepted:
        raise typer.Exit(1)


def _yaml(text: str, path: Path) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise Mistake(f"{path} is not valid YAML{where}") from None


@cli.command("advance")
def advance_command(game: str, by: str = typer.Option(None, help="e.g. 3d, 12h"),
                    to: str = typer.Option(None, help="ISO time"), db: str = DbOption) -> None:
    """Move a game's clock; due timers fire in order."""
    from scriba.service import validation

    if (by is None) == (to is None):
        raise Mistake("give exactly one of --by or --to")
    service = _service(db)
    state = service.reads.load(game)
    if service.reads.status(game).get("clock") != "simulated":
        # As the officer's page and the API: a real clock is the world's, not ours to move.
        raise Mistake(f"{game} runs on the real clock: its time is now, and its deadlines "
                      "fire when they fall (scriba serve, or scriba tick). Nothing was moved.")
    before, language = state.seq, state.language
    seconds = validation.duration(by, "by", language) if by is not None else None
    to = validation.moment(to, "to", language) if to is not None else None
    service.commands.advance(game, to=to, by=seconds)
    _tell(service, game, before)


def _tell(service: Service, game: str, after_seq: int) -> None:
    for entry in service.reads.chronicle(game, after_seq=after_seq):
        say(f"[dim]{entry['seq']:>5}[/dim] {safe_block(entry['text'])}")


@cli.command("tick")
def tick_command(db: str = DbOption) -> None:
    """Fire the timers that are due now in every game (run this from a scheduler)."""
    for game_id, count in _service(db).commands.tick_due().items():
        say(f"{safe(game_id, None)}: {count} events")


@cli.command("rules")
def rules_command(game: str, at: str = typer.Option(None, help="As the rules stood then"),
                  seq: int = typer.Option(None, help="As they stood after this event"),
                  full: bool = typer.Option(False, help="Show texts and history"),
                  db: str = DbOption) -> None:
    """Show the ruleset in force (now, or at a past time or event)."""
    reads = _service(db).reads
    rules = [r for r in reads.rules_at(game, at=at, seq=seq) if r["in_force"]]
    for rule in rules:
        attrs = ", ".join(f"{safe(k)}={safe(v)}" for k, v in rule["attributes"].items())
        say(f"[bold]{safe(rule['id'], None)}[/bold] [{rule['revision'] + 1}] {safe(rule['title'])}"
            f"{'  (' + attrs + ')' if attrs else ''}{'  ⚙' if rule['code'] else ''}")
        if full:
            say(safe_block(rule["text"]))
            for entry in rule["history"]:
                cause = entry.get("cause") or {}
                who = f" by proposal {safe(cause['proposal'])} ({safe(cause.get('author'))})" \
                    if cause.get("proposal") else ""
                say(f"  [dim]{safe(entry['change'])}{who}, {safe(entry.get('date'))}[/dim]")
            if at is None and seq is None:  # the judgments known now
                for line in precedent_lines(reads.precedents(game, rule["id"])):
                    say(f"  [dim]{line}[/dim]")
            say()


@cli.command("state")
def state_command(game: str, as_json: bool = typer.Option(False, "--json"),
                  db: str = DbOption) -> None:
    """Show a game's state."""
    from scriba.service.words import choice_word, show_time, status_word

    service = _service(db)
    summary = service.reads.summary(game)
    if as_json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
        return
    status = service.reads.status(game)
    words = service.reads.words(game, "en")
    period = status.get("period")
    say(f"[bold]{safe(game, None)}[/bold] — {safe(summary['ruleset'])} — "
        f"{show_time(summary['time'])}" + (f" — {safe(period)}" if period else ""))
    if status.get("deadline"):
        name = words.timer(status["deadline_name"]) if status.get("deadline_name") else None
        say(f"Next deadline{' (' + safe(name) + ')' if name else ''}: "
            f"{show_time(status['deadline'])}")
    keys = sorted({k for p in summary["players"].values() for k in p if k != "status"})
    _table(["player", "status", *[safe(words.var(k)) for k in keys]],
           [[safe(name, None), safe(values["status"]),
             *[safe(words.show(k, values[k]) if k in values else "") for k in keys]]
            for name, values in summary["players"].items()])
    if summary["offices"]:
        say("Offices: " + ", ".join(f"{safe(words.office(o))} {safe(h or 'vacant')}"
                                    for o, h in summary["offices"].items()) + ".")
    say(winner_sentence(summary.get("winners") or [], summary.get("ended")))
    for proposal in summary["proposals"][-10:]:
        votes = ", ".join(f"{safe(v)} {safe(choice_word(c, words))}"
                          for v, c in proposal["votes"].items())
        title = f" “{safe(proposal['title'])}”" if proposal.get("title") else ""
        say(f"Proposal {proposal['number']}{title} by {safe(proposal['author'])}: "
            f"{safe(status_word(proposal['status'], 'en'))}"
            + (f"; votes: {votes}." if votes else "; no votes yet."))


@cli.command("log")
def log_command(game: str, db: str = DbOption) -> None:
    """Show a game's event log."""
    service = _service(db)
    service.reads.load(game)  # an unknown game says so
    for event in service.reads.log(game):
        _event_line(event, with_time=True)


@cli.command("chronicle")
def chronicle_command(game: str, player: Annotated[str | None, typer.Option(
        help="Only what this player did or what concerns them")] = None,
        refusals: Annotated[bool, typer.Option(
            "--refusals", help="Also the refused commands, as the officer sees them "
                               "(the public chronicle leaves them out)")] = False,
        db: str = DbOption) -> None:
    """The game's story, told in sentences in its language, as the public reads it."""
    service = _service(db)
    for entry in service.reads.chronicle(game, player=player, officer=refusals):
        say(f"[dim]{entry['seq']:>5} {entry['time']}[/dim] {safe_block(entry['text'])}")


def _event_line(event: dict[str, Any], with_time: bool = False) -> None:
    when = f" {event['time']}" if with_time else ""
    say(f"[dim]{event['seq']:>5}{when}[/dim] {safe(event['type'])} "
        f"{safe(event['actor'] or '')} {safe(_brief(event['payload']), None)}")


def _brief(payload: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in payload.items() if k not in ("rules", "changes")},
                      ensure_ascii=False, default=str)
    return text if len(text) < 160 else text[:157] + "..."


@cli.command("query")
def query_command(game: str, name: str,
                  arg: Annotated[list[str] | None, typer.Argument()] = None,
                  db: str = DbOption) -> None:
    """Ask the rules a question (query hooks), e.g. status."""
    answer = _service(db).reads.query(game, name, _parse_args(arg or []))
    if answer is None:
        raise Mistake(f"no rule in force of {game} answers the query {name!r}")
    print(json.dumps(answer, ensure_ascii=False))


# --- export and import --------------------------------------------------------------

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


# --- scenarios and tools --------------------------------------------------------------

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


# --- the whole command ----------------------------------------------------------------

_registered: set[str] = set()


def register_extras(argv: list[str] | None = None) -> typer.Typer:
    """Register the other modules' command groups: all of them, or (given the command
    line) those it needs, with a one-line stand-in for the others in ``--help``."""
    first = next((a for a in argv if not a.startswith("-")), None) if argv is not None \
        else None
    for module_name, words, stand_ins in EXTRAS:
        if module_name in _registered:
            continue
        if argv is None or first in words:
            module = importlib.import_module(module_name)
            if module_name == "scriba.cli.agora":
                module.register(cli, import_app, export_app)
            else:
                module.register(cli)
            _registered.add(module_name)
        elif f"stand-in {module_name}" not in _registered:
            for word, help_text in stand_ins.items():
                cli.command(word, help=help_text, context_settings={
                    "allow_extra_args": True, "ignore_unknown_options": True})(_stand_in)
            _registered.add(f"stand-in {module_name}")
    return cli


def _stand_in() -> None:  # never run: the real group replaces it when its word is given
    raise Mistake("this command is not available")


def __getattr__(name: str) -> Any:
    # ``from scriba.cli.main import app`` (tests, embedding) gets every command.
    if name == "app":
        return register_extras()
    raise AttributeError(name)


def main() -> None:
    argv = sys.argv[1:]
    if argv[:2] == ["mail", "receive"]:
        # a mail server starts this once per letter: answered before typer builds its
        # commands (see scriba.cli.mail.receive_argv)
        from scriba.cli.mail import receive_argv

        code = receive_argv(argv[2:])
        if code is not None:
            sys.exit(code)
    register_extras(argv)
    try:
        cli(args=argv, standalone_mode=True)
    except SystemExit:
        raise
    except Exception as error:  # noqa: BLE001 - every mistake is one line, never a traceback
        if os.environ.get("SCRIBA_DEBUG"):
            raise
        fail(_explain(error))
        sys.exit(1 if _is_refusal(error) else 2)


def _is_refusal(error: Exception) -> bool:
    from scriba.service.errors import NotAllowed

    return isinstance(error, NotAllowed)


def _explain(error: Exception) -> str:
    from scriba.service.errors import ServiceError

    if isinstance(error, ServiceError | Mistake):
        return str(error)
    if isinstance(error, OSError):
        return f"{error.filename or ''}: {error.strerror or error}".lstrip(": ")
    if isinstance(error, ValueError | LookupError | TypeError):
        return f"{error}"
    return f"Scriba failed: {type(error).__name__}: {error} (SCRIBA_DEBUG=1 shows where)"


if __name__ == "__main__":
    main()

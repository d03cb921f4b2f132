"""The commands that read a game: its rules, state, log, chronicle and the rules' queries."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from scriba.cli.apps import DbOption, cli
from scriba.cli.common import Mistake, _event_line, _parse_args, _service, _table, winner_sentence
from scriba.cli.output import precedent_lines, safe, safe_block, say


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


@cli.command("query")
def query_command(game: str, name: str,
                  arg: Annotated[list[str] | None, typer.Argument()] = None,
                  db: str = DbOption) -> None:
    """Ask the rules a question (query hooks), e.g. status."""
    answer = _service(db).reads.query(game, name, _parse_args(arg or []))
    if answer is None:
        raise Mistake(f"no rule in force of {game} answers the query {name!r}")
    print(json.dumps(answer, ensure_ascii=False))

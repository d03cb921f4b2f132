"""The commands that make and play games: rulesets, games, new, player add, actions, act,
advance and tick."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scriba.cli.apps import DbOption, cli, player_app
from scriba.cli.common import (
    Mistake,
    _event_line,
    _parse_args,
    _read_text,
    _service,
    _table,
    _yaml,
    language_name,
)
from scriba.cli.output import fail, safe, safe_block, say

if TYPE_CHECKING:
    from scriba.service import Service


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

"""``scriba simulate RULESET|GAME [--proposal N] --games N --turns T --bots random,for
--seed S [--json]``: bots play games in memory (:mod:`scriba.service.lab`), and the
findings are told in sentences (a developer's tool: in English), or with ``--json`` as
data. RULESET: new games of a bundled ruleset, side by side on every core (``--workers``
processes). GAME: a game of the database (``--db``), played on from its current state; with
``--proposal N`` each run with the proposal adopted now is paired with the same run
with it rejected, and the report is the difference."""

from __future__ import annotations

import json
import os
from typing import Annotated, Any

import typer

from scriba.cli.apps import DbOption
from scriba.cli.main import Mistake
from scriba.cli.output import safe_block, say


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)


def simulate_command(
    what: Annotated[str, typer.Argument(
        metavar="RULESET|GAME", help="A bundled ruleset (see `scriba rulesets`) or a game's id")],
    proposal: Annotated[int | None, typer.Option(
        help="With a GAME: the open proposal to try (adopted now against rejected now)")]
    = None,
    games: int = typer.Option(1, help="How many games (pairs with --proposal)"),
    turns: int = typer.Option(30, help="Turns of each game (every player acts once a turn)"),
    bots: str = typer.Option("random", help="Strategies, given to the players in turn: "
                             "random, for, against, self, idle"),
    players: int = typer.Option(3, help="Players in each new game (at least one per bot)"),
    seed: int = typer.Option(0, help="The same seed plays the same games"),
    workers: int | None = typer.Option(None, help="Processes playing the games side by "
                                       "side (default: every core of the machine; the "
                                       "findings are the same)"),
    as_json: bool = typer.Option(False, "--json", help="The findings as one JSON object"),
    db: str = DbOption,
) -> None:
    """Let bots play a ruleset or a game and report how the games end, stalls, stuck
    periods, runaways, rule-code aborts and budgets, invariants broken, offered actions
    refused and internal errors."""
    from scriba.service.lab.bots import STRATEGIES
    from scriba.service.rulesets import bundled_rulesets

    strategies = [b.strip() for b in bots.split(",") if b.strip()]
    unknown = [b for b in strategies if b not in STRATEGIES]
    if not strategies or unknown:
        raise Mistake(f"Bots are some of {', '.join(STRATEGIES)}, separated by commas.")
    if not (1 <= games <= 1000 and 1 <= turns <= 10_000 and 1 <= players <= 8):
        raise Mistake("Choose 1 to 1000 games, 1 to 10000 turns and 1 to 8 players.")
    workers = workers if workers is not None else os.cpu_count() or 1
    if not 1 <= workers <= (os.cpu_count() or 1):
        raise Mistake(f"Choose 1 to {os.cpu_count() or 1} workers (the machine's cores).")
    known = [r["id"] for r in bundled_rulesets()]
    if what in known:
        if proposal is not None:
            raise Mistake("--proposal tries a proposal of a game: give the game's id.")
        _ruleset(what, games, turns, strategies, players, seed, workers, as_json)
    else:
        _game(what, proposal, games, turns, strategies, seed, workers, as_json, db, known)


def _ruleset(ruleset: str, games: int, turns: int, strategies: list[str], players: int,
             seed: int, workers: int, as_json: bool) -> None:
    from scriba.service import open_service
    from scriba.service.lab.simulate import simulate

    found, seconds = simulate(open_service, ruleset, games, turns, strategies, seed,
                              players=players, workers=workers)
    _tell(found, seconds, as_json, {"ruleset": ruleset, "seed": seed})


def _game(game: str, proposal: int | None, games: int, turns: int, strategies: list[str],
          seed: int, workers: int, as_json: bool, db: str, known: list[str]) -> None:
    from scriba.cli.common import _service
    from scriba.service import open_service
    from scriba.service.errors import ServiceError
    from scriba.service.lab.findings import tell_findings
    from scriba.service.lab.proposal import simulate_game, simulate_proposal

    service = _service(db)
    try:
        try:
            state = service.reads.load(game)
        except ServiceError:
            raise Mistake(f"There is no ruleset or game {game}; the rulesets are: "
                          f"{', '.join(known)}.") from None
        if proposal is not None and state.proposals.get(str(proposal), {}).get("status") \
                != "open":
            raise Mistake(f"The game {game} has no open proposal {proposal}.")
        events = service.reads.log(game)
    finally:
        service.close()
    if proposal is None:
        found, seconds = simulate_game(open_service, events, games=games, turns=turns,
                                       bots=strategies, seed=seed)
        _tell(found, seconds, as_json, {"game": game, "seed": seed})
        return
    report = simulate_proposal(open_service, events, proposal, games=games, turns=turns,
                               bots=strategies, seed=seed, workers=workers)
    differences = report.differences()
    if as_json:
        print(json.dumps({**report.to_dict(), "differences": differences},
                         ensure_ascii=False))
    else:
        say(safe_block(f"Proposal {proposal} of {game}: {len(report.with_proposal)} games of "
                       f"{turns} turns with it adopted now, each against the same game with "
                       f"it rejected ({report.played} turns in {report.seconds:.1f} s)."))
        if not differences:
            say(safe_block("No difference found."))
        for index in sorted({d["game"] for d in differences}):
            say(safe_block(f"Game {index}:"))
            for line in tell_findings([d for d in differences if d["game"] == index]):
                say(safe_block("  " + line))
    if any(f.internal_errors or f.replay_matches is False
           for f in report.with_proposal + report.without_proposal):
        raise typer.Exit(1)


def _tell(found: list[Any], seconds: float, as_json: bool, head: dict[str, Any]) -> None:
    from scriba.service.lab.findings import describe, summary

    if as_json:
        print(json.dumps({**head, "seconds": round(seconds, 2),
                          "games": [{**f.to_dict(), "findings": f.findings()} for f in found]},
                         ensure_ascii=False))
    else:
        for f in found:
            for line in describe(f):
                say(safe_block(line))
        for line in summary(found, seconds):
            say(safe_block(line))
    if any(f.internal_errors or f.replay_matches is False for f in found):
        raise typer.Exit(1)

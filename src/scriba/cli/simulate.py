"""``scriba simulate RULESET --games N --turns T --bots random,for --seed S [--json]``:
bots play games of a bundled ruleset in memory (:mod:`scriba.service.lab`), one game after the
other or ``--workers`` side by side, and the findings are told in sentences (a
developer's tool: in English), or with ``--json`` as data."""

from __future__ import annotations

import json
import os
from typing import Annotated

import typer

from scriba.cli.main import Mistake
from scriba.cli.output import safe_block, say


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate_command)


def simulate_command(
    ruleset: Annotated[str, typer.Argument(help="A bundled ruleset (see `scriba rulesets`)")],
    games: int = typer.Option(1, help="How many games, one after the other"),
    turns: int = typer.Option(30, help="Turns of each game (every player acts once a turn)"),
    bots: str = typer.Option("random", help="Strategies, given to the players in turn: "
                             "random, for, against, idle"),
    players: int = typer.Option(3, help="Players in each game (at least one per bot)"),
    seed: int = typer.Option(0, help="The same seed plays the same games"),
    workers: int = typer.Option(1, help="Processes playing the games side by side (the "
                                "machine's cores at most; the findings are the same)"),
    as_json: bool = typer.Option(False, "--json", help="The findings as one JSON object"),
) -> None:
    """Let bots play a ruleset and report how the games end, stalls, runaways, rule-code
    aborts, offered actions refused and internal errors."""
    from scriba.service import open_service
    from scriba.service.lab.bots import STRATEGIES
    from scriba.service.lab.findings import describe, summary
    from scriba.service.lab.simulate import simulate
    from scriba.service.rulesets import list_rulesets

    known = [r.id for r in list_rulesets()]
    if ruleset not in known:
        raise Mistake(f"There is no ruleset {ruleset}; there are: {', '.join(known)}.")
    strategies = [b.strip() for b in bots.split(",") if b.strip()]
    unknown = [b for b in strategies if b not in STRATEGIES]
    if not strategies or unknown:
        raise Mistake(f"Bots are some of {', '.join(STRATEGIES)}, separated by commas.")
    if not (1 <= games <= 1000 and 1 <= turns <= 10_000 and 1 <= players <= 8):
        raise Mistake("Choose 1 to 1000 games, 1 to 10000 turns and 1 to 8 players.")
    if not 1 <= workers <= (os.cpu_count() or 1):
        raise Mistake(f"Choose 1 to {os.cpu_count() or 1} workers (the machine's cores).")
    found, seconds = simulate(open_service, ruleset, games, turns, strategies, seed,
                              players=players, workers=workers)
    if as_json:
        print(json.dumps({"ruleset": ruleset, "seed": seed, "seconds": round(seconds, 2),
                          "games": [f.to_dict() for f in found]}, ensure_ascii=False))
    else:
        for f in found:
            for line in describe(f):
                say(safe_block(line))
        for line in summary(found, seconds):
            say(safe_block(line))
    if any(f.internal_errors or f.replay_matches is False for f in found):
        raise typer.Exit(1)

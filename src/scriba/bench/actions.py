"""What a player may do now (the "Now" page's actions and their values), mid-game: one
scenario of each bundled ruleset played halfway, then every player's actions asked in
turn, through the rule host a server uses. ``scriba bench --json`` reports the median per
player as ``actions_ms_by_ruleset``."""

from __future__ import annotations

import statistics
import time

from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

# A long game of each kind, with many players where the ruleset has them.
SCENARIOS = {"nomic3": "against_voters", "suber": "whole_game", "anderwelt": "ganzes_spiel",
             "decameronomic": "partita", "equinomic": "amend_and_repeal"}


def actions_ms(service: Service, ruleset: str, scenario: str, rounds: int = 5) -> float:
    played = load_scenario(BUNDLED / ruleset / "scenarios" / f"{scenario}.yaml")
    steps = played.get("steps") or []
    halfway = {**played, "steps": steps[:len(steps) // 2], "expect": None}
    game = run_scenario(service.commands, halfway, game_id=f"actions-{ruleset}").game_id
    players = sorted(service.reads.summary(game, ["players"])["players"])
    for player in players:  # warm: the rules compiled, the view's parts in the worker
        service.reads.actions_for(game, player)
    samples = []
    for _ in range(rounds):
        for player in players:
            started = time.perf_counter()
            service.reads.actions_for(game, player)
            samples.append(time.perf_counter() - started)
    return 1000 * statistics.median(samples)


def actions_ms_by_ruleset(service: Service) -> dict[str, float]:
    return {ruleset: round(actions_ms(service, ruleset, scenario), 2)
            for ruleset, scenario in SCENARIOS.items()}

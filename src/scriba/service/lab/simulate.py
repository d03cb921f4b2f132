"""Games of a ruleset played by bots in an in-memory service, and what they showed.

A turn: every player, in order, is offered what it may do now and its bot acts once (or
not); then the clock moves to the game's next deadline (its earliest timer), so that
votes close and periods end as they would. When no deadline is left and no player was
offered anything, the game is stalled. The same seed gives the same games."""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from scriba.rulesets import load_ruleset
from scriba.service.errors import ServiceError
from scriba.service.lab.bots import Bot
from scriba.service.lab.findings import GameFindings, aborts, numbers, paired_runaways, runaways

if TYPE_CHECKING:
    from scriba.service.assembly import Service

# Opens a service on a database URL (:func:`scriba.service.open_service`): handed in by
# whoever runs the lab, since the service is assembled with the lab among its parts.
Opener = Callable[[str], "Service"]

START = "2026-01-05T12:00:00Z"
NAMES = ["Ada", "Bruno", "Carla", "Dario", "Elena", "Fritz", "Greta", "Hugo"]


def warmup_turns(turns: int) -> int:
    """After how many turns the runaways' starting values are taken."""
    return max(1, min(3, turns // 4))


def simulate(opener: Opener, ruleset: str, games: int, turns: int, bots: list[str], seed: int,
             extra_rules: list[dict[str, Any]] | None = None,
             players: int | None = None, workers: int = 1
             ) -> tuple[list[GameFindings], float]:
    """``games`` games, each in its own in-memory service opened by ``opener`` (in
    ``workers`` processes, or one after the other); their findings, in order, and the
    seconds they took. With ``extra_rules`` (a proposal's rules, in force from the
    start), each game is also played without them, for the runaways. The findings do
    not depend on ``workers``."""
    started = time.perf_counter()
    jobs = [(opener, ruleset, index, turns, bots, seed, extra_rules, players)
            for index in range(1, games + 1)]
    if workers > 1 and games > 1:
        context = multiprocessing.get_context("spawn")  # no forked sandbox pool or database
        with context.Pool(min(workers, games)) as pool:
            found = pool.starmap(play_paired, jobs)
    else:
        found = [play_paired(*job) for job in jobs]
    return found, time.perf_counter() - started


def play_paired(opener: Opener, ruleset: str, index: int, turns: int, bots: list[str], seed: int,
                extra_rules: list[dict[str, Any]] | None,
                players: int | None) -> GameFindings:
    """One game's findings; with ``extra_rules``, its runaways against the same game
    played without them."""
    findings, end = play(opener, ruleset, index, turns, bots, seed, extra_rules, players)
    if extra_rules:
        baseline, without = play(opener, ruleset, index, turns, bots, seed, None, players)
        theirs = {(r["who"], r["name"]) for r in baseline.runaways}
        findings.runaways = [r for r in findings.runaways
                             if (r["who"], r["name"]) not in theirs]
        findings.runaways += paired_runaways(without, end)
    return findings


def play(opener: Opener, ruleset: str, index: int, turns: int, bots: list[str], seed: int,
         extra_rules: list[dict[str, Any]] | None = None,
         players: int | None = None
         ) -> tuple[GameFindings, dict[tuple[str, str], float]]:
    """One game's findings, and its numbers at the end."""
    service = opener("sqlite://")
    try:
        return _play(service, ruleset, index, turns, bots, seed, extra_rules, players)
    finally:
        service.close()


def _play(service: Service, ruleset: str, index: int, turns: int, strategies: list[str],
          seed: int, extra_rules: list[dict[str, Any]] | None,
          players: int | None) -> tuple[GameFindings, dict[tuple[str, str], float]]:
    names = NAMES[:max(players or 3, len(strategies))]
    bots = {name: Bot(strategies[i % len(strategies)], f"{seed}:{index}:{name}")
            for i, name in enumerate(names)}
    found = GameFindings(ruleset, index, seed, [bots[n].strategy for n in names])
    game_id = f"sim-{index}"
    rules = None
    if extra_rules:
        base = load_ruleset(ruleset).game_payload(game_id, game_id, seed, "simulated", None)
        rules = [*base["rules"], *extra_rules]
    service.commands.create_game(ruleset, game_id=game_id, seed=seed + index, start=START,
                                 players=names, rules=rules)
    start_numbers: dict[tuple[str, str], float] = {}
    middle_numbers: dict[tuple[str, str], float] = {}
    middle = max(warmup_turns(turns) + 1, (warmup_turns(turns) + turns) // 2)
    try:
        for turn in range(1, turns + 1):
            found.turns = turn
            offered_any = _turn(service, game_id, turn, bots, found)
            state = service.reads.load(game_id)
            if state.ended:
                found.ended, found.winners, found.end_turn = True, list(state.winners), turn
                break
            if turn == warmup_turns(turns):
                start_numbers = numbers(state.players, state.vars)
            if turn == middle:
                middle_numbers = numbers(state.players, state.vars)
            deadline = _next_deadline(state.timers.values())
            if deadline is not None:
                service.commands.advance(game_id, to=max(deadline, state.time))
            elif not offered_any:
                found.stall_turn = turn
                break
    except Exception as error:  # noqa: BLE001 - a finding: the simulation reports it
        found.internal_errors.append(_error_line(error))
    state = service.reads.load(game_id)
    end_numbers = numbers(state.players, state.vars)
    found.runaways = runaways(start_numbers, middle_numbers, end_numbers) \
        if start_numbers else []
    log = service.reads.log(game_id)
    found.aborts = aborts([e["payload"] for e in log if e["type"] == "rule_code_aborted"])
    found.replay_matches = service.reads.replay(game_id).to_dict() == state.to_dict()
    return found, end_numbers


def _turn(service: Service, game_id: str, turn: int, bots: dict[str, Bot],
          found: GameFindings) -> bool:
    """Every active player acts once if its bot wants to; whether anything was offered."""
    offered_any = False
    for name, bot in bots.items():
        state = service.reads.load(game_id)
        if state.ended:
            break
        offered = service.reads.actions_for(game_id, name)
        offered_any = offered_any or bool(offered)
        choice = bot.choose(offered, list(state.active_players()))
        if choice is None:
            continue
        action, args = choice
        found.actions += 1
        try:
            outcome = service.commands.perform(game_id, name, action, args)
        except ServiceError as refusal:  # the input itself was refused
            _refused(found, bot, turn, name, action, str(refusal))
            continue
        if not outcome.accepted:
            _refused(found, bot, turn, name, action, outcome.message)
    return offered_any


def _refused(found: GameFindings, bot: Bot, turn: int, player: str, action: str,
             why: str) -> None:
    """A refusal: a finding when every value was one offered, else a guess refused."""
    bot.refused(action)
    if bot.guessed:
        found.guesses_refused += 1
    else:
        found.refused.append({"turn": turn, "player": player, "action": action, "why": why})


def _next_deadline(timers: Iterable[dict[str, Any]]) -> str | None:
    times = [str(t["at"]) for t in timers if t.get("at")]
    return min(times) if times else None


def _error_line(error: BaseException) -> str:
    where = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__} at {where.filename.rsplit('/', 1)[-1]} line " \
           f"{where.lineno}: {error}"

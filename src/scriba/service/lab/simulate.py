"""Games played by bots in an in-memory service, and what they showed.

A turn: every player, in order, is offered what it may do now and its bot acts once (or
not); then the clock moves to the game's next deadline (its earliest timer), so that
votes close and periods end as they would. When no deadline is left and no player was
offered anything, the game is stalled. After every turn the rules' ``invariants`` hooks
are asked what does not hold. The same seed gives the same games.

:func:`simulate` plays new games of a ruleset; :mod:`.proposal` plays an existing game
on from its record, with a proposal adopted or rejected (both use :func:`play_game`)."""

from __future__ import annotations

import multiprocessing
import time
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from scriba.rulesets import load_ruleset
from scriba.service.errors import ServiceError
from scriba.service.lab.bots import Bot
from scriba.service.lab.findings import (
    GameFindings,
    Numbers,
    aborts,
    numbers,
    paired_runaways,
    runaways,
    stuck_after,
)

# The service (:class:`scriba.service.assembly.Service`), not imported even for its type:
# the service is assembled with the lab among its parts. Opens one on a database URL
# (:func:`scriba.service.open_service`): handed in by whoever runs the lab.
Service = Any
Opener = Callable[[str], Service]
Trace = tuple[Numbers, Numbers, Numbers]  # numbers after the first turns, halfway, at the end

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
    seconds they took. With ``extra_rules`` (rules in force from the start), each game
    is also played without them, for the runaways. The findings do not depend on
    ``workers``."""
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
    findings, trace = play(opener, ruleset, index, turns, bots, seed, extra_rules, players)
    if extra_rules:
        baseline, without = play(opener, ruleset, index, turns, bots, seed, None, players)
        pair(findings, trace, baseline, without)
    return findings


def pair(found: GameFindings, trace: Trace, baseline: GameFindings, without: Trace) -> None:
    """Tell ``found`` (played with a proposal) against ``baseline`` (without it): its
    runaways are those beyond the baseline's, its stuck period says how often the
    period moved there."""
    found.runaways = paired_runaways(trace, without)
    # Paired, the game's own pace is known: the period is stuck when it stayed unmoved
    # long enough while, in the same turns, it moved on in the game without the proposal.
    found.period_stuck = None
    mine, theirs = found.period or {}, baseline.period or {}
    quiet = found.turns - int(mine.get("since_turn") or 0)
    moved_there = sum(1 for turn in theirs.get("moved_in") or [] if turn > mine["since_turn"]) \
        if mine else 0
    if mine and quiet >= stuck_after(found.turns) and moved_there > 0:
        found.period_stuck = {"variable": mine["variable"], "value": mine["value"],
                              "since_turn": mine["since_turn"], "turns": quiet,
                              "baseline_moves": theirs.get("moves", 0)}


def play(opener: Opener, ruleset: str, index: int, turns: int, bots: list[str], seed: int,
         extra_rules: list[dict[str, Any]] | None = None,
         players: int | None = None) -> tuple[GameFindings, Trace]:
    """One new game's findings, and its numbers."""
    service = opener("sqlite://")
    try:
        names = NAMES[:max(players or 3, len(bots))]
        game_id = f"sim-{index}"
        rules = None
        if extra_rules:
            base = load_ruleset(ruleset).game_payload(game_id, game_id, seed, "simulated", None)
            rules = [*base["rules"], *extra_rules]
        service.commands.create_game(ruleset, game_id=game_id, seed=seed + index, start=START,
                                     players=names, rules=rules)
        found = GameFindings(ruleset, index, seed, [])
        return found, play_game(service, game_id, found, seated(names, bots, seed, index),
                                turns)
    finally:
        service.close()


def seated(names: list[str], strategies: list[str], seed: int, index: int) -> dict[str, Bot]:
    """A bot for each player, the strategies given in turn, each seeded by the run and
    the player's name."""
    return {name: Bot(strategies[i % len(strategies)], f"{seed}:{index}:{name}")
            for i, name in enumerate(names)}


def play_game(service: Service, game_id: str, found: GameFindings, bots: dict[str, Bot],
              turns: int, on_turn: Callable[[], None] | None = None) -> Trace:
    """Let ``bots`` play ``turns`` turns of the game (or until it ends or stalls) and
    write what showed into ``found``; the game's numbers (see :data:`Trace`).
    ``on_turn`` is called after every turn."""
    found.bots = [bot.strategy for bot in bots.values()]
    first_seq = service.reads.load(game_id).seq  # aborts before the run are not its own
    turn_ends: list[int] = []
    period = _Period(service, game_id)
    start: Numbers = {}
    middle: Numbers = {}
    halfway = max(warmup_turns(turns) + 1, (warmup_turns(turns) + turns) // 2)
    gains = _gains(service, game_id)
    try:
        turn_ends.append(service.reads.load(game_id).seq)  # turn 0: the run's own start
        for turn in range(1, turns + 1):
            found.turns = turn
            offered_any = _turn(service, game_id, turn, bots, found, gains)
            state = service.reads.load(game_id)
            if state.ended:
                found.ended, found.winners, found.end_turn = True, list(state.winners), turn
                found.end_reason = _end_reason(service, game_id)
            elif (deadline := _next_deadline(state.timers.values())) is not None:
                service.commands.advance(game_id, to=max(deadline, state.time))
            elif not offered_any:
                found.stall_turn = turn
            state = service.reads.load(game_id)
            turn_ends.append(state.seq)
            period.seen(state.vars, turn)
            _invariants(service, state, turn, found)
            if turn == warmup_turns(turns):
                start = numbers(state.players, state.vars)
            if turn == halfway:
                middle = numbers(state.players, state.vars)
            if on_turn is not None:
                on_turn()
            if found.ended or found.stall_turn:
                break
    except Exception as error:  # noqa: BLE001 - a finding: the simulation reports it
        found.internal_errors.append(_error_line(error))
    state = service.reads.load(game_id)
    end = numbers(state.players, state.vars)
    found.runaways = runaways(start, middle, end) if start else []
    found.period, found.period_stuck = period.told(found.turns)
    log = service.reads.log(game_id)
    found.aborts, found.budget = aborts(
        [{**e["payload"], "turn": _turn_of(e["seq"], turn_ends)} for e in log
         if e["type"] == "rule_code_aborted" and e["seq"] > first_seq])
    found.replay_matches = service.reads.replay(game_id).to_dict() == state.to_dict()
    return start, middle, end


# Turns a run must last for a period that never moved to be called stuck on the run's
# own evidence (with no stretch of the period's to measure it by).
LONG_RUN = 40


class _Period:
    """The ruleset's period variable through a run: when it last moved, how often."""

    def __init__(self, service: Service, game_id: str) -> None:
        state = service.reads.load(game_id)
        self.variable = service.reads.words(game_id).period_variable(state.vars)
        self.value = state.vars.get(self.variable) if self.variable else None
        self.since, self.moves, self.moved_in = 0, 0, []

    def seen(self, game_vars: dict[str, Any], turn: int) -> None:
        if self.variable is not None and game_vars.get(self.variable) != self.value:
            self.value, self.since, self.moves = game_vars.get(self.variable), turn, \
                self.moves + 1
            self.moved_in.append(turn)

    def told(self, turns: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The period through the run, and whether it is stuck as far as this run alone
        can say: unmoved three times longer than its longest stretch before (a round of
        many players' turns is long), or, never moved, for the whole of a long run."""
        if self.variable is None:
            return None, None
        period = {"variable": self.variable, "value": self.value, "since_turn": self.since,
                  "moves": self.moves, "moved_in": list(self.moved_in)}
        stretches = [b - a for a, b in zip([0, *self.moved_in], self.moved_in, strict=False)]
        needed = 3 * max(stretches) if stretches else LONG_RUN
        if turns - self.since < max(stuck_after(turns), needed):
            return period, None
        return period, {"variable": self.variable, "value": self.value,
                        "since_turn": self.since, "turns": turns - self.since,
                        "baseline_moves": None}


def _gains(service: Service, game_id: str) -> Callable[[str], Callable[[str], float]]:
    """For a player, what adopting a proposal now would add to its score (the ruleset's
    ``[vocabulary] score`` variables, summed), by the dry run: the self-interested
    bot's question."""
    def for_player(player: str) -> Callable[[str], float]:
        def gain(proposal: str) -> float:
            try:
                shown = service.reads.dry_run(game_id, proposal)
            except ServiceError:
                return 0.0
            if shown["refused"]:
                return 0.0
            return _score(shown["summary_after"], player) - \
                _score(shown["summary_before"], player)
        return gain
    return for_player


def _score(summary: dict[str, Any], player: str) -> float:
    own = summary["players"].get(player) or {}
    return sum(float(own.get(var) or 0) for var in summary["score"]
               if isinstance(own.get(var) or 0, int | float))


def _turn(service: Service, game_id: str, turn: int, bots: dict[str, Bot],
          found: GameFindings, gains: Callable[[str], Callable[[str], float]]) -> bool:
    """Every active player acts once if its bot wants to; whether anything was offered."""
    offered_any = False
    for name, bot in bots.items():
        state = service.reads.load(game_id)
        if state.ended:
            break
        if name not in state.active_players():
            continue
        offered = service.reads.actions_for(game_id, name)
        offered_any = offered_any or bool(offered)
        choice = bot.choose(offered, list(state.active_players()), gains(name))
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


def _invariants(service: Service, state: Any, turn: int, found: GameFindings) -> None:
    """The statements the rules say do not hold now, each told once (its first turn)."""
    told = {(i["rule"], i["statement"]) for i in found.invariants}
    for rule, statement in service.reads.engine.invariants(state, state.time):
        if (rule, statement) not in told:
            told.add((rule, statement))
            found.invariants.append({"statement": statement, "turn": turn, "rule": rule})


def _refused(found: GameFindings, bot: Bot, turn: int, player: str, action: str,
             why: str) -> None:
    """A refusal: a finding when every value was one offered, else a guess refused."""
    bot.refused(action)
    if bot.guessed:
        found.guesses_refused += 1
    else:
        found.refused.append({"turn": turn, "player": player, "action": action, "why": why})


def _turn_of(seq: int, turn_ends: list[int]) -> int:
    """The turn an event of the run came in (0: before the bots' first turn)."""
    return next((turn for turn, last in enumerate(turn_ends) if seq <= last), len(turn_ends))


def _end_reason(service: Any, game_id: str) -> str | None:
    """What the rule that ended the game gave as its reason (in the game's language)."""
    ended = [e for e in service.reads.log(game_id) if e["type"] == "game_ended"]
    if not ended:  # ended without one (a winner declared)
        return None
    return str(ended[-1]["payload"].get("reason") or "") or None


def _next_deadline(timers: Iterable[dict[str, Any]]) -> str | None:
    times = [str(t["at"]) for t in timers if t.get("at")]
    return min(times) if times else None


def _error_line(error: BaseException) -> str:
    where = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__} at {where.filename.rsplit('/', 1)[-1]} line " \
           f"{where.lineno}: {error}"

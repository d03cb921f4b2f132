"""What a simulated game showed (:class:`GameFindings`), as data (``--json``) and in
sentences for developers (no Python values: names and numbers only).

A runaway: a number (a player's variable, a game variable) whose absolute value at the
end is more than :data:`RUNAWAY_FACTOR` times its value after the first turns (taken as
at least :data:`RUNAWAY_FLOOR`, so that a score going from 0 to 20 is no alarm), having
grown in both halves of the game by at least a quarter of its whole growth (a value set
once, a date moving on, is no runaway); and, for
games played with added rules (a proposal), one that ends more than
:data:`PAIRED_FACTOR` times its value in the same game played without them (same seed,
same bots) — there, a number that runs away in both games is the ruleset's, not told."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

RUNAWAY_FACTOR = 5
RUNAWAY_FLOOR = 5
PAIRED_FACTOR = 1.5


@dataclass
class GameFindings:
    ruleset: str
    game: int
    seed: int
    bots: list[str]
    turns: int = 0  # turns played
    ended: bool = False
    winners: list[str] = field(default_factory=list)
    end_turn: int | None = None
    stall_turn: int | None = None  # nobody could act and no deadline was left
    runaways: list[dict[str, Any]] = field(default_factory=list)  # who, name, start, end
    aborts: list[dict[str, Any]] = field(default_factory=list)  # rule, hook, count, reason
    refused: list[dict[str, Any]] = field(default_factory=list)  # turn, player, action, why
    internal_errors: list[str] = field(default_factory=list)
    replay_matches: bool | None = None
    actions: int = 0  # commands the bots sent
    # Refusals of an action where a bot made up a value (a text, a number): no finding,
    # the rules may rightly refuse a guess; counted to show how blind the bots were.
    guesses_refused: int = 0

    @property
    def problems(self) -> int:
        """Findings that point at a fault (the end of a game is none)."""
        return (bool(self.stall_turn) + len(self.runaways) + len(self.aborts)
                + len(self.refused) + len(self.internal_errors)
                + (self.replay_matches is False))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def numbers(players: dict[str, dict[str, Any]], game_vars: dict[str, Any]
            ) -> dict[tuple[str, str], float]:
    """Every number a runaway is looked for in: (player or "game", variable) → value."""
    found = {("game", name): value for name, value in game_vars.items()}
    for player, seat in players.items():
        found.update({(player, name): value for name, value in (seat.get("vars") or {}).items()})
    return {key: float(value) for key, value in found.items()
            if isinstance(value, int | float) and not isinstance(value, bool)}


def runaways(start: dict[tuple[str, str], float], middle: dict[tuple[str, str], float],
             end: dict[tuple[str, str], float]) -> list[dict[str, Any]]:
    out = []
    for (who, name), value in sorted(end.items()):
        if (who, name) not in start:
            continue  # no number then (a variable not yet set, or a proposal's number)
        before = start[(who, name)]
        halfway = middle.get((who, name), before)
        growth = abs(value) - abs(before)
        steady = min(abs(halfway) - abs(before), abs(value) - abs(halfway)) >= growth / 4
        if steady and abs(value) > RUNAWAY_FACTOR * max(abs(before), RUNAWAY_FLOOR):
            out.append({"who": who, "name": name, "start": _plain(before), "end": _plain(value)})
    return out


def paired_runaways(without: dict[tuple[str, str], float],
                    with_: dict[tuple[str, str], float]) -> list[dict[str, Any]]:
    """The numbers that ran away from the game played without the added rules."""
    out = []
    for (who, name), value in sorted(with_.items()):
        before = without.get((who, name))
        if before is not None and \
                abs(value) > PAIRED_FACTOR * max(abs(before), RUNAWAY_FLOOR):
            out.append({"who": who, "name": name, "start": _plain(before),
                        "end": _plain(value), "without_the_rules": True})
    return out


def aborts(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rule-code aborts (their events' payloads), counted by rule and hook, with the
    first reason."""
    counted = Counter((e.get("rule"), e.get("hook")) for e in events)
    reasons: dict[tuple[Any, Any], Any] = {}
    for e in events:
        reasons.setdefault((e.get("rule"), e.get("hook")), e.get("reason"))
    return [{"rule": rule, "hook": hook, "count": count, "reason": reasons[(rule, hook)]}
            for (rule, hook), count in sorted(counted.items(), key=str)]


def _first_error(reason: Any) -> str:
    """The line of a sandbox's trace that says what went wrong (the whole is in --json)."""
    lines = [line.strip() for line in str(reason).splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("error")),
                lines[-1] if lines else "no reason given")


def _plain(value: float) -> int | float:
    return int(value) if value == int(value) else value


# --- sentences --------------------------------------------------------------------------
def describe(found: GameFindings) -> list[str]:
    """The game's findings in sentences, the end first."""
    head = f"Game {found.game} ({found.ruleset}, bots {', '.join(found.bots)}): "
    if found.ended:
        who = ", ".join(found.winners) or "nobody"
        lines = [head + f"ended in turn {found.end_turn}, won by {who}."]
    else:
        plural = "" if found.turns == 1 else "s"
        lines = [head + f"still running after {found.turns} turn{plural}."]
    lines[0] += f" The bots took {found.actions} actions; made-up values refused: " \
                f"{found.guesses_refused}."
    if found.stall_turn:
        lines.append(f"  Stalled in turn {found.stall_turn}: nobody could act "
                     "and no deadline was left.")
    for r in found.runaways:
        owner = "the game's" if r["who"] == "game" else f"{r['who']}'s"
        if r.get("without_the_rules"):
            lines.append(f"  Runaway: {owner} {r['name']} ended at {r['end']}, against "
                         f"{r['start']} in the same game without the added rules.")
        else:
            lines.append(f"  Runaway: {owner} {r['name']} went from {r['start']} "
                         f"to {r['end']}.")
    for a in found.aborts:
        lines.append(f"  Rule {a['rule']} aborted {a['count']} times in its {a['hook']} "
                     f"hook, first because: {_first_error(a['reason'])}")
    for r in found.refused:
        lines.append(f"  Refused although offered (turn {r['turn']}): {r['player']}'s "
                     f"{r['action']}: {r['why']}")
    for error in found.internal_errors:
        lines.append(f"  Internal error: {error}")
    if found.replay_matches is False:
        lines.append("  The log replayed does not give the live state.")
    return lines


def summary(all_found: list[GameFindings], seconds: float) -> list[str]:
    games = len(all_found)
    turns = sum(f.turns for f in all_found)
    ended = sum(f.ended for f in all_found)
    problems = sum(f.problems for f in all_found)
    rate = turns / seconds if seconds > 0 else 0.0
    return [f"{games} games, {turns} turns in {seconds:.1f} s "
            f"({rate:.1f} game turns per second); {ended} ended; {problems} findings."]

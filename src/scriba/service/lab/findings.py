"""What a simulated game showed (:class:`GameFindings`): as data with stable kinds
(:meth:`GameFindings.findings`, told to players by :mod:`.tell`) and in sentences for
developers (:func:`describe`, English: no Python values, names and numbers only).

A runaway: a number (a player's variable, a game variable) whose absolute value at the
end is more than :data:`RUNAWAY_FACTOR` times its value after the first turns (taken as
at least :data:`RUNAWAY_FLOOR`, so that a score going from 0 to 20 is no alarm), having
grown in both halves of the game by at least a quarter of its whole growth (a value set
once, a date moving on, is no runaway). For a game played with a proposal, paired with
the same game without it (same seed, same bots), a runaway is a number whose excess over
the game without it grows steadily, ending beyond :data:`PAIRED_FACTOR` times its value
there: a proposal's one-time change (a score it gives at once) is none, and a number
that runs away in both games alike is the ruleset's, not told.

A stuck period: the ruleset's period variable (``[vocabulary] period``) that did not
move for the last :func:`stuck_after` turns of the game."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from scriba.rulecode.cost import WALL_CLOCK

RUNAWAY_FACTOR = 5
RUNAWAY_FLOOR = 5
PAIRED_FACTOR = 1.5
STUCK_TURNS = 8  # a period unmoved this many turns (or half the game, if more) is stuck
# Reasons of an abort that say the rule ran out of what it may spend (rulecode/cost.py).
BUDGET_REASONS = ("step budget", WALL_CLOCK, "memory limit exceeded")

Numbers = dict[tuple[str, str], float]  # (player or "game", variable) → value


def stuck_after(turns: int) -> int:
    return max(STUCK_TURNS, turns // 2)


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
    end_reason: str | None = None  # what the rule that ended it said (its game_ended)
    stall_turn: int | None = None  # nobody could act and no deadline was left
    # the period variable: its name, its last value, the turn it took it, how often it moved
    period: dict[str, Any] | None = None
    period_stuck: dict[str, Any] | None = None  # kind period_stuck's fields
    runaways: list[dict[str, Any]] = field(default_factory=list)  # who, variable, start, end
    aborts: list[dict[str, Any]] = field(default_factory=list)  # rule, hook, count, ...
    budget: list[dict[str, Any]] = field(default_factory=list)  # aborts out of budget
    refused: list[dict[str, Any]] = field(default_factory=list)  # turn, player, action, why
    invariants: list[dict[str, Any]] = field(default_factory=list)  # statement, turn, rule
    internal_errors: list[str] = field(default_factory=list)
    replay_matches: bool | None = None
    actions: int = 0  # commands the bots sent
    # Refusals of an action where a bot made up a value (a text, a number): no finding,
    # the rules may rightly refuse a guess; counted to show how blind the bots were.
    guesses_refused: int = 0

    @property
    def problems(self) -> int:
        """Findings that point at a fault (the end of a game is none)."""
        return sum(f["kind"] != "ended" for f in self.findings())

    def findings(self) -> list[dict[str, Any]]:
        """What the game showed, each a dict with its ``kind`` and plain data (the
        lab's contract with its tellers: fields are added, never renamed)."""
        out: list[dict[str, Any]] = []
        if self.ended:
            out.append({"kind": "ended", "turn": self.end_turn, "winners": list(self.winners),
                        "reason": self.end_reason})
        if self.stall_turn:
            out.append({"kind": "stall", "turn": self.stall_turn})
        if self.period_stuck:
            out.append({"kind": "period_stuck", **self.period_stuck})
        out += [{"kind": "runaway", **{k: r[k] for k in ("who", "variable", "start", "end")},
                 "baseline": r.get("baseline")} for r in self.runaways]
        out += [{"kind": "abort", **a} for a in self.aborts]
        out += [{"kind": "budget", **{k: a[k] for k in ("rule", "hook", "count", "first_turn")}}
                for a in self.budget]
        out += [{"kind": "refused", **r} for r in self.refused]
        out += [{"kind": "invariant", **i} for i in self.invariants]
        out += [{"kind": "internal_error", "text": text} for text in self.internal_errors]
        if self.replay_matches is False:
            out.append({"kind": "replay_differs"})
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameFindings:
        return cls(**data)


def same(finding: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two runs' findings the same finding (a difference is one the paired
    run does not have): its kind and what it is about, not when it showed."""
    kind = finding["kind"]
    about = {"ended": ("winners",), "period_stuck": ("variable",),
             "runaway": ("who", "variable"), "abort": ("rule", "hook"),
             "budget": ("rule", "hook"), "refused": ("player", "action", "why"),
             "invariant": ("statement",), "internal_error": ("text",)}.get(kind, ())
    return (kind, *(str(finding.get(key)) for key in about))


def numbers(players: dict[str, dict[str, Any]], game_vars: dict[str, Any]) -> Numbers:
    """Every number a runaway is looked for in: (player or "game", variable) → value."""
    found = {("game", name): value for name, value in game_vars.items()}
    for player, seat in players.items():
        found.update({(player, name): value for name, value in (seat.get("vars") or {}).items()})
    return {key: float(value) for key, value in found.items()
            if isinstance(value, int | float) and not isinstance(value, bool)}


def _steady(before: float, halfway: float, value: float) -> bool:
    """Grown in both halves by at least a quarter of the whole growth (in absolute value:
    a debt runs away too)."""
    growth = abs(value) - abs(before)
    return min(abs(halfway) - abs(before), abs(value) - abs(halfway)) >= growth / 4


def runaways(start: Numbers, middle: Numbers, end: Numbers) -> list[dict[str, Any]]:
    out = []
    for (who, name), value in sorted(end.items()):
        if (who, name) not in start:
            continue  # no number then (a variable not yet set, or a proposal's number)
        before = start[(who, name)]
        if _steady(before, middle.get((who, name), before), value) and \
                abs(value) > RUNAWAY_FACTOR * max(abs(before), RUNAWAY_FLOOR):
            out.append({"who": who, "variable": name, "start": _plain(before),
                        "end": _plain(value), "baseline": None})
    return out


def paired_runaways(with_: tuple[Numbers, Numbers, Numbers],
                    without: tuple[Numbers, Numbers, Numbers]) -> list[dict[str, Any]]:
    """The numbers that ran away from the same game played without the proposal; each
    a tuple of its numbers after the first turns, halfway and at the end. What runs away
    is the excess over the game without it: growing steadily, by more than
    :data:`RUNAWAY_FLOOR`, to an end beyond :data:`PAIRED_FACTOR` times the other's."""
    out = []
    for (who, name), value in sorted(with_[2].items()):
        key = (who, name)
        if any(key not in numbers_ for numbers_ in (with_[0], without[0], without[2])):
            continue
        baseline = without[2][key]
        # the middle numbers are missing in a run too short to have a middle
        first, middle, last = [abs(w.get(key, with_[0][key])) - abs(o.get(key, without[0][key]))
                               for w, o in zip(with_, without, strict=True)]
        growth = last - first
        if growth > RUNAWAY_FLOOR and min(middle - first, last - middle) >= growth / 4 and \
                abs(value) > PAIRED_FACTOR * max(abs(baseline), RUNAWAY_FLOOR):
            out.append({"who": who, "variable": name, "start": _plain(with_[0][key]),
                        "end": _plain(value), "baseline": _plain(baseline)})
    return out


def aborts(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rule-code aborts (``rule_code_aborted`` events), counted by rule and hook with
    the first turn and reason: those out of budget apart from the others. Each event is
    its payload with ``turn``, the simulated turn it came in."""
    def gathered(chosen: list[dict[str, Any]]) -> list[dict[str, Any]]:
        counted = Counter((e.get("rule"), e.get("hook")) for e in chosen)
        first: dict[tuple[Any, Any], dict[str, Any]] = {}
        for e in chosen:
            first.setdefault((e.get("rule"), e.get("hook")), e)
        return [{"rule": rule, "hook": hook, "count": count,
                 "first_turn": first[(rule, hook)].get("turn", 0),
                 "reason": str(first[(rule, hook)].get("reason") or "")}
                for (rule, hook), count in sorted(counted.items(), key=str)]
    budget = [e for e in events if any(r in str(e.get("reason")) for r in BUDGET_REASONS)]
    return gathered([e for e in events if e not in budget]), gathered(budget)


def first_error(reason: Any) -> str:
    """The line of a sandbox's trace that says what went wrong (the whole is in --json)."""
    lines = [line.strip() for line in str(reason).splitlines() if line.strip()]
    return next((line for line in lines if line.startswith("error")),
                lines[-1] if lines else "no reason given")


def _plain(value: float) -> int | float:
    return int(value) if value == int(value) else value


# --- sentences (developers') -----------------------------------------------------------
def describe(found: GameFindings) -> list[str]:
    """The game's findings in sentences, the end first."""
    head = f"Game {found.game} ({found.ruleset}, bots {', '.join(found.bots)}): "
    if found.ended:
        lines = [head + _ended(found.end_turn, found.winners, found.end_reason)]
    else:
        plural = "" if found.turns == 1 else "s"
        lines = [head + f"still running after {found.turns} turn{plural}."]
    lines[0] += f" The bots took {found.actions} actions; made-up values refused: " \
                f"{found.guesses_refused}."
    return lines + ["  " + line for line in tell_findings(found.findings())
                    if not line.startswith("Ended")]


def _ended(turn: int | None, winners: list[str], reason: str | None) -> str:
    """How a game ended, and why when its rules said so."""
    said = f"ended in turn {turn}, won by {', '.join(winners)}." if winners else \
        f"ended in turn {turn} with no winner."
    reason = " ".join(str(reason or "").split())
    return said + (f" Why: {reason.rstrip('.')}." if reason else "")


def tell_findings(findings: list[dict[str, Any]]) -> list[str]:
    """Findings (as :meth:`GameFindings.findings` gives them) in developers' sentences."""
    lines = []
    for f in findings:
        kind = f["kind"]
        if kind == "ended":
            said = _ended(f["turn"], f["winners"], f.get("reason"))
            lines.append(said[0].upper() + said[1:])
        elif kind == "stall":
            lines.append(f"Stalled in turn {f['turn']}: nobody could act and no deadline "
                         "was left.")
        elif kind == "period_stuck":
            line = f"The {f['variable']} stayed {f['value']} from turn {f['since_turn']} " \
                   f"for {f['turns']} turns"
            if f.get("baseline_moves") is not None:
                line += f" (without the proposal it moved {f['baseline_moves']} times)"
            lines.append(line + ".")
        elif kind == "runaway":
            owner = "the game's" if f["who"] == "game" else f"{f['who']}'s"
            line = f"Runaway: {owner} {f['variable']} went from {f['start']} to {f['end']}"
            if f.get("baseline") is not None:
                line += f", against {f['baseline']} in the same game without the proposal"
            lines.append(line + ".")
        elif kind == "abort":
            lines.append(f"Rule {f['rule']} aborted {f['count']} times in its {f['hook']} "
                         f"hook from turn {f['first_turn']}, first because: "
                         f"{first_error(f['reason'])}")
        elif kind == "budget":
            lines.append(f"Rule {f['rule']} ran out of its budget {f['count']} times in its "
                         f"{f['hook']} hook from turn {f['first_turn']}.")
        elif kind == "refused":
            lines.append(f"Refused although offered (turn {f['turn']}): {f['player']}'s "
                         f"{f['action']}: {f['why']}")
        elif kind == "invariant":
            lines.append(f"From turn {f['turn']}, rule {f['rule']} says: {f['statement']}")
        elif kind == "internal_error":
            lines.append(f"Internal error: {f['text']}")
        elif kind == "replay_differs":
            lines.append("The log replayed does not give the live state.")
    return lines


def summary(all_found: list[GameFindings], seconds: float) -> list[str]:
    games = len(all_found)
    turns = sum(f.turns for f in all_found)
    ended = sum(f.ended for f in all_found)
    problems = sum(f.problems for f in all_found)
    rate = turns / seconds if seconds > 0 else 0.0
    return [f"{_count(games, 'game')}, {_count(turns, 'turn')} in {seconds:.1f} s "
            f"({rate:.1f} game turns per second); {ended} ended; "
            f"{_count(problems, 'finding')}."]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

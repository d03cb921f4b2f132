"""What rule code costs, and who pays: steps, a command's ledger, the meter of the calls.

Steps
=====
A *step* is one poll of Starlark's cancellation check — the interpreter polls after a
fixed amount of work (about a thousand loop iterations or function calls), so a loop is
stopped at the same point on every run — or a share of a native helper's work. The
native helpers (most of ``std.*``, ``transform``, ``round``, ``floor``, ``ceil``) run
in Python, where no poll reaches, so each call of one is charged 1 step and a step per
``VALUES_PER_STEP`` values and per ``CHARACTERS_PER_STEP`` characters of its arguments
before it runs, then a
step per as many of its result before it returns (:func:`weight`); a helper past the
frame's allowance is not run, or its result not returned. A hook's result is charged like
a helper's. All of this is deterministic: the same code on the same game stops at the
same step on every run. std's lookups written in Starlark (``std.rule``, ``std.proposal``,
``std.open_proposals``) are polled like rule code.

Who pays
========
Every call of a rule's code runs in a *frame* of that rule; so does compiling the rule's
code (its top-level code runs then). A nested call — ``transform(...)`` calling other
rules' ``transform_<name>`` — runs in a frame of its own, charged to its own rule; its
time is not counted in the caller's, and its failure is its own rule's abort (the caller
goes on with the value as it was). A frame may spend, from when it starts
(:meth:`Ledger.allowance`)::

    steps   = min(per call,                       # STEPS_PER_CALL
                  the rule's part left,            # 1/RULE_PART of the command's budget
                  max(the command's budget left,   # COMMAND_STEPS, shared by every rule
                      the rule's even part left))  # 1/n of it, n = rules with code in force
    seconds = the same in seconds (per call: STEPS_PER_CALL x SECONDS_PER_STEP)

Past it the call is aborted, at the first step beyond, with a sentence saying which of
the three it met. A rule with nothing left is not called: its calls are answered at once
with the reason (and ``stopped``, so that the kernel records it once). A rule whose frame
had to be killed with its worker — a step that could not be interrupted ran past the
frame's time by ``KILL_GRACE``, or it went past the memory limit — is stopped for the rest
of the command (:meth:`Ledger.stop`); the worker says which rule it was running, so the
other rules' calls are asked again and never pay for it.

Seconds are the rules' own: a frame's time from its start to its end, less its nested
frames'. The kernel's own time (views, events, the pipe, a worker restarted) is charged to
no rule, so the command's budget is never spent by a rule that did not spend it. So the
rule code of one command costs at most twice the command's budget (every rule may finish
its even part after the budget is spent), one rule at most its part; each plus, for a
frame stopped by a limit, the step it was stopped at (``KILL_GRACE`` at most).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scriba.kernel.limits import (
    CHARACTERS_PER_STEP,
    COMMAND_SECONDS,
    COMMAND_STEPS,
    KILL_GRACE,
    RULE_PART,
    SECONDS_PER_STEP,
    STEPS_PER_CALL,
    VALUES_PER_STEP,
)

CALL_STEPS_TEXT = "step budget exceeded (the rule's code ran too long and was stopped)"
RULE_STEPS_TEXT = ("step budget of the rule exceeded (its code ran {:,.0f} steps in this "
                   "command, the most one rule may, and was stopped)")
COMMAND_STEPS_TEXT = ("step budget of the command exceeded (the rules' code together ran "
                      "too long, and this rule had used its even part of it)")
CALL_TIME_TEXT = "wall-clock limit exceeded (the call ran longer than {:g} s and was stopped)"
RULE_TIME_TEXT = ("wall-clock limit exceeded (the rule's code ran {:g} s in this command, the "
                  "most one rule may, and was stopped)")
COMMAND_TIME_TEXT = ("wall-clock limit exceeded (the rules' code together ran the command's "
                     "{:g} s, and this rule had used its even part of it)")
KILLED_TEXT = ("wall-clock limit exceeded (one step of the rule's code ran past its call's "
               f"time by {KILL_GRACE:g} s and was killed; the rule is not called again in "
               "this command)")
MEMORY_TEXT = "memory limit exceeded (the rule's code allocated too much and was stopped)"
# The wall-clock reasons, which depend on the server's load as well as on the code.
WALL_CLOCK = "wall-clock limit exceeded"


@dataclass(frozen=True)
class Limits:
    """A command's budget: per call, per rule, for all the rules."""

    call_steps: float = STEPS_PER_CALL
    call_seconds: float = STEPS_PER_CALL * SECONDS_PER_STEP
    rule_steps: float = COMMAND_STEPS / RULE_PART
    rule_seconds: float = COMMAND_SECONDS / RULE_PART
    command_steps: float = COMMAND_STEPS
    command_seconds: float = COMMAND_SECONDS

    @classmethod
    def of(cls, budget: float, command_steps: float, command_seconds: float) -> Limits:
        """Derived from a host's three settings: a call may take ``SECONDS_PER_STEP`` a
        step of its budget (within the command's time); a rule, a fifth of the command's
        budget but at least one whole call."""
        call_seconds = min(budget * SECONDS_PER_STEP, command_seconds)
        return cls(budget, call_seconds, max(command_steps / RULE_PART, budget),
                   max(command_seconds / RULE_PART, call_seconds), command_steps,
                   command_seconds)

    def to_json(self) -> list[float]:
        return [_finite(v) for v in (self.call_steps, self.call_seconds, self.rule_steps,
                                     self.rule_seconds, self.command_steps,
                                     self.command_seconds)]

    @functools.cached_property
    def reasons(self) -> tuple[str, ...]:
        """Why a frame is stopped: past its call's, its rule's, the command's steps; then
        the same in seconds (made once: every call of a rule's code asks)."""
        return (CALL_STEPS_TEXT, RULE_STEPS_TEXT.format(self.rule_steps), COMMAND_STEPS_TEXT,
                CALL_TIME_TEXT.format(self.call_seconds),
                RULE_TIME_TEXT.format(self.rule_seconds),
                COMMAND_TIME_TEXT.format(self.command_seconds))


class Allowance(NamedTuple):
    """What a frame may spend from now on, and the reason to give past each (a tuple:
    one is made at every call of a rule's code)."""

    steps: float
    steps_why: str
    seconds: float
    seconds_why: str


@dataclass
class Ledger:
    """One command's rule cost so far: the command's, each rule's, the rules stopped."""

    limits: Limits = field(default_factory=Limits)
    rules: int = 1  # the rules with code in force: each is owed 1/rules of the command
    steps: float = 0.0  # spent by all the rules
    seconds: float = 0.0
    spent: dict[str, list[float]] = field(default_factory=dict)  # rule -> [steps, seconds]
    stopped: dict[str, str] = field(default_factory=dict)  # rule -> why it is not called

    def allowance(self, rule: str, in_call: tuple[float, float] = (0, 0.0)
                  ) -> Allowance | str:
        """What a frame of ``rule`` may still spend (``in_call``: what it has spent so
        far), or why it may spend nothing."""
        if rule in self.stopped:
            return self.stopped[rule]
        limits = self.limits
        why = limits.reasons
        steps, seconds = self.spent.get(rule, (0, 0.0))
        step_left, step_why = _least(
            (limits.call_steps - in_call[0], why[0]), (limits.rule_steps - steps, why[1]),
            (max(limits.command_steps - self.steps, limits.command_steps / self.rules - steps),
             why[2]))
        time_left, time_why = _least(
            (limits.call_seconds - in_call[1], why[3]), (limits.rule_seconds - seconds, why[4]),
            (max(limits.command_seconds - self.seconds,
                 limits.command_seconds / self.rules - seconds), why[5]))
        if step_left < 1:
            return step_why
        if time_left <= 0:
            return time_why
        return Allowance(step_left, step_why, time_left, time_why)

    def charge(self, rule: str, steps: float, seconds: float) -> None:
        spent = self.spent.setdefault(rule, [0, 0.0])
        spent[0] += steps
        spent[1] += seconds
        self.steps += steps
        self.seconds += seconds

    def take(self, spent: dict[str, list[float]] | None) -> None:
        """Charge what a worker reports its frames spent."""
        for rule, (steps, seconds) in (spent or {}).items():
            self.charge(rule, steps, seconds)

    def stop(self, rule: str, why: str) -> None:
        """``rule`` is not called again in this command (it had to be killed)."""
        self.stopped.setdefault(rule, why)

    def to_json(self) -> dict[str, Any]:
        return {"limits": self.limits.to_json(), "rules": self.rules,
                "used": [self.steps, self.seconds], "spent": self.spent,
                "stopped": self.stopped}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ledger:
        steps, seconds = data.get("used") or (0, 0.0)
        return cls(Limits(*data["limits"]), int(data.get("rules") or 1), steps, seconds,
                   {rule: list(v) for rule, v in (data.get("spent") or {}).items()},
                   dict(data.get("stopped") or {}))


def _least(*options: tuple[float, str]) -> tuple[float, str]:
    """The smallest amount left, with its reason (the first of equals: the call's)."""
    least = options[0]
    for option in options[1:]:
        if option[0] < least[0]:
            least = option
    return least


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 1e300  # JSON has no infinity


class Stopped(Exception):
    """Raised inside a native helper when its charge takes the frame past its allowance."""


@dataclass
class Frame:
    """One call of one rule's code, being metered."""

    rule: str
    hook: str
    allowance: Allowance
    used: float = 0  # steps spent in this frame (nested frames excluded)
    clock: float = 0.0  # seconds spent in this frame, up to ``resumed``
    resumed: float = field(default_factory=time.monotonic)  # when it last became current
    limit: float = 0  # ``used`` may reach this
    deadline: float = 0.0  # time.monotonic() past which it is stopped
    charged: tuple[float, float] = (0, 0.0)  # what the ledger has of it so far
    why: str = ""  # which limit stopped it

    def __post_init__(self) -> None:
        self.limit = self.allowance.steps
        self.deadline = self.resumed + self.allowance.seconds


class Meter:
    """The frames of the calls under way in a worker, and the ledger they charge."""

    def __init__(self) -> None:
        self.ledger = Ledger()
        self.frames: list[Frame] = []
        self.spent: dict[str, list[float]] = {}  # charged since :meth:`reset`, by rule

    def reset(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.frames = []
        self.spent = {}

    @property
    def current(self) -> Frame | None:
        return self.frames[-1] if self.frames else None

    def begin(self, rule: str, hook: str = "") -> Frame | str:
        """A frame for a call of ``rule``, or why it may not run."""
        now = time.monotonic()
        outer = self.current
        if outer is not None:  # paused: what it spent so far counts for the nested frame
            outer.clock += now - outer.resumed
            self._flush(outer)
        allowance = self.ledger.allowance(rule)
        if isinstance(allowance, str):
            if outer is not None:
                outer.resumed = time.monotonic()
            return allowance
        frame = Frame(rule, hook, allowance, resumed=time.monotonic())
        self.frames.append(frame)
        return frame

    def end(self, frame: Frame) -> None:
        now = time.monotonic()
        frame.clock += now - frame.resumed
        self._flush(frame)
        self.frames.pop()
        outer = self.current
        if outer is not None:  # resumes, within what its rule and the command have left
            outer.resumed = now
            left = self.ledger.allowance(outer.rule, (outer.used, outer.clock))
            if isinstance(left, str):
                outer.limit, outer.deadline = outer.used, now
                outer.allowance = Allowance(0, left, 0, left)
            else:
                outer.allowance = left
                outer.limit = outer.used + left.steps
                outer.deadline = now + left.seconds

    def _flush(self, frame: Frame) -> None:
        steps, seconds = frame.used - frame.charged[0], frame.clock - frame.charged[1]
        self.ledger.charge(frame.rule, steps, seconds)
        spent = self.spent.setdefault(frame.rule, [0, 0.0])
        spent[0] += steps
        spent[1] += seconds
        frame.charged = (frame.used, frame.clock)

    def poll(self) -> bool:
        """Starlark's cancellation check: one step. True stops the current frame."""
        frame = self.current
        if frame is None:
            return False
        frame.used += 1
        return self._over(frame)

    def charge(self, steps: float) -> None:
        """A native helper's work; raises :class:`Stopped` past the frame's allowance."""
        frame = self.current
        if frame is None:
            return
        frame.used += steps
        if self._over(frame):
            raise Stopped(frame.why)

    def left(self) -> float:
        """Steps the current frame may still take."""
        frame = self.current
        return math.inf if frame is None else frame.limit - frame.used

    @staticmethod
    def _over(frame: Frame) -> bool:
        if frame.used > frame.limit:
            frame.why = frame.allowance.steps_why
            return True
        if time.monotonic() > frame.deadline:
            frame.why = frame.allowance.seconds_why
            return True
        return False


def weight(value: Any, most: float = math.inf) -> float:
    """The steps a native helper's arguments or result cost (see the module's doc); the
    count stops once past ``most``, which is all a caller needs to know then."""
    values = characters = 0
    stack = [value]
    while stack:
        item = stack.pop()
        values += 1
        if isinstance(item, str):
            characters += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        if values & 1023 == 0 and \
                values // VALUES_PER_STEP + characters // CHARACTERS_PER_STEP > most:
            break
    return values // VALUES_PER_STEP + characters // CHARACTERS_PER_STEP

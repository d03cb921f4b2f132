"""The kernel's :class:`RuleHost`, backed by the sandbox worker pool.

Budgets. Each hook call may run ``budget`` steps (``check_cancelled`` polls). Each
decision of the kernel — a command, a timer firing, a query — opens :meth:`command`, and
all the rule code it runs shares one budget: ``command_steps`` polls and
``command_seconds`` of wall-clock time. A call made after the budget is spent is aborted
without running. Proposing code runs its declarations under ``inspect_seconds``.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scriba.kernel.caches import keep
from scriba.kernel.host import CodeInfo, HookResult, RuleRef
from scriba.kernel.view import GameView
from scriba.rulecode.pool import WorkerPool
from scriba.rulecode.std import version_of as std_version
from scriba.rulecode.viewparts import EncodedParts, PartStore, seal, views_for
from scriba.rulecode.worker import COMMAND_STEPS_TEXT, WALL_CLOCK_TEXT, code_hash

DEFAULT_BUDGET = 2000  # check_cancelled polls per call: 0.1-0.4 s of tight Starlark loops
DEFAULT_COMMAND_STEPS = 50 * DEFAULT_BUDGET  # polls for all the rule code of one command
DEFAULT_COMMAND_SECONDS = 10.0  # wall clock for all the rule code of one command
DEFAULT_INSPECT_SECONDS = 2.0  # compiling proposed code and running its declarations
# A worker that has to be killed needs a moment beyond the deadline it was given.
_GRACE = 0.5
# Every request names each rule's code by its hash: computed once per code text, not per
# request (a dozen sha256 of whole rule texts per call added up).
_hash = functools.lru_cache(maxsize=4096)(code_hash)
# One call of :meth:`SandboxHost.call_many`: (targets, hook, view, args).
Call = tuple[list[str], str, "GameView | dict[str, Any]", list[Any]]


class _Budget:
    def __init__(self, steps: int, seconds: float) -> None:
        self.steps = steps
        self.deadline = time.monotonic() + seconds

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()


class SandboxHost:
    def __init__(self, pool: WorkerPool | None = None, budget: int = DEFAULT_BUDGET,
                 command_steps: int = DEFAULT_COMMAND_STEPS,
                 command_seconds: float | None = None,
                 inspect_seconds: float = DEFAULT_INSPECT_SECONDS) -> None:
        self.pool = pool or WorkerPool()
        self.budget = budget
        self.command_steps = command_steps
        self.command_seconds = command_seconds if command_seconds is not None else \
            min(DEFAULT_COMMAND_SECONDS, self.pool.wall_clock)
        self.inspect_seconds = inspect_seconds
        self._info: OrderedDict[str, CodeInfo] = OrderedDict()
        self._local = threading.local()  # the budget of the command this thread decides
        self._encoded = EncodedParts()
        self.calls = 0

    @contextmanager
    def command(self) -> Iterator[None]:
        """One budget for every call made inside (an inner scope shares the outer one)."""
        if getattr(self._local, "budget", None) is not None:
            yield
            return
        self._local.budget = _Budget(self.command_steps, self.command_seconds)
        try:
            yield
        finally:
            self._local.budget = None

    def _current(self) -> _Budget:
        budget = getattr(self._local, "budget", None)
        # A call outside any command (a benchmark, a test) has a budget of its own.
        return budget if budget is not None else _Budget(self.command_steps,
                                                         self.command_seconds)

    def inspect(self, code: str) -> CodeInfo:
        digest = _hash(code)
        if digest in self._info:
            return self._info[digest]
        seconds = self.inspect_seconds
        answer = self.pool.request({"op": "inspect", "code": code, "budget": self.budget,
                                    "seconds": seconds}, timeout=seconds + _GRACE)
        if "died" in answer or "fatal" in answer:
            # Not cached: a killed worker says nothing about the code itself.
            return CodeInfo(error=answer.get("died") or answer.get("fatal"), transient=True)
        if "error" in answer:
            info = CodeInfo(error=answer["error"])
        else:
            info = CodeInfo(hooks=frozenset(answer["hooks"]),
                            declarations=answer["declarations"])
        if info.error and WALL_CLOCK_TEXT in info.error:  # time depends on the load
            return CodeInfo(error=info.error, transient=True)
        return keep(self._info, digest, info, 4096)

    def _ask(self, order: list[RuleRef], payload: dict[str, Any],
             views: list[GameView | dict[str, Any]]) -> dict[str, Any]:
        budget = self._current()
        seconds = budget.seconds_left()
        if budget.steps <= 0:
            return {"died": COMMAND_STEPS_TEXT, "spent": True}
        if seconds <= 0:
            return {"died": f"{WALL_CLOCK_TEXT[:-1]}: the command's "
                            f"{self.command_seconds:g} s for rule code are spent)",
                    "spent": True}
        payload = {**payload, "order": [[rid, _hash(code)] for rid, code in order],
                   "budget": self.budget, "steps": budget.steps, "seconds": seconds}
        self.calls += 1

        def prepare(mirror: PartStore[None], request: dict[str, Any],
                    reset: bool = False) -> tuple[dict[str, Any], bytes]:
            # For the worker that takes the request: only the views' parts it lacks.
            sent, lines = views_for(views, mirror, self._encoded, reset)
            return {**request, **sent}, lines

        answer = self.pool.request(payload, timeout=seconds + _GRACE, prepare=prepare)
        if answer.get("missing"):
            codes = {_hash(code): code for _, code in order}
            payload["seconds"] = max(budget.seconds_left(), 0.001)
            answer = self.pool.request({**payload, "codes": codes},
                                       timeout=payload["seconds"] + _GRACE, prepare=prepare)
        budget.steps -= int(answer.get("polls", 0))
        if answer.get("timed_out"):
            budget.deadline = 0  # the time is spent: no further call in this command
        return answer

    def call(self, order: list[RuleRef], targets: list[str], hook: str,
             view: GameView | dict[str, Any], args: list[Any]) -> list[HookResult]:
        answer = self._ask(order, {"op": "call", "targets": targets, "hook": hook,
                                   "args": args,
                                   "std": std_version(_settings(view))}, [view])
        failure = _failure(answer)
        if failure and len(targets) > 1 and not answer.get("timed_out") \
                and not answer.get("spent"):
            # The batch died (e.g. one rule exhausted memory): ask each rule on its own so
            # that only the culprit's call is aborted.
            return [result for rid in targets
                    for result in self.call(order, [rid], hook, view, args)]
        if failure:
            return [HookResult(rid, error=failure) for rid in targets]
        return [HookResult(rid, value, error) for rid, value, error in answer["results"]]

    def call_many(self, order: list[RuleRef], calls: list[Call]) -> list[list[HookResult]] | None:
        """Several calls in one request, made in order, each with its own view: their
        results, or None when the request failed as a whole (ask them one by one then)."""
        answer = self._ask(order, {"op": "calls", "calls": [
            {"targets": targets, "hook": hook, "args": args} for targets, hook, _, args in calls],
            "std": std_version(_settings(calls[0][2]))}, [view for _, _, view, _ in calls])
        if _failure(answer):
            return None
        return [[HookResult(rid, value, error) for rid, value, error in results]
                for results in answer["results"]]

    def seal(self, view: GameView | dict[str, Any]) -> GameView | dict[str, Any]:
        """The view with its parts' JSON made now, so that it stays right once the state
        moves on (see :meth:`call_many`)."""
        return seal(view, self._encoded) if isinstance(view, GameView) else view

    def transform(self, order: list[RuleRef], name: str, view: GameView | dict[str, Any],
                  value: Any, context: Any) -> tuple[Any, list[HookResult]]:
        answer = self._ask(order, {"op": "transform", "name": name, "value": value,
                                   "context": context,
                                   "std": std_version(_settings(view))}, [view])
        failure = _failure(answer)
        if failure:
            hook = f"transform_{name}"
            return value, [HookResult(rid, error=failure) for rid, code in order
                           if hook in self.inspect(code).hooks]
        return answer["value"], [HookResult(rid, error=err) for rid, err in answer["aborts"]]


def _settings(view: GameView | dict[str, Any]) -> Any:
    return view.settings if isinstance(view, GameView) else view.get("settings")


def _failure(answer: dict[str, Any]) -> str | None:
    if "died" in answer:
        return str(answer["died"])
    for key in ("fatal", "compile_error", "error"):
        if key in answer:
            return str(answer[key])
    if answer.get("missing"):
        return "rule code could not be loaded into the sandbox"
    return None

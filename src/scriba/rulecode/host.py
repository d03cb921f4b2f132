"""The kernel's :class:`RuleHost`, backed by the sandbox worker pool.

Budgets (the design is :mod:`scriba.rulecode.cost`'s; the figures
:mod:`scriba.kernel.limits`'). Each decision of the kernel — a command, a timer firing, a
query, a dry run — opens :meth:`command`, and all the rule code it runs is charged to one
:class:`~scriba.rulecode.cost.Ledger`: ``budget`` steps a call, a fifth of the command's
``command_steps`` and ``command_seconds`` a rule, and the command's budget shared with an
even part owed to every rule. Each request carries the ledger; the worker enforces it call
by call and says what each rule spent. A request whose worker died while running a rule's
code (killed: a step overran its call's time; or out of memory) names that rule: it is
stopped for the rest of the command and the request is asked again without it, so its
failure is never another rule's. Code that is proposed is compiled and its declarations
run under ``budget`` steps a call and ``inspect_seconds`` in all; inside a command, that
time counts towards the command's budget too.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scriba.kernel.caches import keep
from scriba.kernel.host import CodeInfo, HookResult, RuleRef
from scriba.kernel.limits import (
    COMMAND_SECONDS,
    COMMAND_STEPS,
    KILL_GRACE,
    PROPOSING_SECONDS,
    STEPS_PER_CALL,
)
from scriba.kernel.view import GameView
from scriba.rulecode.cost import (
    COMMAND_TIME_TEXT,
    KILLED_TEXT,
    MEMORY_TEXT,
    WALL_CLOCK,
    Ledger,
    Limits,
)
from scriba.rulecode.pool import WorkerPool
from scriba.rulecode.sandbox import code_hash
from scriba.rulecode.std import version_of as std_version
from scriba.rulecode.viewparts import EncodedParts, PartStore, seal, views_for

DEFAULT_BUDGET = STEPS_PER_CALL
DEFAULT_COMMAND_STEPS = COMMAND_STEPS
DEFAULT_COMMAND_SECONDS = COMMAND_SECONDS
DEFAULT_INSPECT_SECONDS = PROPOSING_SECONDS
# Every request names each rule's code by its hash: computed once per code text, not per
# request (a dozen sha256 of whole rule texts per call added up).
_hash = functools.lru_cache(maxsize=4096)(code_hash)
# One call of :meth:`SandboxHost.call_many`: (targets, hook, view, args).
Call = tuple[list[str], str, "GameView | dict[str, Any]", list[Any]]


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
        self._local = threading.local()  # the ledger of the command this thread decides
        self._encoded = EncodedParts()
        self.calls = 0

    @property
    def limits(self) -> Limits:
        return Limits.of(self.budget, self.command_steps, self.command_seconds)

    @contextmanager
    def command(self) -> Iterator[None]:
        """One budget for every call made inside (an inner scope shares the outer one)."""
        if getattr(self._local, "ledger", None) is not None:
            yield
            return
        self._local.ledger = Ledger(self.limits)
        try:
            yield
        finally:
            self._local.ledger = None

    def ledger(self) -> Ledger | None:
        """What the rule code of the command under way has spent so far (None outside)."""
        return getattr(self._local, "ledger", None)

    def _current(self) -> Ledger:
        ledger = getattr(self._local, "ledger", None)
        # A call outside any command (a benchmark, a test) has a budget of its own.
        return ledger if ledger is not None else Ledger(self.limits)

    def inspect(self, code: str) -> CodeInfo:
        digest = _hash(code)
        if digest in self._info:
            return self._info[digest]
        ledger = getattr(self._local, "ledger", None)
        seconds = self.inspect_seconds
        if ledger is not None:  # inside a command: within what the command has left
            seconds = min(seconds, ledger.limits.command_seconds - ledger.seconds)
            if seconds <= 0:
                return CodeInfo(error=COMMAND_TIME_TEXT.format(ledger.limits.command_seconds),
                                transient=True)
        answer = self.pool.request({"op": "inspect", "code": code, "budget": self.budget,
                                    "seconds": seconds}, timeout=seconds + 2 * KILL_GRACE)
        if ledger is not None:
            for steps, spent in (answer.get("spent") or {}).values():
                ledger.steps += steps
                ledger.seconds += spent
        if "died" in answer or "fatal" in answer:
            error = answer.get("died") or answer.get("fatal")
            # The code's own doing (memory) is refused; a killed or crashed worker says
            # nothing certain about the code: not cached, asked again next time.
            return keep(self._info, digest, CodeInfo(error=error), 4096) \
                if error == MEMORY_TEXT and answer.get("running") else \
                CodeInfo(error=error, transient=True)
        if "error" in answer:
            info = CodeInfo(error=answer["error"])
        else:
            info = CodeInfo(hooks=frozenset(answer["hooks"]),
                            declarations=answer["declarations"])
        if info.error and WALL_CLOCK in info.error:  # time depends on the load
            return CodeInfo(error=info.error, transient=True)
        return keep(self._info, digest, info, 4096)

    def _ask(self, order: list[RuleRef], payload: dict[str, Any],
             views: list[GameView | dict[str, Any]]) -> dict[str, Any]:
        ledger = self._current()
        ledger.rules = max(ledger.rules, len(order))
        payload = {**payload, "order": [[rid, _hash(code)] for rid, code in order],
                   "budget": self.budget}
        self.calls += 1

        prepare = self._preparer(views)
        game = _game_of(views[0]) if views else None
        # The most the request may take, its rules' parts and a kill's grace included:
        # the worker enforces the ledger, the pool's deadline is only a backstop.
        limits = ledger.limits
        timeout = 2 * limits.command_seconds + 2 * KILL_GRACE
        for _ in range(len(order) + 1):
            payload["ledger"] = ledger.to_json()
            answer = self.pool.request(payload, timeout=timeout, prepare=prepare,
                                       affinity=game)
            if answer.get("missing"):
                codes = {_hash(code): code for _, code in order}
                answer = self.pool.request({**payload, "codes": codes}, timeout=timeout,
                                           prepare=prepare, affinity=game)
            ledger.take(answer.get("spent"))
            running = answer.get("running") if "died" in answer else None
            if not running or running[0] in ledger.stopped:
                break
            # A rule's code took its worker down: that rule alone is stopped, and the
            # calls are asked again (what the others did was lost with the worker).
            ledger.stop(running[0], MEMORY_TEXT if answer["died"] == MEMORY_TEXT
                        else KILLED_TEXT)
        if answer.get("timed_out") and not answer.get("running"):
            # Killed outside any rule's code: the command's time is taken as spent (rules
            # that have not used their even part still get it).
            ledger.seconds = max(ledger.seconds, limits.command_seconds)
        return answer

    def _preparer(self, views: list[GameView | dict[str, Any]]) -> Any:
        def prepare(mirror: PartStore[None], request: dict[str, Any],
                    reset: bool = False) -> tuple[dict[str, Any], bytes]:
            # For the worker that takes the request: only the views' parts it lacks.
            sent, lines = views_for(views, mirror, self._encoded, reset)
            return {**request, **sent}, lines
        return prepare

    def warm(self, view: GameView) -> None:
        """Give a worker the parts of ``view`` it lacks, calling nothing (a writer waiting
        for its game does this, so that its turn has only the last commit's parts to send)."""
        self.pool.request({"op": "parts"}, prepare=self._preparer([view]),
                          affinity=_game_of(view))

    def call(self, order: list[RuleRef], targets: list[str], hook: str,
             view: GameView | dict[str, Any], args: list[Any]) -> list[HookResult]:
        answer = self._ask(order, {"op": "call", "targets": targets, "hook": hook,
                                   "args": args,
                                   "std": std_version(_settings(view))}, [view])
        failure = _failure(answer)
        if failure and len(targets) > 1 and not answer.get("timed_out"):
            # The batch died and no rule could be blamed: ask each rule on its own so that
            # only the culprit's call is aborted.
            return [result for rid in targets
                    for result in self.call(order, [rid], hook, view, args)]
        if failure:
            return [HookResult(rid, error=failure) for rid in targets]
        return [_result(item) for item in answer["results"]]

    def call_many(self, order: list[RuleRef], calls: list[Call]) -> list[list[HookResult]] | None:
        """Several calls in one request, made in order, each with its own view: their
        results, or None when the request failed as a whole (ask them one by one then)."""
        answer = self._ask(order, {"op": "calls", "calls": [
            {"targets": targets, "hook": hook, "args": args} for targets, hook, _, args in calls],
            "std": std_version(_settings(calls[0][2]))}, [view for _, _, view, _ in calls])
        if _failure(answer):
            return None
        return [[_result(item) for item in results] for results in answer["results"]]

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
            return value, [HookResult(rid, error=failure, hook=hook) for rid, code in order
                           if hook in self.inspect(code).hooks]
        return answer["value"], [_abort(item) for item in answer["aborts"]]


def _result(item: list[Any]) -> HookResult:
    """A call's answer: [rule, value, error, extra] (extra: nested aborts, stopped)."""
    rule_id, value, error, *rest = item
    extra = (rest[0] if rest else None) or {}
    return HookResult(rule_id, value, error, stopped=bool(extra.get("stopped")),
                      aborts=[_abort(nested) for nested in extra.get("aborts") or []])


def _abort(item: list[Any]) -> HookResult:
    """An aborted nested call: [rule, hook, error, stopped]."""
    rule_id, hook, error, stopped = item
    return HookResult(rule_id, error=error, hook=hook, stopped=bool(stopped))


def _game_of(view: GameView | dict[str, Any]) -> str | None:
    """The game a view shows: the pool sends its requests to the worker that holds it."""
    game = (view.inline if isinstance(view, GameView) else view).get("game_id")
    return game if isinstance(game, str) else None


def _settings(view: GameView | dict[str, Any]) -> Any:
    return view.settings if isinstance(view, GameView) else view.get("settings")


def _failure(answer: dict[str, Any]) -> str | None:
    if "died" in answer:
        return str(answer["died"])
    for key in ("fatal", "error"):
        if key in answer:
            return str(answer[key])
    if answer.get("missing"):
        return "rule code could not be loaded into the sandbox"
    return None

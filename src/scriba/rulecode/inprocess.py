"""A rule host that runs rule code in the calling process, for tests.

It is the sandbox host with the worker processes taken out: the same
:class:`~scriba.rulecode.worker.Worker` (same ``Sandbox``, same compile cache, same
budgets and ledger, same plain-data checks) answers the same requests, only through a
method call instead of a pipe. Requests are copied through JSON and answers are built
fresh by the worker's plain-data check, so what rule code sees and returns is what it
would across the pipe (tuples become lists, keys become strings). What it does not give
is the worker's :class:`~scriba.rulecode.guard.Guard`: the address-space limits (of the
worker, of a call, of a rule's top-level code) and the kill of a step that overruns its
call's time, which need a separate process — tests about those use
:class:`~scriba.rulecode.host.SandboxHost`.
Never use it to serve games: rule code would share the server's memory.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from scriba.rulecode.callcode import _error_text
from scriba.rulecode.host import DEFAULT_BUDGET, SandboxHost
from scriba.rulecode.pool import PoolStats, Prepare
from scriba.rulecode.viewparts import PartStore, ask_with_parts
from scriba.rulecode.worker import Worker


class InProcessPool:
    """Stands where a :class:`~scriba.rulecode.pool.WorkerPool` stands: one worker, no process."""

    # No process to kill: a call's time is checked at each step, as in a real worker.
    wall_clock = 10.0

    def __init__(self) -> None:
        self.worker = Worker()
        self.parts: PartStore[None] = PartStore()  # the mirror of the worker's view parts
        self.respawns = 0
        self._lock = threading.Lock()  # one Worker is not safe to share between threads

    def request(self, payload: dict[str, Any], timeout: float | None = None,
                prepare: Prepare | None = None, affinity: str | None = None) -> dict[str, Any]:
        with self._lock:
            if self.worker.poisoned:  # what the pool does after an out-of-memory panic
                self.worker = Worker()
                self.parts.clear()
                self.respawns += 1
            answer = ask_with_parts(self._ask, self.parts, payload, prepare) if prepare \
                else self._ask(payload, b"")
        # The worker's answers are already fresh plain data (_plain builds new lists and
        # dicts with string keys), so they need no second copy.
        return answer

    def _ask(self, request: dict[str, Any], lines: bytes) -> dict[str, Any]:
        # A copy through JSON, as across the pipe; the view's parts are already JSON.
        request = json.loads(json.dumps(request))
        try:
            return self.worker.handle(request, lines.splitlines(keepends=True))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - Rust panics: as the worker's loop does
            self.worker._note_panic(exc)
            return {"fatal": _error_text(exc)}

    def pids(self) -> list[int]:
        return []

    def stats(self) -> PoolStats:
        return PoolStats(workers=0, idle=0, spawns=0, respawns=self.respawns)

    def reap(self) -> int:
        """No workers to stop (as :meth:`close`: the pool's interface)."""
        return 0

    def close(self) -> None:
        """Nothing to stop; kept so that code closing a pool works unchanged."""


class InProcessHost(SandboxHost):
    """A :class:`~scriba.kernel.host.RuleHost` with the sandbox's semantics, no workers."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        super().__init__(pool=InProcessPool(), budget=budget)  # type: ignore[arg-type]

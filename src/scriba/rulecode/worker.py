"""A sandbox worker: a separate process that runs rule code and nothing else.

Started by :mod:`scriba.rulecode.pool` with an address-space limit. It reads one JSON
request per line on stdin (followed by one line for each part of the game view it sends)
and writes one JSON answer per line on stdout. Compiled rule modules are cached by the
hash of their code.

Budgets (:mod:`scriba.rulecode.cost`): a request carries the command's ``ledger``; every
call — and the compiling of a rule's code, whose top-level code runs then — runs in a
frame of its rule, metered in steps (Starlark's ``check_cancelled`` polls and the charges
of the native helpers) and seconds, within that rule's allowance. The answer says what
each rule spent (``spent``); a call that was not run because its rule has nothing left
says so (``stopped``), and so do the aborts of nested ``transform`` calls (``aborts``).

The sandbox itself is :class:`scriba.rulecode.sandbox.Sandbox`; the code generated around
a rule's is in :mod:`scriba.rulecode.callcode`; what only a process can do around a frame
(a mark of the rule running, a timer, a memory limit) is :class:`scriba.rulecode.guard.Guard`.
"""

from __future__ import annotations

import functools
import json
import math
import os
import resource
import sys
from typing import Any

from scriba.kernel.limits import WORKER_MEMORY
from scriba.kernel.registry import DECLARATIONS as DECLARATION_HOOKS
from scriba.kernel.registry import hook_name_error
from scriba.rulecode import std
from scriba.rulecode.callcode import _defined, _error_text
from scriba.rulecode.cost import Ledger, Limits
from scriba.rulecode.guard import PROPOSED, TOP_LEVEL, Guard
from scriba.rulecode.sandbox import Sandbox, code_hash

# code_hash is imported from here by tests (tests/test_rule_budget.py).
__all__ = ["Worker", "code_hash", "main"]


class Worker:
    def __init__(self, guard: Guard | None = None) -> None:
        self.box = Sandbox(guard)

    @property
    def poisoned(self) -> bool:
        """After an out-of-memory panic the process is not trusted."""
        return self.box.poisoned

    def _note_panic(self, exc: BaseException) -> None:
        self.box.note_panic(exc)

    def handle(self, request: dict[str, Any], lines: list[bytes] | None = None
               ) -> dict[str, Any]:
        """Answer one request; ``lines`` are those that followed it (the view's parts)."""
        self.box.meter.reset(_ledger(request))
        answer = self._handle(request, lines or [])
        answer["spent"] = self.box.meter.spent
        return answer

    def _handle(self, request: dict[str, Any], lines: list[bytes]) -> dict[str, Any]:
        op = request.get("op")
        box = self.box
        box.std_version = std.version_of({"std": request.get("std", std.CURRENT)})
        if op == "ping":
            return {"ok": True, "pid": os.getpid()}
        if op == "inspect":
            return self.inspect(request["code"])
        # The views' parts are kept before anything else: the host's mirror counts on it.
        missing_parts = box.receive(request, lines)
        if missing_parts:
            return {"missing_parts": missing_parts}
        if op == "parts":  # only the view's parts, taken ahead of the next call
            return {"ok": True}
        views = request.get("views") or [{}]
        order = [(rid, h) for rid, h in request["order"]]
        missing = list(dict.fromkeys(h for _, h in order if h not in box.modules))
        codes = request.get("codes") or {}
        if any(digest not in codes for digest in missing):
            return {"missing": missing}
        box.order = order
        self._compile(missing, codes)
        box.use_view(views[0])
        if op == "call":
            return {"results": self.call(request)}
        if op == "calls":  # several calls in order, each with its own view
            results = []
            for call, view in zip(request["calls"], views, strict=True):
                box.use_view(view)
                results.append(self.call(call))
            return {"results": results}
        if op == "transform":
            return self.transform(request)
        return {"error": f"unknown op {op!r}"}

    def _compile(self, missing: list[str], codes: dict[str, str]) -> None:
        """Compile the codes this worker lacks, each in a frame of the first rule with
        it: one that fails fails that rule's calls in this request, and no other's."""
        box = self.box
        owners = {digest: rid for rid, digest in reversed(box.order)}
        for digest in box.failed:
            if digest not in box.modules:
                box.hooks.pop(digest, None)
        box.failed = {}
        for digest in missing:
            _, error, stopped = box.run(owners[digest], TOP_LEVEL,
                                        functools.partial(box.compile, codes[digest]),
                                        plain=False)
            if error is not None:
                box.failed[digest] = (error, stopped)
                box.hooks[digest] = frozenset(_defined(codes[digest]))

    def inspect(self, code: str) -> dict[str, Any]:
        box = self.box
        module, error, _ = box.run(PROPOSED, TOP_LEVEL, functools.partial(box.compile, code),
                                   plain=False)
        if error is not None:
            return {"error": error}
        hooks = _defined(code)
        refused = [e for e in map(hook_name_error, hooks) if e]
        if refused:  # a misspelt hook would silently never be called
            return {"error": "; ".join(refused)}
        declarations: dict[str, Any] = {}
        for hook in DECLARATION_HOOKS:
            if hook in hooks:
                value, error, _ = box.run(PROPOSED, hook, functools.partial(box.call, module,
                                                                            hook))
                if error is not None:
                    return {"error": f"{hook}(): {error}"}
                declarations[hook] = value
        return {"hooks": hooks, "declarations": declarations}

    def call(self, request: dict[str, Any]) -> list[list[Any]]:
        box = self.box
        digests = dict(box.order)
        args = json.dumps(request["args"])  # the same for every rule asked
        results = []
        try:
            box.decoded_view()  # the kernel's work, not the first rule's
        except BaseException as exc:  # noqa: BLE001 - a part that could not be read
            box.note_panic(exc)
            return [[rule_id, None, _error_text(exc), None] for rule_id in request["targets"]]
        for rule_id in request["targets"]:
            box.depth = 0
            box.nested = []
            digest = digests[rule_id]
            if digest in box.failed:
                error, stopped = box.failed[digest]
                results.append([rule_id, None, error, {"stopped": True} if stopped else None])
                continue
            value, error, stopped = box.run(rule_id, request["hook"], functools.partial(
                box.call_with_view, box.modules[digest], request["hook"], rule_id, args))
            extra = {}
            if box.nested:
                extra["aborts"] = box.nested
            if stopped:
                extra["stopped"] = True
            results.append([rule_id, value, error, extra or None])
        return results

    def transform(self, request: dict[str, Any]) -> dict[str, Any]:
        box = self.box
        box.depth = 0
        box.nested = []
        try:
            box.decoded_view()
        except BaseException as exc:  # noqa: BLE001
            box.note_panic(exc)
            return {"error": _error_text(exc)}
        value = box.transform_through(f"transform_{request['name']}", request["value"],
                                      request.get("context"))
        return {"value": value, "aborts": box.nested}


def _ledger(request: dict[str, Any]) -> Ledger:
    """The budget a request runs under: the command's ledger it carries, or (proposing
    code, a bare request) ``budget`` steps a call and ``seconds`` in all, if given."""
    if "ledger" in request:
        return Ledger.from_json(request["ledger"])
    seconds = float(request["seconds"]) if request.get("seconds") is not None else math.inf
    steps = float(request.get("budget", Limits.call_steps))
    return Ledger(Limits(steps, seconds, math.inf, seconds, math.inf, seconds))


def _limit_memory() -> None:
    limit = int(os.environ.get("SCRIBA_WORKER_MEMORY", str(WORKER_MEMORY)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    _limit_memory()
    worker = Worker(Guard())
    # Binary streams with large buffers: a request carrying a big view is read in a few
    # system calls instead of many small ones.
    requests = os.fdopen(sys.stdin.fileno(), "rb", buffering=1 << 20, closefd=False)
    out = sys.stdout.buffer
    for line in requests:
        try:
            request = json.loads(line)
            # Each part of the view the request sends follows on its own line, as JSON:
            # never JSON inside a JSON string.
            answer = worker.handle(request, [requests.readline()
                                             for _ in request.get("send") or []])
        except BaseException as exc:  # noqa: BLE001 - the worker must answer, whatever happened
            worker._note_panic(exc)
            answer = {"fatal": _error_text(exc)}
        out.write(json.dumps(answer).encode() + b"\n")
        out.flush()
        if worker.poisoned:
            sys.exit(3)  # the pool respawns a fresh worker for the next call


if __name__ == "__main__":
    main()

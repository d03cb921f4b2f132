"""The kernel's :class:`RuleHost`, backed by the sandbox worker pool."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from scriba.kernel.host import CodeInfo, HookResult, RuleRef
from scriba.rulecode.pool import WorkerPool
from scriba.rulecode.std import version_of as std_version
from scriba.rulecode.worker import code_hash

DEFAULT_BUDGET = 2000  # check_cancelled polls: 0.1-0.4 s of tight Starlark loops here


class SandboxHost:
    def __init__(self, pool: WorkerPool | None = None, budget: int = DEFAULT_BUDGET) -> None:
        self.pool = pool or WorkerPool()
        self.budget = budget
        self._info: OrderedDict[str, CodeInfo] = OrderedDict()
        self.calls = 0

    def inspect(self, code: str) -> CodeInfo:
        digest = code_hash(code)
        if digest in self._info:
            return self._info[digest]
        answer = self.pool.request({"op": "inspect", "code": code, "budget": self.budget})
        if "died" in answer or "fatal" in answer:
            # Not cached: a killed worker says nothing about the code itself.
            return CodeInfo(error=answer.get("died") or answer.get("fatal"))
        if "error" in answer:
            info = CodeInfo(error=answer["error"])
        else:
            info = CodeInfo(hooks=frozenset(answer["hooks"]),
                            declarations=answer["declarations"])
        self._info[digest] = info
        while len(self._info) > 4096:
            self._info.popitem(last=False)
        return info

    def _ask(self, order: list[RuleRef], payload: dict[str, Any]) -> dict[str, Any]:
        payload = {**payload, "order": [[rid, code_hash(code)] for rid, code in order],
                   "budget": self.budget}
        self.calls += 1
        answer = self.pool.request(payload)
        if answer.get("missing"):
            codes = {code_hash(code): code for _, code in order}
            answer = self.pool.request({**payload, "codes": codes})
        return answer

    def call(self, order: list[RuleRef], targets: list[str], hook: str,
             view: dict[str, Any], args: list[Any]) -> list[HookResult]:
        answer = self._ask(order, {"op": "call", "targets": targets, "hook": hook,
                                   "view_json": _encode(view), "args": args,
                                   "std": std_version(view.get("settings"))})
        failure = _failure(answer)
        if failure and len(targets) > 1:
            # The batch died (e.g. one rule exhausted memory): ask each rule on its own so
            # that only the culprit's call is aborted.
            return [result for rid in targets
                    for result in self.call(order, [rid], hook, view, args)]
        if failure:
            return [HookResult(rid, error=failure) for rid in targets]
        return [HookResult(rid, value, error) for rid, value, error in answer["results"]]

    def transform(self, order: list[RuleRef], name: str, view: dict[str, Any],
                  value: Any, context: Any) -> tuple[Any, list[HookResult]]:
        answer = self._ask(order, {"op": "transform", "name": name,
                                   "view_json": _encode(view), "value": value,
                                   "context": context,
                                   "std": std_version(view.get("settings"))})
        failure = _failure(answer)
        if failure:
            return value, [HookResult("*", error=failure)]
        return answer["value"], [HookResult(rid, error=err) for rid, err in answer["aborts"]]


def _encode(view: dict[str, Any]) -> str:
    return json.dumps(view, ensure_ascii=False, separators=(",", ":"))


def _failure(answer: dict[str, Any]) -> str | None:
    if "died" in answer:
        return str(answer["died"])
    for key in ("fatal", "compile_error", "error"):
        if key in answer:
            return str(answer[key])
    if answer.get("missing"):
        return "rule code could not be loaded into the sandbox"
    return None

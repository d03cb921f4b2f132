"""A sandbox worker: a separate process that runs rule code and nothing else.

Started by :mod:`scriba.rulecode.pool` with an address-space limit. It reads one JSON
request per line on stdin (a request with ``"view": true`` is followed by a second line,
the game view's JSON as is) and writes one JSON answer per line on stdout. Compiled rule
modules are cached by the hash of their code.

Budgets: every hook call has a step budget counted in ``check_cancelled`` polls, which
arrive after a fixed amount of work, so a runaway loop stops at the same point on every
run; a request also carries ``steps``, the polls left to the whole command, and
``seconds``, its wall-clock time left, checked at each poll. The answer says how many
polls it used (``polls``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import resource
import sys
import time
from collections import OrderedDict
from typing import Any

import starlark as sl

from scriba.kernel.registry import DECLARATIONS as DECLARATION_HOOKS
from scriba.kernel.registry import hook_name_error
from scriba.rulecode import std
from scriba.rulecode.viewparts import PartStore

_CACHE_SIZE = 512
# Views made one from the last: after this many, one is put together afresh, so that the
# chain of views each holds on to stays short.
_MAX_VIEW_CHAIN = 32
_MAX_TRANSFORM_DEPTH = 8


class BudgetExceeded(Exception):
    pass


WALL_CLOCK_TEXT = "wall-clock limit exceeded (the rule's code ran too long and was stopped)"
COMMAND_STEPS_TEXT = ("step budget of the command exceeded (the rules' code together ran "
                      "too long and was stopped)")


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:32]


def _round(x: Any) -> int:
    """Round half away from zero, as "arrotondando all'intero più vicino" means."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


class Sandbox:
    def __init__(self) -> None:
        self.modules: OrderedDict[str, sl.FrozenModule] = OrderedDict()
        self.codes: dict[str, str] = {}
        self.hooks: dict[str, frozenset[str]] = {}  # the names each code defines
        self.globals = sl.Globals.extended_by([sl.LibraryExtension.Json,
                                               sl.LibraryExtension.StructType])
        self.dialect = sl.Dialect.standard()
        self.dialect.enable_load = False
        self.dialect.enable_f_strings = True
        self.polls = 0
        self.budget = 0
        self.deadline = math.inf  # time.monotonic() past which any call is stopped
        self.why = ""  # which limit stopped the last call
        self.steps_left = math.inf  # polls left to the whole command
        self.order: list[tuple[str, str]] = []
        self.depth = 0
        self.std_version = std.CURRENT  # the calling game's, set with every request
        self._std = std.natives(lambda: self.std_version)
        # The parts of game views sent so far, decoded and frozen (or why one could not
        # be), by key; see scriba.rulecode.viewparts.
        self.parts: PartStore[sl.FrozenModule | str] = PartStore()
        # The current request's view: its inline entries and the keys of its parts, put
        # together once per request into a frozen module that every rule's call loads.
        self.view_request: dict[str, Any] = {"inline": {}, "parts": []}
        self._view: sl.FrozenModule | None = None
        self._load_dialect = sl.Dialect.standard()
        self._load_dialect.enable_load = True  # generated code only; rules cannot load
        self._call_ast = sl.parse("call.star", _CALL, self._load_dialect)  # evaluated often
        self._part_ast = sl.parse("part.star", "value = json.decode(scriba_part)\n",
                                  self.dialect)
        self._assembly: dict[tuple[int, int, bool], sl.AST] = {}
        # The last view put together (its layout, its parts' keys, the view): the next
        # one with the same layout is made from it and the parts that changed.
        self._last: tuple[Any, list[str], sl.FrozenModule | None] = (None, [], None)
        self._chain = 0

    # --- budget ------------------------------------------------------------------------
    def _cancelled(self) -> bool:
        self.polls += 1
        if self.polls > self.budget:
            self.why = ""
            return True
        if self.polls > self.steps_left:
            self.why = COMMAND_STEPS_TEXT
            return True
        if self.polls & 7 == 0 and time.monotonic() > self.deadline:
            self.why = WALL_CLOCK_TEXT
            return True
        return False

    def start_call(self) -> None:
        self.polls = 0
        self.why = ""

    def end_call(self) -> int:
        used, self.polls = self.polls, 0
        self.steps_left -= used
        return used

    def _options(self) -> sl.EvalOptions:
        return sl.EvalOptions(check_cancelled=self._cancelled, max_callstack_size=200)

    # --- modules -----------------------------------------------------------------------
    def compile(self, code: str, name: str = "rule.star") -> sl.FrozenModule:
        digest = code_hash(code)
        if digest in self.modules:
            self.modules.move_to_end(digest)
            return self.modules[digest]
        # The view travels as a JSON string decoded inside Starlark: several times cheaper
        # than converting a Python dict value by value. A generated dispatcher does that.
        ast = sl.parse(name, code + _dispatcher(_defined(code)) + std.binding_source(),
                       self.dialect)
        module = sl.Module()
        for native_name, native in self._std.items():
            module.add_callable(native_name, native)
        module.add_callable("transform", self._transform_callback)
        module.add_callable("round", _round)
        module.add_callable("floor", lambda x: int(math.floor(x)))
        module.add_callable("ceil", lambda x: int(math.ceil(x)))
        sl.eval_with(self._options(), module, ast, self.globals)
        frozen = module.freeze()
        self.modules[digest] = frozen
        self.codes[digest] = code
        # Found once per code, not on every transform (a scan of every rule's whole text).
        self.hooks[digest] = frozenset(_defined(code))
        while len(self.modules) > _CACHE_SIZE:
            old, _ = self.modules.popitem(last=False)
            self.codes.pop(old, None)
            self.hooks.pop(old, None)
        return frozen

    def call(self, module: sl.FrozenModule, hook: str, *args: Any) -> Any:
        return module.call_with(self._options(), hook, *args).value

    def call_with_view(self, module: sl.FrozenModule, hook: str, rule_id: str,
                       args: list[Any]) -> Any:
        """Call ``hook`` of a rule with the view as ``game``. The view is decoded once per
        request, not once per rule: its values are frozen and shared by the calls (the
        view is read-only); each call gets its own top-level dict with ``this_rule``."""
        view = self._decoded_view()
        driver = sl.Module()
        driver["scriba_hook"] = hook
        driver["scriba_rule"] = rule_id
        driver["scriba_args"] = json.dumps(args)
        modules = {_VIEW_MODULE: view, _RULE_MODULE: module}
        return sl.eval_with(self._options(), driver, self._call_ast, self.globals,
                            sl.FileLoader(modules.__getitem__)).value

    # --- the game view -------------------------------------------------------------------
    def receive(self, request: dict[str, Any], lines: list[bytes]) -> list[str]:
        """Take a request's views: keep the parts sent, note the ones they use; the keys
        of used parts this worker does not hold (the host's mirror disagrees)."""
        if request.get("reset_parts"):
            self.parts.clear()
        sent = [(key, self._decode_part(line)) for key, line in zip(request.get("send") or [],
                                                                      lines, strict=True)]
        used = dict.fromkeys(key for view in request.get("views") or []
                             for key in view.get("parts") or [])
        self.use_view({"inline": {}, "parts": []})
        return self.parts.take(sent, list(used))

    def use_view(self, view: dict[str, Any]) -> None:
        """The view the calls that follow are given (one of the request's views)."""
        self.view_request = view
        self._view = None

    def _decode_part(self, line: bytes) -> sl.FrozenModule | str:
        holder = sl.Module()
        holder["scriba_part"] = line.decode()
        try:
            sl.eval_with(self._options(), holder, self._part_ast, self.globals)
        except BaseException as exc:  # noqa: BLE001 - every call using it says why
            return f"the game view could not be read: {_error_text(exc, self.why)}"
        return holder.freeze()

    def _decoded_view(self) -> sl.FrozenModule:
        if self._view is None:
            keys = list(self.view_request.get("parts") or [])
            changed = self._changed_since_last(keys)
            if changed is None:  # put together from all its parts
                self._view = self._assemble(keys, previous=None)
                self._chain = 0
            else:  # the last view with the parts that changed since
                self._view = self._assemble(changed, previous=self._last[2])
                self._chain += 1
            self._last = (self.view_request.get("layout"), keys, self._view)
        return self._view

    def _changed_since_last(self, keys: list[str]) -> list[str] | None:
        """The parts of this view not in the last one put together, if it can be made
        from that one: same layout (the same proposals, grouped alike, at the same
        places) and a short chain (each such view holds on to the one before)."""
        layout, last_keys, _ = self._last
        if layout is None or layout != self.view_request.get("layout") or \
                len(last_keys) != len(keys) or self._chain >= _MAX_VIEW_CHAIN:
            return None
        return [key for key, last in zip(keys, last_keys, strict=True) if key != last]

    def _assemble(self, keys: list[str], previous: sl.FrozenModule | None) -> sl.FrozenModule:
        entries = [k for k in keys if not k.startswith("p:")]
        proposals = [k for k in keys if k.startswith("p:")]
        modules: dict[str, sl.FrozenModule] = {}
        for index, key in enumerate(entries + proposals):
            part = self.parts.items[key]
            if isinstance(part, str):
                raise ValueError(part)
            modules[str(index)] = part
        if previous is not None:
            modules["previous"] = previous
        holder = sl.Module()
        holder["scriba_inline"] = json.dumps(self.view_request.get("inline") or {})
        sl.eval_with(self._options(), holder,
                     self._assembly_ast(len(entries), len(proposals), previous is not None),
                     self.globals, sl.FileLoader(modules.__getitem__))
        return holder.freeze()

    def _assembly_ast(self, entries: int, proposals: int, incremental: bool) -> sl.AST:
        """The generated code that puts a view together from its parts (or from the last
        view and the parts that changed), by shape."""
        shape = (entries, proposals, incremental)
        if shape not in self._assembly:
            lines = [f"load({str(i)!r}, v{i}='value')" for i in range(entries + proposals)]
            if incremental:
                lines += ["load('previous', previous='game')", "game = dict(previous)",
                          "game.update(json.decode(scriba_inline))"]
            else:
                lines.append("game = json.decode(scriba_inline)")
            lines += [f"game.update(v{i})" for i in range(entries)]
            if proposals:
                lines.append("proposals = dict(previous['proposals'])" if incremental
                             else "proposals = {}")
                lines += [f"proposals.update(v{i})"
                          for i in range(entries, entries + proposals)]
                lines.append("game['proposals'] = proposals")
            elif incremental:
                lines.append("game['proposals'] = previous['proposals']")
            if len(self._assembly) > 256:
                self._assembly.clear()
            self._assembly[shape] = sl.parse("view.star", "\n".join(lines) + "\n",
                                             self._load_dialect)
        return self._assembly[shape]

    def _transform_callback(self, name: str, value: Any, context: Any = None) -> Any:
        if self.depth >= _MAX_TRANSFORM_DEPTH:
            raise RuntimeError(f"transform {name!r} nested deeper than {_MAX_TRANSFORM_DEPTH}")
        self.depth += 1
        try:
            for rule_id, digest in self.order:
                if f"transform_{name}" in self.hooks_of(digest):
                    value = self.call_with_view(self.modules[digest], f"transform_{name}",
                                                rule_id, [_plain(value), _plain(context)])
            return value
        finally:
            self.depth -= 1

    def hooks_of(self, digest: str) -> frozenset[str]:
        return self.hooks[digest]


DISPATCH = "scriba_dispatch_hook"
_VIEW_MODULE = "scriba_view"
_RULE_MODULE = "scriba_rule"
# One hook call: the rule's dispatcher, given the shared view (the value of the last line
# is the result of the evaluation).
_CALL = (f"load({_VIEW_MODULE!r}, 'game')\nload({_RULE_MODULE!r}, {DISPATCH!r})\n"
         f"{DISPATCH}(scriba_hook, game, scriba_rule, scriba_args)\n")


def _defined(code: str) -> list[str]:
    """Names of the top-level functions a rule's code defines."""
    return [name for name in re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", code, re.MULTILINE)
            if name != DISPATCH]


def _dispatcher(hooks: list[str]) -> str:
    branches = "".join(f"    if hook == {name!r}:\n        return {name}(game, *args)\n"
                       for name in hooks if name not in DECLARATION_HOOKS)
    # ``game`` is a new dict, "this_rule" first, then the view's (frozen) entries.
    return (f"\n\ndef {DISPATCH}(hook, view, this_rule, args_json):\n"
            "    game = {'this_rule': this_rule}\n    game.update(view)\n"
            "    args = json.decode(args_json)\n"
            f"{branches}    fail('no hook ' + hook)\n")


_CALL_FRAME = re.compile(r"  \* call\.star:\d+, in <module>\n[^\n]*\n")


def _error_text(exc: BaseException, why: str = "") -> str:
    text = _CALL_FRAME.sub("", str(exc).strip(), count=1)  # the generated call's frame
    if "error: Immutable" in text:
        text = text.replace("error: Immutable", "error: Immutable (the game view is read-only "
                            "and immutable: copy a part with dict() or list() to change it)", 1)
    if "Evaluation cancelled" in text and why:
        return why
    if "Evaluation cancelled" in text:
        return "step budget exceeded (the rule's code ran too long and was stopped)"
    if type(exc).__name__ == "PanicException" or isinstance(exc, MemoryError):
        return "memory limit exceeded (the rule's code allocated too much and was stopped)"
    return text[:2000]


def _plain(value: Any) -> Any:
    """Check that a result is plain data; tuples become lists."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    raise TypeError(f"rule code returned {type(value).__name__}, which is not plain data")


class Worker:
    def __init__(self) -> None:
        self.box = Sandbox()
        self.poisoned = False  # after an out-of-memory panic the process is not trusted
        self.used = 0  # polls used by the current request

    def handle(self, request: dict[str, Any], lines: list[bytes] | None = None
               ) -> dict[str, Any]:
        """Answer one request; ``lines`` are those that followed it (the view's parts)."""
        answer = self._handle(request, lines or [])
        answer["polls"] = self.used
        return answer

    def _handle(self, request: dict[str, Any], lines: list[bytes]) -> dict[str, Any]:
        op = request.get("op")
        box = self.box
        box.budget = int(request.get("budget", 2000))
        box.steps_left = float(request.get("steps", math.inf))
        seconds = request.get("seconds")
        box.deadline = math.inf if seconds is None else time.monotonic() + float(seconds)
        box.std_version = std.version_of({"std": request.get("std", std.CURRENT)})
        self.used = 0
        if op == "ping":
            return {"ok": True, "pid": os.getpid()}
        if op == "inspect":
            return self.inspect(request["code"])
        # The views' parts are kept before anything else: the host's mirror counts on it.
        missing_parts = box.receive(request, lines)
        if missing_parts:
            return {"missing_parts": missing_parts}
        views = request.get("views") or [{}]
        missing = [h for _, h in request["order"] if h not in box.modules]
        codes = request.get("codes") or {}
        for digest in missing:
            if digest not in codes:
                return {"missing": missing}
            box.start_call()
            try:
                box.compile(codes[digest])
            except BaseException as exc:  # noqa: BLE001 - includes Rust panics on OOM
                self._note_panic(exc)
                return {"missing": [], "compile_error": _error_text(exc, box.why)}
            finally:
                self.used += box.end_call()
        box.order = [(rid, h) for rid, h in request["order"]]
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

    def _note_panic(self, exc: BaseException) -> None:
        if type(exc).__name__ == "PanicException" or isinstance(exc, MemoryError):
            self.poisoned = True

    def inspect(self, code: str) -> dict[str, Any]:
        box = self.box
        box.start_call()
        try:
            digest = code_hash(code)
            module = box.compile(code)
        except BaseException as exc:  # noqa: BLE001
            self._note_panic(exc)
            return {"error": _error_text(exc, box.why)}
        finally:
            self.used += box.end_call()
        hooks = _defined(box.codes[digest])
        refused = [e for e in map(hook_name_error, hooks) if e]
        if refused:  # a misspelt hook would silently never be called
            return {"error": "; ".join(refused)}
        declarations: dict[str, Any] = {}
        for hook in DECLARATION_HOOKS:
            if hook in hooks:
                box.start_call()
                try:
                    declarations[hook] = _plain(box.call(module, hook))
                except BaseException as exc:  # noqa: BLE001
                    self._note_panic(exc)
                    return {"error": f"{hook}(): {_error_text(exc, box.why)}"}
                finally:
                    self.used += box.end_call()
        return {"hooks": hooks, "declarations": declarations}

    def call(self, request: dict[str, Any]) -> list[list[Any]]:
        box = self.box
        digests = dict(box.order)
        results = []
        for rule_id in request["targets"]:
            box.start_call()
            box.depth = 0
            try:
                module = box.modules[digests[rule_id]]
                value = _plain(box.call_with_view(module, request["hook"], rule_id,
                                                  request["args"]))
                results.append([rule_id, value, None])
            except BaseException as exc:  # noqa: BLE001
                self._note_panic(exc)
                results.append([rule_id, None, _error_text(exc, box.why)])
            finally:
                self.used += box.end_call()
        return results

    def transform(self, request: dict[str, Any]) -> dict[str, Any]:
        box = self.box
        value = request["value"]
        aborts = []
        hook = f"transform_{request['name']}"
        for rule_id, digest in box.order:
            if hook not in box.hooks_of(digest):
                continue
            box.start_call()
            box.depth = 0
            try:
                value = _plain(box.call_with_view(box.modules[digest], hook, rule_id,
                                                  [value, request.get("context")]))
            except BaseException as exc:  # noqa: BLE001
                self._note_panic(exc)
                aborts.append([rule_id, _error_text(exc, box.why)])
            finally:
                self.used += box.end_call()
        return {"value": value, "aborts": aborts}


def _limit_memory() -> None:
    limit = int(os.environ.get("SCRIBA_WORKER_MEMORY", str(1024 * 1024 * 1024)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    _limit_memory()
    worker = Worker()
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

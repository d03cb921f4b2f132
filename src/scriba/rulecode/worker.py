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

What only a process can do (:class:`Guard`, used by :func:`main`): before each frame the
worker writes which rule is running at the start of its stderr file (the pool reads it if
the worker dies, so that only that rule is stopped), arms a timer whose signal kills the
process ``KILL_GRACE`` after the frame's time is up (a step that cannot be interrupted: a
huge allocation, a builtin on a huge value) and lowers its address-space limit to what it
uses plus ``MEMORY_PER_CALL`` (``MODULE_MEMORY`` for a rule's top-level code, whose values
stay with the compiled module in the cache).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import resource
import signal
import stat
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import starlark as sl

from scriba.kernel.limits import KILL_GRACE, MEMORY_PER_CALL, MODULE_MEMORY, WORKER_MEMORY
from scriba.kernel.registry import ACTION_PREFIXES, hook_name_error
from scriba.kernel.registry import DECLARATIONS as DECLARATION_HOOKS
from scriba.rulecode import std
from scriba.rulecode.cost import (
    CALL_STEPS_TEXT,
    MEMORY_TEXT,
    Frame,
    Ledger,
    Limits,
    Meter,
    weight,
)
from scriba.rulecode.viewparts import PartStore

_CACHE_SIZE = 512
# Views made one from the last: after this many, one is put together afresh, so that the
# chain of views each holds on to stays short.
_MAX_VIEW_CHAIN = 32
# Proposals' parts in a block, and blocks kept: a view put together afresh loads a few
# blocks, not every part (each block holds on to its parts, so few are kept).
_BLOCK = 32
_BLOCKS_KEPT = 96
_MAX_TRANSFORM_DEPTH = 8
# The frame's name for compiling a rule's code, and the rule proposing code stands for.
TOP_LEVEL = "(top level)"
PROPOSED = "(proposed)"
# One call's outcome: its value, why it was aborted, whether its rule was stopped before.
Outcome = tuple[Any, str | None, bool]


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:32]


def _round(x: Any) -> int:
    """Round half away from zero, as "arrotondando all'intero più vicino" means."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


class Guard:
    """What only a worker process can do around a frame: say which rule runs (at the
    start of its stderr file, read by the pool if the process dies), kill the process when
    a step overruns its frame's time, and bound the memory a call may add."""

    MARK = 128  # bytes at the start of stderr kept for the mark; the rest is stderr's

    def __init__(self) -> None:
        self.marks = stat.S_ISREG(os.fstat(2).st_mode)
        if self.marks:  # the place of the mark, before anything else is written there
            os.write(2, b" " * (self.MARK - 1) + b"\n")
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # even if the parent ignored it
        self.hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        self._statm = os.open("/proc/self/statm", os.O_RDONLY)

    def enter(self, frame: Frame, outermost: bool) -> None:
        if outermost:  # what a call, or a rule's top-level code, may add to the worker
            more = MODULE_MEMORY if frame.hook == TOP_LEVEL else MEMORY_PER_CALL
            self._limit_memory(self.address_space() + more)
        self.arm(frame)

    def arm(self, frame: Frame) -> None:
        """``frame`` is the one running (again): mark it, kill it past its time."""
        self._mark(json.dumps([frame.rule, frame.hook]))
        seconds = max(frame.deadline - frame.resumed, 0) + KILL_GRACE
        # SIGALRM's default action ends the process; no limit (a bare request): no timer.
        signal.setitimer(signal.ITIMER_REAL, seconds if math.isfinite(seconds) else 0)

    def leave(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self._mark("")
        self._limit_memory(self.hard)

    def address_space(self) -> int:
        return int(os.pread(self._statm, 64, 0).split()[0]) * resource.getpagesize()

    def _limit_memory(self, limit: int) -> None:
        if self.hard != resource.RLIM_INFINITY:
            limit = min(limit, self.hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, self.hard))

    def _mark(self, text: str) -> None:
        if self.marks:
            line = text.encode()
            if len(line) >= self.MARK:
                line = b""  # an unusually long rule id: the pool will not know the culprit
            os.pwrite(2, line.ljust(self.MARK - 1) + b"\n", 0)


def read_mark(stderr_head: bytes) -> list[str] | None:
    """The rule and hook a worker was running, from the start of its stderr file."""
    first = stderr_head[:Guard.MARK].split(b"\n", 1)[0].strip()
    try:
        mark = json.loads(first) if first else None
    except ValueError:
        return None
    return mark if isinstance(mark, list) and len(mark) == 2 else None


class Sandbox:
    def __init__(self, guard: Guard | None = None) -> None:
        self.modules: OrderedDict[str, sl.FrozenModule] = OrderedDict()
        self.codes: dict[str, str] = {}
        self.hooks: dict[str, frozenset[str]] = {}  # the names each code defines
        self.globals = sl.Globals.extended_by([sl.LibraryExtension.Json,
                                               sl.LibraryExtension.StructType])
        self.dialect = sl.Dialect.standard()
        self.dialect.enable_load = False
        self.dialect.enable_f_strings = True
        self.meter = Meter()
        self.guard = guard  # a worker process's; None in the server's process (tests)
        self.poisoned = False  # after an out-of-memory panic the process is not trusted
        self.nested: list[list[Any]] = []  # aborted nested calls: [rule, hook, why, stopped]
        # Codes that did not compile in this request: why, and whether their rule had
        # been stopped before (so was not even compiled).
        self.failed: dict[str, tuple[str, bool]] = {}
        self.order: list[tuple[str, str]] = []
        self.depth = 0
        self.std_version = std.CURRENT  # the calling game's, set with every request
        # The native helpers run in Python, where Starlark's polls do not reach: each is
        # charged by the size of what it handles (scriba.rulecode.cost). std's Starlark
        # helpers come with std.binding_source() and are polled like the rule's own code;
        # the game's version they ask for on each call is not worth a step.
        self._natives = {name: self._metered(native) for name, native in [
            *std.natives(lambda: self.std_version).items(),
            ("transform", self._transform_callback), ("round", _round),
            ("floor", lambda x: int(math.floor(x))), ("ceil", lambda x: int(math.ceil(x)))]}
        self._natives[std.VERSION_NATIVE] = lambda: self.std_version
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
        # The last view put together (its layout, the id of its proposals' keys, its
        # entries' keys, its proposals' keys, the view): the next one with the same
        # layout is made from it and the parts that changed.
        self._last: tuple[Any, int | None, list[str], list[str], sl.FrozenModule | None] = \
            (None, None, [], [], None)
        self._chain = 0
        # Blocks of proposals' parts put together, by their keys (see _assemble).
        self._blocks: OrderedDict[tuple[str, ...], sl.FrozenModule] = OrderedDict()
        self._block_asts: dict[int, sl.AST] = {}

    # --- budget ------------------------------------------------------------------------
    def _cancelled(self) -> bool:
        return self.meter.poll()

    def _options(self) -> sl.EvalOptions:
        return sl.EvalOptions(check_cancelled=self._cancelled, max_callstack_size=200)

    def _metered(self, native: Callable[..., Any]) -> Callable[..., Any]:
        meter = self.meter

        def call(*args: Any, **kwargs: Any) -> Any:
            meter.charge(1 + weight((args, kwargs), meter.left()))
            result = native(*args, **kwargs)
            meter.charge(weight(result, meter.left()))
            return result
        return call

    def run(self, rule_id: str, hook: str, thunk: Callable[[], Any],
            plain: bool = True) -> Outcome:
        """Run ``thunk`` — one call of a rule's code — in a frame of that rule: its value
        (plain data, charged like a helper's result, unless ``plain`` is false), or why
        it was aborted, and whether the rule was stopped before it could run."""
        frame = self.meter.begin(rule_id, hook)
        if isinstance(frame, str):
            return None, frame, True
        outer = self.meter.frames[-2] if len(self.meter.frames) > 1 else None
        if self.guard is not None:
            self.guard.enter(frame, outermost=outer is None)
        try:
            value = thunk()
            if plain:
                self.meter.charge(weight(value, self.meter.left()))
                value = _plain(value)
            return value, None, False
        except BaseException as exc:  # noqa: BLE001 - includes Rust panics on OOM
            self.note_panic(exc)
            return None, _error_text(exc, frame.why), False
        finally:
            self.meter.end(frame)
            if self.guard is not None:
                if outer is None:
                    self.guard.leave()
                else:
                    self.guard.arm(outer)

    def note_panic(self, exc: BaseException) -> None:
        if type(exc).__name__ == "PanicException" or isinstance(exc, MemoryError):
            self.poisoned = True

    # --- modules -----------------------------------------------------------------------
    def compile(self, code: str, name: str = "rule.star") -> sl.FrozenModule:
        digest = code_hash(code)
        if digest in self.modules:
            self.modules.move_to_end(digest)
            return self.modules[digest]
        # The rule's own code parsed alone first: a syntax error then points into its own
        # lines (an unclosed bracket at its end would point into the dispatcher after it;
        # without the trailing newlines, at the end of its last line, shown).
        sl.parse(name, code.rstrip(), self.dialect)
        # The view travels as a JSON string decoded inside Starlark: several times cheaper
        # than converting a Python dict value by value. A generated dispatcher does that.
        ast = sl.parse(name, code + _dispatcher(_defined(code)) + std.binding_source(),
                       self.dialect)
        module = sl.Module()
        for native_name, native in self._natives.items():
            module.add_callable(native_name, native)
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
        view = self.decoded_view()
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
        views = request.get("views") or []
        missing, resolved = self.parts.take(sent, views)
        for view, keys in zip(views, resolved, strict=False):  # none resolved if missing
            view["proposal_keys"] = keys  # the keys of its proposals' parts, all of them
        self.use_view({"inline": {}, "parts": []})
        return missing

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
            return f"the game view could not be read: {_error_text(exc)}"
        return holder.freeze()

    def decoded_view(self) -> sl.FrozenModule:
        if self._view is None:
            view = self.view_request
            entries = list(view.get("parts") or [])
            proposals = view.get("proposal_keys") or []
            changed = self._changed_since_last(entries, proposals)
            if changed is None:  # put together from all its parts
                self._view = self._assemble(entries + proposals, previous=None)
                self._chain = 0
            else:  # the last view with the parts that changed since
                self._view = self._assemble(changed, previous=self._last[4])
                self._chain += 1
            self._last = (view.get("layout"), (view.get("proposals") or {}).get("id"),
                          entries, proposals, self._view)
        return self._view

    def _changed_since_last(self, entries: list[str], proposals: list[str]
                            ) -> list[str] | None:
        """The parts of this view not in the last one put together, if it can be made
        from that one: same layout (the same proposals, grouped alike, at the same
        places) and a short chain (each such view holds on to the one before). The
        proposals' parts that changed are those the request names as changed, when the
        last view's proposals are the ones they changed from."""
        layout, last_id, last_entries, last_proposals, _ = self._last
        wire = self.view_request.get("proposals") or {}
        if layout is None or layout != self.view_request.get("layout") or \
                len(last_entries) != len(entries) or self._chain >= _MAX_VIEW_CHAIN:
            return None
        changed = [key for key, last in zip(entries, last_entries, strict=True) if key != last]
        if last_id is not None and last_id == wire.get("id"):
            return changed
        if last_id is not None and last_id == wire.get("base"):
            return changed + [key for _, key in wire["changed"]]
        # Made from other keys (the last view was not of the keys these changed from):
        # the keys not in the last view, found in C.
        return changed + sorted(set(proposals).difference(last_proposals))

    def _assemble(self, keys: list[str], previous: sl.FrozenModule | None) -> sl.FrozenModule:
        entries = [self._part(k) for k in keys if not k.startswith("p:")]
        proposals = [k for k in keys if k.startswith("p:")]
        if previous is None and len(proposals) > _BLOCK:
            # Afresh, from blocks of proposals' parts kept from the last time: of hundreds
            # of open proposals only the blocks with one that changed are made again.
            values = [self._block(tuple(proposals[at:at + _BLOCK]))
                      for at in range(0, len(proposals), _BLOCK)]
        else:
            values = [self._part(k) for k in proposals]
        modules = {str(index): part for index, part in enumerate(entries + values)}
        if previous is not None:
            modules["previous"] = previous
        holder = sl.Module()
        holder["scriba_inline"] = json.dumps(self.view_request.get("inline") or {})
        sl.eval_with(self._options(), holder,
                     self._assembly_ast(len(entries), len(values), previous is not None),
                     self.globals, sl.FileLoader(modules.__getitem__))
        return holder.freeze()

    def _part(self, key: str) -> sl.FrozenModule:
        part = self.parts.items[key]
        if isinstance(part, str):
            raise ValueError(part)
        return part

    def _block(self, keys: tuple[str, ...]) -> sl.FrozenModule:
        """The proposals of these parts as one dict (``value``), kept by their keys."""
        found = self._blocks.get(keys)
        if found is None:
            modules = {str(index): self._part(key) for index, key in enumerate(keys)}
            if len(keys) not in self._block_asts:
                self._block_asts[len(keys)] = sl.parse("block.star", "\n".join(
                    [f"load({str(i)!r}, v{i}='value')" for i in range(len(keys))] +
                    ["value = {}"] + [f"value.update(v{i})" for i in range(len(keys))]) + "\n",
                    self._load_dialect)
            holder = sl.Module()
            sl.eval_with(self._options(), holder, self._block_asts[len(keys)], self.globals,
                         sl.FileLoader(modules.__getitem__))
            found = holder.freeze()
            self._blocks[keys] = found
        self._blocks.move_to_end(keys)
        while len(self._blocks) > _BLOCKS_KEPT:
            self._blocks.popitem(last=False)
        return found

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
        value, context = _plain(value), _plain(context)  # the caller's to get right
        self.depth += 1
        try:
            return self.transform_through(f"transform_{name}", value, context)
        finally:
            self.depth -= 1

    def transform_through(self, hook: str, value: Any, context: Any) -> Any:
        """``value`` passed through every rule's ``hook`` in order, each call in a frame
        of its own rule; a call that is aborted leaves the value as it was and is noted
        in :attr:`nested`."""
        for rule_id, digest in self.order:
            if hook not in self.hooks.get(digest, ()):
                continue
            module = self.modules.get(digest)
            if module is None:  # its code could not be compiled in this request
                self.nested.append([rule_id, hook, *self.failed[digest]])
                continue
            result, error, stopped = self.run(rule_id, hook, functools.partial(
                self.call_with_view, module, hook, rule_id, [value, context]))
            if error is None:
                value = result
            else:
                self.nested.append([rule_id, hook, error, stopped])
        return value


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
            if name not in (DISPATCH, _JOIN)]


def _dispatcher(hooks: list[str]) -> str:
    """The generated function the kernel's calls go through. ``check`` and
    ``on_action_taken`` also reach the rule's hooks for one action (``check_<action>``,
    ``on_action_<action>``): the general hook first, then the action's — a check's first
    refusal wins, reactions' effects are joined in that order."""
    branches, handled = "", set()
    for general, prefix in ACTION_PREFIXES.items():
        specific = [name for name in hooks if name.startswith(prefix) and
                    name != general and len(name) > len(prefix)]
        if not specific:
            continue
        handled.add(general)
        first = f"{general}(game, *args)" if general in hooks else "None"
        branches += f"    if hook == {general!r}:\n        result = {first}\n"
        if general == "check" and general in hooks:
            branches += "        if result:\n            return result\n"
        join = "" if general == "check" else f"{_JOIN}(result, "
        for name in specific:
            branches += (f"        if args[0]['action'] == {name[len(prefix):]!r}:\n"
                         f"            return {join}{name}(game, *args){')' if join else ''}\n")
        branches += "        return result\n"
    branches += "".join(f"    if hook == {name!r}:\n        return {name}(game, *args)\n"
                        for name in hooks if name not in (*DECLARATION_HOOKS, *handled))
    # ``game`` is a new dict, "this_rule" first, then the view's (frozen) entries.
    return (f"\n\ndef {DISPATCH}(hook, view, this_rule, args_json):\n"
            "    game = {'this_rule': this_rule}\n    game.update(view)\n"
            "    args = json.decode(args_json)\n"
            f"{branches}    fail('no hook ' + hook)\n" + (_JOIN_CODE if _JOIN in branches else ""))


# Effects of the general hook and then of the action's, as one list (either may return
# one effect, a list or nothing; anything else is left for the kernel to refuse).
_JOIN = "scriba_join_effects"
_JOIN_CODE = f"""

def {_JOIN}(first, second):
    if not second:
        return first
    if not first:
        return second
    if type(first) == "dict":
        first = [first]
    if type(second) == "dict":
        second = [second]
    if type(first) != "list" or type(second) != "list":
        bad = first if type(first) != "list" else second
        fail("a hook must return a list of effects, got " + repr(bad)[:200])
    return first + second
"""


_CALL_FRAME = re.compile(r"  \* call\.star:\d+, in <module>\n[^\n]*\n")


def _error_text(exc: BaseException, why: str = "") -> str:
    text = _CALL_FRAME.sub("", str(exc).strip(), count=1)  # the generated call's frame
    if "error: Immutable" in text:
        text = text.replace("error: Immutable", "error: Immutable (the game view is read-only "
                            "and immutable: copy a part with dict() or list() to change it)", 1)
    if why:  # a limit stopped the frame (a poll cancelled it, or a helper's charge)
        return why
    if "Evaluation cancelled" in text:
        return CALL_STEPS_TEXT
    if type(exc).__name__ == "PanicException" or isinstance(exc, MemoryError):
        return MEMORY_TEXT
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
                box.call_with_view, box.modules[digest], request["hook"], rule_id,
                request["args"]))
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

"""The sandbox proper (:class:`Sandbox`): rule code compiled and cached by the hash of its
code, each call run in a metered frame of its rule (:mod:`scriba.rulecode.cost`), the game
view put together from the parts sent (:mod:`scriba.rulecode.viewparts`) and shared by the
calls, ``transform`` passed through the rules in order. A worker process
(:mod:`scriba.rulecode.worker`) and the in-process host use it alike."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import starlark as sl

from scriba.rulecode import std
from scriba.rulecode.callcode import (
    _CALL,
    _RULE_MODULE,
    _VIEW_MODULE,
    _defined,
    _dispatcher,
    _error_text,
    _plain,
)
from scriba.rulecode.cost import Meter, weight
from scriba.rulecode.guard import Guard
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
# One call's outcome: its value, why it was aborted, whether its rule was stopped before.
Outcome = tuple[Any, str | None, bool]


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:32]


def _round(x: Any) -> int:
    """Round half away from zero, as "arrotondando all'intero più vicino" means."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


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
        # The options of every evaluation, made once: they never change.
        self._eval_options = sl.EvalOptions(check_cancelled=self._cancelled,
                                            max_callstack_size=200)
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
        self._last_inline: Any = None  # the inline part of the view put together last
        # Blocks of proposals' parts put together, by their keys (see _assemble).
        self._blocks: OrderedDict[tuple[str, ...], sl.FrozenModule] = OrderedDict()
        self._block_asts: dict[int, sl.AST] = {}

    # --- budget ------------------------------------------------------------------------
    def _cancelled(self) -> bool:
        return self.meter.poll()

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
        sl.eval_with(self._eval_options, module, ast, self.globals)
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
        return module.call_with(self._eval_options, hook, *args).value

    def call_with_view(self, module: sl.FrozenModule, hook: str, rule_id: str,
                       args: list[Any] | str) -> Any:
        """Call ``hook`` of a rule with the view as ``game``. The view is decoded once per
        request, not once per rule: its values are frozen and shared by the calls (the
        view is read-only); each call gets its own top-level dict with ``this_rule``."""
        view = self.decoded_view()
        driver = sl.Module()
        driver["scriba_hook"] = hook
        driver["scriba_rule"] = rule_id
        # the arguments as JSON (encoded once when the same go to several rules)
        driver["scriba_args"] = args if isinstance(args, str) else json.dumps(args)
        modules = {_VIEW_MODULE: view, _RULE_MODULE: module}
        return sl.eval_with(self._eval_options, driver, self._call_ast, self.globals,
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
            sl.eval_with(self._eval_options, holder, self._part_ast, self.globals)
        except BaseException as exc:  # noqa: BLE001 - every call using it says why
            return f"the game view could not be read: {_error_text(exc)}"
        return holder.freeze()

    def decoded_view(self) -> sl.FrozenModule:
        if self._view is None:
            view = self.view_request
            entries = list(view.get("parts") or [])
            proposals = view.get("proposal_keys") or []
            changed = self._changed_since_last(entries, proposals)
            if changed == [] and view.get("inline") == self._last_inline:
                # the same view again (a request's calls about one state: the probes of
                # what a player may do): the one put together last, as it is
                self._view = self._last[4]
                return self._view
            if changed is None:  # put together from all its parts
                self._view = self._assemble(entries + proposals, previous=None)
                self._chain = 0
            else:  # the last view with the parts that changed since
                self._view = self._assemble(changed, previous=self._last[4])
                self._chain += 1
            self._last_inline = view.get("inline")
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
        sl.eval_with(self._eval_options, holder,
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
            sl.eval_with(self._eval_options, holder, self._block_asts[len(keys)], self.globals,
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

"""``std``: the standard library predeclared in every rule's code, by version.

A game records the version it started with in its settings (``settings["std"]``, set when
the game is created; a game without it is version 1) and every call of its rules runs
with that version, so a later std never changes an old game's behaviour. Old versions
stay here for as long as games that use them may be replayed.

Most helpers are Python functions (a tally in Python is about a hundred times faster
than the same loop in Starlark); the lookups in the game's big structures (``std.rule``,
``std.proposal``, ``std.open_proposals``) are Starlark source owned by the version module
(``STARLARK``), since a native helper would copy the whole of ``game["proposals"]`` across
on every call. The sandbox adds both to each rule's module as ``std.<name>``, never from a
file a rule could read or change. Both kinds are dispatched to the game's version at call
time: modules are compiled once per code and shared by games of different versions. A
name is native in every version that has it or Starlark in every one (checked below).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from types import ModuleType
from typing import Any

from scriba.rulecode.std import v1

VERSIONS: dict[int, ModuleType] = {1: v1}
CURRENT = max(VERSIONS)
_PREFIX = "_scriba_std_"
# The native that tells the Starlark helpers' dispatch which version the calling game has
# (the sandbox adds it unmetered: it takes nothing and does nothing a step should pay for).
VERSION_NATIVE = "_scriba_std_game_version"


def _starlark_names(module: ModuleType) -> list[str]:
    """The public functions of a version's Starlark source (``_name`` ones are its own)."""
    return re.findall(r"^def ([a-z]\w*)\(", getattr(module, "STARLARK", ""), re.MULTILINE)


NATIVE_NAMES = sorted({name for m in VERSIONS.values() for name in m.FUNCTIONS})
STARLARK_NAMES = sorted({name for m in VERSIONS.values() for name in _starlark_names(m)})
if set(NATIVE_NAMES) & set(STARLARK_NAMES):  # one dispatch per name
    raise ImportError("a std helper is native in one version and Starlark in another")
NAMES = sorted(NATIVE_NAMES + STARLARK_NAMES)
CONSTANT_NAMES = sorted({name for m in VERSIONS.values() for name in m.CONSTANTS})


def version_of(settings: Any) -> int:
    """The std version of a game, from its settings."""
    version = settings.get("std", 1) if isinstance(settings, dict) else 1
    return version if isinstance(version, int) and version in VERSIONS else 1


def natives(current_version: Callable[[], int]) -> dict[str, Callable[..., Any]]:
    """Callables to add to a module: each dispatches to the game's std version at call time
    (modules are compiled once per code and shared by games of different versions)."""
    def dispatcher(name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            functions = VERSIONS[current_version()].FUNCTIONS
            if name not in functions:
                raise v1.StdError(f"std.{name} does not exist in std version "
                                  f"{current_version()} (this game's)")
            return functions[name](*args, **kwargs)
        return call
    return {_PREFIX + name: dispatcher(name) for name in NATIVE_NAMES}


def starlark_helpers(versions: dict[int, ModuleType]) -> str:
    """Each version's Starlark source inside a function of its own (so versions may define
    the same names), a dict of them by version, and a dispatcher per name that picks the
    calling game's version (asked of the ``VERSION_NATIVE``), as the natives' do."""
    source = ""
    for version, module in versions.items():
        names = _starlark_names(module)
        body = textwrap.indent(getattr(module, "STARLARK", "").strip(), "    ")
        fields = ", ".join(f"{name} = {name}" for name in names)
        source += (f"\n\ndef {_PREFIX}v{version}():\n{body + chr(10) if body else ''}"
                   f"    return struct({fields})\n")
    by_version = ", ".join(f"{v}: {_PREFIX}v{v}()" for v in versions)
    source += f"\n{_PREFIX}starlark = {{{by_version}}}\n"
    source += f"""
def {_PREFIX}pick(name):
    version = {VERSION_NATIVE}()
    helpers = {_PREFIX}starlark[version]
    if not hasattr(helpers, name):
        fail("std.%s does not exist in std version %d (this game's)" % (name, version))
    return getattr(helpers, name)
"""
    for name in sorted({name for m in versions.values() for name in _starlark_names(m)}):
        source += (f"\ndef {_PREFIX}{name}(*args, **kwargs):\n"
                   f"    return {_PREFIX}pick({name!r})(*args, **kwargs)\n")
    return source


_BINDING = starlark_helpers(VERSIONS) + "\n\nstd = struct(" + ", ".join(
    [f"{name} = {_PREFIX}{name}" for name in NAMES]
    # The constants are the current version's (they are only read, and every version
    # keeps the earlier ones' values).
    + [f"{name} = {v!r}" for name, v in VERSIONS[CURRENT].CONSTANTS.items()]) + ")\n"


def binding_source() -> str:
    """Starlark appended to a rule's code: the Starlark helpers and ``std``, a struct of
    them and of the natives (:func:`natives`)."""
    return _BINDING

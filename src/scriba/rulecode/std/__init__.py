"""``std``: the standard library predeclared in every rule's code, by version.

A game records the version it started with in its settings (``settings["std"]``, set when
the game is created; a game without it is version 1) and every call of its rules runs
with that version, so a later std never changes an old game's behaviour. Old versions
stay here for as long as games that use them may be replayed.

The helpers are Python functions (a lookup or a tally in Python is about a hundred times
faster than the same loop in Starlark); the sandbox adds them to each rule's module as
``std.<name>``, never from a file a rule could read or change.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from scriba.rulecode.std import v1

VERSIONS: dict[int, ModuleType] = {1: v1}
CURRENT = max(VERSIONS)
NAMES = sorted({name for m in VERSIONS.values() for name in m.FUNCTIONS})
CONSTANT_NAMES = sorted({name for m in VERSIONS.values() for name in m.CONSTANTS})
_PREFIX = "_scriba_std_"


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
    return {_PREFIX + name: dispatcher(name) for name in NAMES}


def binding_source() -> str:
    """Starlark appended to a rule's code: binds ``std`` to a struct of the natives.

    The constants are the current version's (they are only read, and every version keeps
    the earlier ones' values)."""
    fields = [f"{name} = {_PREFIX}{name}" for name in NAMES]
    fields += [f"{name} = {v!r}" for name, v in VERSIONS[CURRENT].CONSTANTS.items()]
    return "\n\nstd = struct(" + ", ".join(fields) + ")\n"

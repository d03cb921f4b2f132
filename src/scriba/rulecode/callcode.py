"""The Starlark code generated around a rule's own, and what comes back from it: the
dispatcher every call of a rule goes through (a hook, or the hooks for one action), the
call that gives it the shared game view, a failed call's error in words and its value
checked as plain data."""

from __future__ import annotations

import re
from typing import Any

from scriba.kernel.registry import ACTION_PREFIXES
from scriba.kernel.registry import DECLARATIONS as DECLARATION_HOOKS
from scriba.rulecode.cost import CALL_STEPS_TEXT, MEMORY_TEXT

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

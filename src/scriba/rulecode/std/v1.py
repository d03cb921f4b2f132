"""std version 1: the helpers every rule's code finds as ``std.<name>``.

Most are native Python, called from Starlark: arguments arrive as plain Python copies and
results go back the same way, so a helper can never change the game it is given. Each
checks its arguments and raises :class:`StdError` with a message starting ``std.<name>:``;
the sandbox reports it with the rule and the line of the call. The lookups in the game's
big structures (``rule``, ``proposal``, ``open_proposals``) are Starlark (``STARLARK``):
a native one would copy the whole structure across on every call.

Once a game has started with a version, that version never changes behaviour: a fix or
a new helper goes into a new version module (``v2.py``) registered in ``std/__init__``.
(``arg``, ``due`` and ``letter_commands`` joined version 1 when the kernel began asking
checks with arguments unset, rules for the moves owed and passing a command's letter:
names no call could have used before, so no game's behaviour changed.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriba.kernel.effect_schema import EFFECTS, Effect
from scriba.rulecode.std.v1_starlark import STARLARK as V1_STARLARK

# One vocabulary of proposal outcomes for every ruleset; the reason goes in its own field.
OUTCOMES = ("adopted", "rejected", "failed_quorum", "withdrawn", "void")

VERSION = 1

REASONS = ("vote", "veto", "quorum", "deferral", "expired", "author", "ruling", "tie")
CHOICES = ("for", "against", "abstain")


class StdError(ValueError):
    pass


def _fail(name: str, message: str) -> StdError:
    return StdError(f"std.{name}: {message}")


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


# --- finding rules, players and proposals ---------------------------------------------


def find(items: Any, value: Any, key: str = "number") -> Any:
    """The first dict of ``items`` whose ``key`` equals ``value``, or None."""
    if not isinstance(items, list):
        raise _fail("find", f"items must be a list, got {type(items).__name__}")
    for item in items:
        if isinstance(item, dict) and item.get(key) == value:
            return item
    return None


def replace(items: Any, value: Any, changes: Any, key: str = "number") -> list[Any]:
    """``items`` with the dict whose ``key`` equals ``value`` updated by ``changes``."""
    if not isinstance(items, list) or not isinstance(changes, dict):
        raise _fail("replace", "needs a list of dicts and a dict of changes")
    return [{**item, **changes} if isinstance(item, dict) and item.get(key) == value else item
            for item in items]


# The lookups in the game's big structures are Starlark (std/v1_starlark.py): a native
# helper would get a Python copy of all of game["proposals"] on every call.
STARLARK = V1_STARLARK



# --- turn order -----------------------------------------------------------------------


def next_player(order: Any, current: Any, eligible: Any = None, skip: Any = None) -> list[Any]:
    """``[player, wrapped]``: who follows ``current`` in ``order`` (the ruleset's order,
    e.g. ``transform("turn_order", game["player_order"], {})``), cyclically, among
    ``eligible`` (default: everyone in ``order``) and not in ``skip``; ``wrapped`` is true
    when the search went past the end of ``order`` (a round ended). If ``current`` is not
    in ``order`` the search starts at its beginning. ``[None, False]`` if nobody is left."""
    if not isinstance(order, list):
        raise _fail("next_player", f"order must be a list, got {type(order).__name__}")
    allowed = set(order if eligible is None else eligible) - set(skip or [])
    start = order.index(current) if current in order else -1
    n = len(order)
    for k in range(1, n + 1):
        candidate = order[(start + k) % n]
        if candidate in allowed:
            return [candidate, start + k >= n]
    return [None, False]


def next_in_order(order: Any, after: Any, skip: Any = None) -> Any:
    """The player after ``after`` in ``order``, cyclically, not in ``skip``; None if nobody
    is left (a rotating judgeship: the player after the last judge, or after the mover).
    If ``after`` is not in ``order`` the search starts at its beginning."""
    return _in_order("next_in_order", order, after, skip, 1)


def before_in_order(order: Any, before: Any, skip: Any = None) -> Any:
    """The player before ``before`` in ``order``, cyclically, not in ``skip``; None if
    nobody is left (Suber's 212: the player before the mover judges). If ``before`` is not
    in ``order`` the search starts at its end."""
    return _in_order("before_in_order", order, before, skip, -1)


def _in_order(name: str, order: Any, start_at: Any, skip: Any, step: int) -> Any:
    if not isinstance(order, list):
        raise _fail(name, f"order must be a list, got {type(order).__name__}")
    if skip is not None and not isinstance(skip, list):
        raise _fail(name, f"skip must be a list, got {type(skip).__name__}")
    left = set(skip or [])
    n = len(order)
    start = order.index(start_at) if start_at in order else (-1 if step > 0 else n)
    for k in range(1, n + 1):
        candidate = order[(start + step * k) % n]
        if candidate not in left and candidate != start_at:
            return candidate
    return None


def reorder(items: Any, ordered: Any) -> list[Any]:
    """``items`` with the places held by the members of ``ordered`` refilled in the order of
    ``ordered``; the other items keep their places. E.g. a rule that orders only its own
    class of rules within the precedence: ``std.reorder(value, sorted(mine, key=...))``."""
    if not isinstance(items, list) or not isinstance(ordered, list):
        raise _fail("reorder", "needs two lists")
    members = set(ordered)
    if len(members) != len(ordered) or not members <= set(items):
        raise _fail("reorder", "ordered must list distinct members of items")
    queue = iter(ordered)
    return [next(queue) if item in members else item for item in items]


# --- votes and tallies ----------------------------------------------------------------


def vote_word(word: Any, words: Any) -> Any:
    """The canonical choice for a word of the ruleset (``{"sì": "for", ...}``; case and
    surrounding spaces do not matter), or None for a word the ruleset does not know."""
    if not isinstance(words, dict):
        raise _fail("vote_word", "words must map the ruleset's words to for/against/abstain")
    if not isinstance(word, str):
        return None
    key = word.strip().lower()
    for k, v in words.items():
        if str(k).strip().lower() == key:
            return v
    return None


def tally(votes: Any, weights: Any = None, voters: Any = None, default: Any = 1) -> dict[str, Any]:
    """Sum the votes of a proposal (``proposal["votes"]``) by choice.

    ``weights`` maps a player to the weight of their vote (``default`` for the others);
    ``voters``, if given, lists the players whose votes count. Returns
    ``{"for": w, "against": w, "abstain": w, "voters": n, "weight": total}`` (other choices
    a ruleset uses are summed under their own name)."""
    if not isinstance(votes, dict):
        raise _fail("tally", "votes must be a proposal's votes (player -> vote)")
    weights = weights or {}
    if not isinstance(weights, dict):
        raise _fail("tally", "weights must map players to numbers")
    counted = None if voters is None else set(voters)
    result: dict[str, Any] = {"for": 0, "against": 0, "abstain": 0, "voters": 0, "weight": 0}
    for player, vote in votes.items():
        if counted is not None and player not in counted:
            continue
        choice = vote.get("choice") if isinstance(vote, dict) else vote
        weight = weights.get(player, default)
        if not _is_number(weight):
            raise _fail("tally", f"the weight of {player!r} is not a number: {weight!r}")
        result[str(choice)] = result.get(str(choice), 0) + weight
        result["voters"] += 1
        result["weight"] += weight
    return result


def passes(counts: Any, ratio: Any = 0.5, strict: bool = True, quorum: Any = 0,
           abstain_counts: bool = False) -> bool:
    """Does a tally pass? ``for`` must exceed (``strict``) or reach ``ratio`` of the votes
    cast (for + against, plus abstain if ``abstain_counts``), and at least ``quorum``
    players must have voted."""
    if not isinstance(counts, dict) or not _is_number(ratio):
        raise _fail("passes", "needs a tally (from std.tally) and a number ratio")
    cast = counts.get("for", 0) + counts.get("against", 0)
    if abstain_counts:
        cast += counts.get("abstain", 0)
    if counts.get("voters", 0) < quorum:
        return False
    share = counts.get("for", 0)
    return share > ratio * cast if strict else share >= ratio * cast and cast > 0


# --- rule changes ---------------------------------------------------------------------


def changes(raw: Any) -> list[dict[str, Any]]:
    """Rule changes as ``{"type": ..., ...}`` whether written so or as ``{TYPE: {...}}``
    (a proposal's changes are the first, a rule's own arguments often the second);
    what is neither is left out."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        if "type" in item:
            out.append(item)
        elif len(item) == 1:
            ((kind, body),) = item.items()
            if isinstance(body, dict):
                out.append({**body, "type": kind})
    return out


def touched(raw: Any) -> list[str]:
    """The ids of the existing rules that these changes touch (an enactment without an id
    touches none)."""
    return [str(c["rule"]) for c in changes(raw) if c.get("rule") is not None]


def enact(text: Any, title: Any = "", code: Any = None, rule: Any = None,
          attributes: Any = None) -> dict[str, Any]:
    """A change that enacts a new rule."""
    _check_str("enact", "text", text)
    body: dict[str, Any] = {"type": "enact", "title": title, "text": text}
    if code is not None:
        body["code"] = code
    if rule is not None:
        body["rule"] = str(rule)
    if attributes is not None:
        body["attributes"] = attributes
    return body


def repeal(rule: Any) -> dict[str, Any]:
    """A change that repeals a rule."""
    return {"type": "repeal", "rule": _rule_id("repeal", rule)}


def amend(rule: Any, text: Any = None, title: Any = None, code: Any = None) -> dict[str, Any]:
    """A change that amends a rule's text (and title or code)."""
    body: dict[str, Any] = {"type": "amend", "rule": _rule_id("amend", rule)}
    for key, value in (("text", text), ("title", title), ("code", code)):
        if value is not None:
            _check_str("amend", key, value)
            body[key] = value
    return body


def _rule_id(name: str, rule: Any) -> str:
    if rule is None or isinstance(rule, bool | dict | list):
        raise _fail(name, f"rule must be a rule id, got {rule!r}")
    return str(rule)


def _check_str(name: str, key: str, value: Any) -> None:
    if not isinstance(value, str):
        raise _fail(name, f"{key} must be a string, got {value!r}")


# --- what a player may do now ---------------------------------------------------------


def arg(command: Any, name: Any, default: Any = None) -> Any:
    """The argument ``name`` of a command a check is asked about, or ``default`` while it
    is not chosen yet: checks are also asked with arguments unset (``command["probe"]``
    true), to find what a player may do before they fill in a form."""
    if not isinstance(command, dict) or not isinstance(name, str):
        raise _fail("arg", "needs the command a check is given and an argument's name")
    args = command.get("args")
    value = args.get(name) if isinstance(args, dict) else None
    return default if value is None else value


def letter_commands(command: Any, action: Any = None) -> list[dict[str, Any]]:
    """The commands of the letter ``command`` came in (``command["letter"]``), in the
    order written, each ``{"action", "args"}``; only those of ``action`` when given. A
    command that came alone (the API, a probe) is a letter of itself: ``[]`` is never
    returned for a real command, which is always one of its letter's commands."""
    if not isinstance(command, dict):
        raise _fail("letter_commands", "needs the command a check is given")
    if action is not None and not isinstance(action, str):
        raise _fail("letter_commands", f"action must be an action's name, got {action!r}")
    letter = command.get("letter")
    if isinstance(letter, dict) and isinstance(letter.get("commands"), list):
        items = [dict(c) for c in letter["commands"] if isinstance(c, dict)]
    else:
        items = [{"action": command.get("action"), "args": dict(command.get("args") or {})}]
    return [c for c in items if action is None or c.get("action") == action]


def due(action: Any, player: Any, until: Any = None, why: Any = "") -> dict[str, Any]:
    """A move ``player`` owes now, for a rule's ``due(game)`` hook: the action they must
    take, by ``until`` (an ISO time, e.g. a timer's ``at``, or None) and ``why`` (a
    sentence in the ruleset's language, shown to them)."""
    for key, value in (("action", action), ("player", player)):
        if not isinstance(value, str) or not value:
            raise _fail("due", f"{key} must be a name, got {value!r}")
    if until is not None and not isinstance(until, str):
        raise _fail("due", f"until must be an ISO time or None, got {until!r}")
    _check_str("due", "why", why)
    return {"action": action, "player": player, "until": until, "why": why}


# --- effects, checked where they are made ---------------------------------------------
# A constructor per effect of the kernel's table (kernel/effect_schema.py), made from its
# entry: the required fields positional, the rest by keyword; an optional field left None
# is left out, so the kernel's default applies. The table is the kernel's, not a std
# version's: the constructors build what the kernel of this Scriba accepts.


def _constructor(effect: Effect) -> Callable[..., dict[str, Any]]:
    positional = [f.name for f in effect.fields if not f.optional]
    # Optional fields may follow the required ones positionally too, in the table's order
    # (std.close_case(3, "withdrawn")), as the signature the reference shows says.
    in_order = [f.name for f in effect.fields]
    by_arg = {f.name: f for f in effect.fields} | {f.arg: f for f in effect.fields if f.arg}
    known = ", ".join(f.name for f in effect.fields)
    name = effect.name

    def make(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if len(args) > len(in_order):
            raise _fail(name, f"takes {len(in_order)} positional arguments "
                              f"({', '.join(in_order) or 'none'}), got {len(args)}")
        values = dict(zip(in_order, args, strict=False))
        for arg, value in kwargs.items():
            field = by_arg.get(arg)
            if field is None and (not effect.open or arg == "effect"):
                raise _fail(name, f"unknown argument {arg!r} (known: {known})")
            key = field.name if field else arg
            if key in values:
                raise _fail(name, f"{key} given twice")
            values[key] = value
        for key in positional:
            if key not in values:
                raise _fail(name, f"missing {key}")
        values = {k: v for k, v in values.items()
                  if v is not None or k in positional or k not in by_arg}
        for key, value in values.items():
            problem = by_arg[key].problem(value) if key in by_arg else None
            if problem is None and key in by_arg and by_arg[key].type == "outcome" \
                    and value not in OUTCOMES:
                problem = f"{key} must be one of {', '.join(OUTCOMES)}, got {value!r}"
            if problem:
                raise _fail(name, problem)
        return {"effect": name, **values}

    make.__name__ = name
    return make


EFFECT_CONSTRUCTORS: dict[str, Callable[..., dict[str, Any]]] = {
    alias: _constructor(effect) for effect in EFFECTS.values()
    for alias in (effect.name, *effect.std_names)}


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "find": find, "replace": replace, "next_player": next_player, "reorder": reorder,
    "next_in_order": next_in_order, "before_in_order": before_in_order,
    "vote_word": vote_word,
    "tally": tally, "passes": passes, "changes": changes, "touched": touched,
    "enact": enact, "repeal": repeal, "amend": amend, "arg": arg, "due": due,
    "letter_commands": letter_commands,
    **EFFECT_CONSTRUCTORS,
}
CONSTANTS: dict[str, Any] = {"VERSION": VERSION, "OUTCOMES": list(OUTCOMES),
                             "REASONS": list(REASONS), "CHOICES": list(CHOICES)}

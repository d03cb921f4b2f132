"""What a player may do now: the actions the rules in force would let them take, the
values open for each parameter, and the moves a rule says they owe.

A probe, not a decision: nothing is applied and no event is made. For each declared
action whose ``who`` admits the actor, the rules' ``check`` hooks are asked with the
arguments unset (``command["probe"]`` is true, ``command["args"]`` holds only what is
chosen so far) and once per candidate value of each parameter that can be listed (an
open proposal, an active player, an existing asset of the kind an ``asset:KIND``
parameter names, a vote's choice) with that one argument set. A refusal removes the
candidate, or the action when asked with nothing set; a check that fails while probing
refuses nothing (the real command is checked in full when it is sent). An action whose
required listed parameter has no candidate left is not offered. The rules' ``due``
hooks say which moves are owed, by whom and by when. It is asked of the rule host in two
requests at most (:meth:`~scriba.kernel.host.RuleHost.call_many`): the actions with
nothing set and the moves owed, then the candidates of the actions not refused (those of
an action refused outright would change nothing; they were 12–30 % of the calls in four of
the bundled rulesets).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scriba.kernel.checking import CANONICAL_CHOICES, KIND_PARAMS, check_actor
from scriba.kernel.declarations import ASSET_TYPE
from scriba.kernel.errors import Refused
from scriba.kernel.host import HookResult
from scriba.kernel.state import GameState, natural_key
from scriba.kernel.view import build_view

if TYPE_CHECKING:
    from scriba.kernel.reactions import Run

# A parameter with more candidates than this is left to free input: probing each would
# make a page view cost what the game's history weighs.
MAX_CANDIDATES = 60


@dataclass
class Availability:
    """An action ``actor`` may take now. ``options``: per listed parameter, the values
    open to them, in order (a parameter not there is free input). ``due``: a rule says
    they owe it, by ``deadline`` (ISO, or None), for ``reason`` (the rule's sentence)."""

    action: str
    options: dict[str, list[Any]] = field(default_factory=dict)
    due: bool = False
    deadline: str | None = None
    reason: str = ""


@dataclass
class _Probe:
    action: str
    param: str | None = None  # None: asked with nothing set
    value: Any = None


def candidates(state: GameState, action: dict[str, Any], param: str,
               type_: str, actor: str | None = None) -> list[Any] | None:
    """The values a listed parameter may take, as the kernel's checks know them, or None
    for a parameter of free input."""
    kind = action.get("kind", "plain")
    if kind == "vote" and param == "choice":
        return choice_meanings(action)
    if kind == "judge" and param == "judgment":
        # The ruleset's words, one per meaning; without choices a judgment is free text.
        first: dict[str, str] = {}
        for word, meaning in (action.get("choices") or {}).items():
            first.setdefault(str(meaning), str(word))
        return list(first.values()) or None
    if type_ == "case":
        found = [case["number"] for case in state.cases.values()
                 if _case_open_to(case, kind, param, actor)]
    elif type_ == "rule":  # the rules in force; one repealed is typed by its id
        found = sorted((r["id"] for r in state.rules_in_force()), key=natural_key)
    elif type_ == "player":
        found: list[Any] = state.active_players()
    elif type_.startswith(ASSET_TYPE):
        found = sorted(state.assets.get(type_[len(ASSET_TYPE):], {}), key=natural_key)
    elif type_ == "proposal":
        # The open ones: a vote is only on an open proposal (check_args), and the other
        # actions about a proposal (withdraw, veto, distribute, call a vote...) are about
        # one still being decided; the rules' checks narrow them down. Offering every
        # proposal ever made would make a page view cost what the game's history weighs.
        found = [state.proposals[str(n)]["number"] for n in state.open_proposals()]
    else:
        return None
    return found if len(found) <= MAX_CANDIDATES else None


def _case_open_to(case: dict[str, Any], kind: str, param: str, actor: str | None) -> bool:
    """Whether a case is a candidate for a case parameter: the kernel's own refusals
    (kernel/checking.py) for a judgment and an appeal, the cases not closed otherwise."""
    if kind == "judge" and param == "case":
        return case["status"] == "open" and case["judge"] in (None, actor)
    if kind == "appeal" and param == "case":
        return case["status"] == "judged"
    return case["status"] != "closed"


def choice_meanings(action: dict[str, Any]) -> list[str]:
    """A vote's choices, one per meaning (the canonical value the ruleset's words stand
    for), in the order the ruleset declares them; all the canonical ones if it declares
    none."""
    declared = [str(v) for v in (action.get("choices") or {}).values()]
    return list(dict.fromkeys(declared)) or list(CANONICAL_CHOICES)


def available(run: Run, actor: str | None, now: str) -> list[Availability]:
    """The actions ``actor`` may take now, those owed first (see the module)."""
    state = run.state
    if state.ended:
        return []
    decl = run.rules.declarations(state)
    found: dict[str, Availability] = {}
    listed: dict[tuple[str, str], list[Any]] = {}
    required: dict[str, list[str]] = {}
    probes: list[_Probe] = []
    for name, action in decl.actions.items():
        try:
            check_actor(state, actor, name, action)
        except Refused:
            continue
        found[name] = Availability(name)
        params = {**KIND_PARAMS.get(action.get("kind", "plain"), {}),
                  **(action.get("params") or {})}
        probes.append(_Probe(name))
        for param, type_ in params.items():
            values = candidates(state, action, param, str(type_).rstrip("?"), actor)
            if values is None:
                continue
            listed[(name, param)] = values
            if not str(type_).endswith("?"):
                required.setdefault(name, []).append(param)
            probes += [_Probe(name, param, value) for value in values]
    if not found:
        return []
    view = functools.cache(lambda: build_view(state, run.precedence(), now=now))  # once
    refused, owed = _ask(run, state, actor, [p for p in probes if p.param is None],
                         decl.actions, view, due=True)
    rest = [p for p in probes if p.param is not None and (p.action, None, None) not in refused]
    if rest:
        refused |= _ask(run, state, actor, rest, decl.actions, view, due=False)[0]
    out = []
    for name, availability in found.items():
        if (name, None, None) in refused:
            continue
        for (action, param), values in listed.items():
            if action == name:
                availability.options[param] = [
                    v for v in values if (name, param, _key(v)) not in refused]
        if any(not availability.options[p] for p in required.get(name, [])):
            continue
        if name in owed:
            availability.due = True
            availability.deadline, availability.reason = owed[name]
        out.append(availability)
    # Owed moves first, soonest deadline first; the rest in the rules' order.
    return sorted(out, key=lambda a: (not a.due, a.deadline or "~"))


def _key(value: Any) -> str:
    return str(value)


def _ask(run: Run, state: GameState, actor: str | None, probes: list[_Probe],
         actions: dict[str, dict[str, Any]], view: Callable[[], Any], due: bool
         ) -> tuple[set[tuple[str, str | None, str | None]], dict[str, tuple[str | None, str]]]:
    """The probes the rules refuse, and (``due``) the moves they say ``actor`` owes
    (action -> (deadline, reason)): one request to the rule host, about ``view()``."""
    calls: list[tuple[list[str], str, Any, list[Any]]] = []
    asked: list[_Probe] = []
    for probe in probes:
        args = {} if probe.param is None else {probe.param: probe.value}
        request = {"actor": actor, "action": probe.action, "probe": True,
                   "kind": actions[probe.action].get("kind", "plain"), "args": args}
        targets = run.checking(request)
        if not targets:
            continue
        calls.append((targets, "check", view(), [request]))
        asked.append(probe)
    due_rules = run.rules.hooked(state, "due") if due else []
    if due_rules:
        calls.append((due_rules, "due", view(), []))
    if not calls:
        return set(), {}
    answers = run.engine.host.call_many(run.rules.coded_rules(state), calls)
    if answers is None:  # the request failed as a whole: nothing is refused for it
        answers = [[] for _ in calls]
        if due_rules:
            answers[-1] = run.call(due_rules, "due", view(), [])
    refused = {(p.action, p.param, None if p.param is None else _key(p.value))
               for p, results in zip(asked, answers, strict=False)
               if any(r.error is None and r.value for r in results)}
    owed = _owed(answers[-1], actor, actions) if due_rules else {}
    return refused, owed


def _owed(results: list[HookResult], actor: str | None,
          actions: dict[str, dict[str, Any]]) -> dict[str, tuple[str | None, str]]:
    """Action -> (deadline, reason) of the moves ``actor`` owes, from the ``due`` hooks'
    answers (lists of ``std.due(...)``); the first rule to name an action wins."""
    owed: dict[str, tuple[str | None, str]] = {}
    for result in results:
        items = result.value if result.error is None else None
        if isinstance(items, dict):
            items = [items]
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or item.get("player") != actor:
                continue
            action = item.get("action")
            if isinstance(action, str) and action in actions and action not in owed:
                until = item.get("until")
                owed[action] = (until if isinstance(until, str) and until else None,
                                str(item.get("why") or ""))
    return owed

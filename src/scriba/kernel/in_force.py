"""The rules in force: their code's hooks and declarations, and the order they are asked in.

Everything here is derived from the rules alone, so it is computed once per version of
the rules (:func:`scriba.kernel.state.rules_version`, new on every rule change) and
cached, instead of recomputed — or fingerprinted — on every call.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from scriba.kernel import registry
from scriba.kernel.caches import keep
from scriba.kernel.declarations import Declarations, declaration_error
from scriba.kernel.events import Event, make_event
from scriba.kernel.host import CodeInfo, RuleHost, RuleRef
from scriba.kernel.state import GameState, natural_key, rules_version
from scriba.kernel.view import build_view

_CACHED_VERSIONS = 64


class RulesInForce:
    def __init__(self, host: RuleHost) -> None:
        self.host = host
        self._infos: dict[str, CodeInfo] = {}
        self._by_version: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def info(self, code: str) -> CodeInfo:
        """What a piece of code defines; cached by the code itself (strings cache their
        hash). Malformed declarations make the code as unusable as a syntax error."""
        info = self._infos.get(code)
        if info is None:
            info = self.host.inspect(code)
            if info.error is None:
                problem = declaration_error(info.declarations)
                if problem:
                    info = CodeInfo(error=problem)
            if info.transient:
                return info
            if len(self._infos) > 4096:
                self._infos.clear()
            self._infos[code] = info
        return info

    def _cache(self, state: GameState) -> dict[str, Any]:
        version = rules_version(state)
        cache = self._by_version.get(version)
        if cache is None or cache.get("transient"):  # computed while a worker failed
            cache = keep(self._by_version, version, {}, _CACHED_VERSIONS)
        return cache

    def coded_rules(self, state: GameState, aborts: list[Event] | None = None) -> list[RuleRef]:
        """Rules in force that have code, in precedence order."""
        cache = self._cache(state)
        if "coded" not in cache:
            cache["coded"] = [(rid, state.rules[rid]["code"])
                              for rid in self.precedence(state, aborts)
                              if state.rules[rid]["code"]]
        return cache["coded"]

    def _code_info(self, cache: dict[str, Any], code: str) -> CodeInfo:
        info = self.info(code)
        if info.transient:
            cache["transient"] = True
        return info

    def hooked(self, state: GameState, hook: str) -> list[str]:
        """Ids of the rules in force whose code defines ``hook``, in precedence order."""
        cache = self._cache(state)
        hooks = cache.setdefault("hooks", {})
        if hook not in hooks:
            hooks[hook] = [rid for rid, code in self.coded_rules(state)
                           if hook in self._code_info(cache, code).hooks]
        return hooks[hook]

    def precedence(self, state: GameState, aborts: list[Event] | None = None) -> list[str]:
        """Rule ids in force, in the order rules are asked; itself decided by rules.
        A ``transform_rule_order`` that aborts is recorded in ``aborts`` when given."""
        cache = self._cache(state)
        if "order" not in cache:
            in_force = sorted((r["id"] for r in state.rules_in_force()), key=natural_key)
            deciders = [(rid, state.rules[rid]["code"]) for rid in in_force
                        if state.rules[rid]["code"] and
                        "transform_rule_order" in
                        self._code_info(cache, state.rules[rid]["code"]).hooks]
            order = in_force
            if deciders:
                view = build_view(state, in_force)
                value, failed = self.host.transform(deciders, "rule_order", view, in_force, {})
                if aborts is not None:
                    aborts += [aborted(r.rule_id, "transform_rule_order", r.error, state.time)
                               for r in failed if r.error]
                if isinstance(value, list) and sorted(map(str, value)) == sorted(in_force):
                    order = [str(v) for v in value]
            cache["order"] = order
        return cache["order"]

    def declarations(self, state: GameState) -> Declarations:
        cache = self._cache(state)
        if "declarations" not in cache:
            cache["declarations"] = self._declarations(state, cache)
        return cache["declarations"]

    def _declarations(self, state: GameState, cache: dict[str, Any]) -> Declarations:
        actions: dict[str, dict[str, Any]] = {}
        variables: dict[tuple[str, str], dict[str, Any]] = {}
        offices: dict[str, dict[str, Any]] = {}
        reacts: dict[str, dict[str, dict[str, list[Any]]]] = {}
        for rule_id, code in self.coded_rules(state):
            info = self._code_info(cache, code)
            if info.error:  # enacted by a rule's own change_rules: it declares nothing
                continue
            declared = info.declarations
            for action in declared.get("actions") or []:
                actions.setdefault(action["name"], {**action, "rule": rule_id})
            for variable in declared.get("variables") or []:
                key = (variable.get("scope", "player"), variable["name"])
                variables.setdefault(key, {**variable, "rule": rule_id})
            for office in declared.get("offices") or []:
                office = office if isinstance(office, dict) else {"name": office}
                offices.setdefault(office["name"], {**office, "rule": rule_id})
            if declared.get("reacts_to"):
                reacts[rule_id] = declared["reacts_to"]
        return Declarations(actions, variables, offices, reacts)

    def reacting(self, state: GameState, event: Event) -> list[str]:
        """Ids of the rules in force asked about ``event``: those with its ``on_`` hook,
        less those whose ``reacts_to()`` leaves it out, in precedence order."""
        targets = self.hooked(state, f"on_{event['type']}")
        reacts = self.declarations(state).reacts if targets else {}
        if not reacts:
            return targets
        return [rid for rid in targets if registry.reacts(reacts.get(rid), event)]


def aborted(rule_id: str, hook: str, reason: str | None, time: str) -> Event:
    """The record of a rule's call that was stopped: the game goes on without it."""
    return make_event("rule_code_aborted", time, None, rule=rule_id, hook=hook, reason=reason)

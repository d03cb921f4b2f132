"""Precedents: the judgments that interpret a rule, for the rule's page and its history.

A judgment names the rules it interprets, each at its revision then (the kernel stamps
it). A rule's precedents are every judgment naming it — a case's judgment now and the
earlier ones it superseded (overruled, appealed, reopened), of cases open or closed —
newest first. Each says whether the rule has been revised since, so a reader knows which
holdings were about the text in force now. Each record's fields: :func:`precedent`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from scriba.kernel.changes import revision
from scriba.kernel.state import GameState

Precedent = dict[str, Any]


def _label(case: dict[str, Any]) -> str:
    """How the game names the case: its own label (an imported case cited otherwise) or
    its number."""
    label = (case.get("data") or {}).get("label")
    return str(label) if label else str(case["number"])


def precedent(case: dict[str, Any], judgment: dict[str, Any], rule: dict[str, Any],
              named: int | None, superseded: str | None) -> Precedent:
    """One judgment about ``rule`` as the pages show it.

    case, label, question, status: the case; judgment (the ruleset's word, None when the
    record keeps only the holding), reasons, by, at, date: the judgment; revision: the
    rule's revision it names (None: unknown), revision_now, changed_since, rule_in_force:
    the rule since; current: the case's judgment now (else an earlier one, superseded
    for the reason given)."""
    now = revision(rule)
    at = judgment.get("at")
    return {
        "case": case["number"], "label": _label(case), "question": case.get("question", ""),
        "status": case.get("status"),
        "judgment": judgment.get("judgment"), "reasons": judgment.get("reasons"),
        "by": judgment.get("by"), "at": at, "date": at[:10] if at else None,
        "revision": named, "revision_now": now,
        "changed_since": named is not None and named != now,
        "rule_in_force": bool(rule.get("in_force", True)),
        "current": superseded is None, "superseded": superseded,
    }


def _judgments(case: dict[str, Any]) -> list[tuple[dict[str, Any], str | None]]:
    """The case's judgments: each earlier one with why it went, then the one now."""
    found: list[tuple[dict[str, Any], str | None]] = [
        (earlier, str(earlier.get("superseded") or "superseded"))
        for earlier in case.get("earlier") or [] if isinstance(earlier, dict)]
    if isinstance(case.get("judgment"), dict):
        found.append((case["judgment"], None))
    return found


def _newest_first(item: Precedent) -> tuple[str, int, bool]:
    return (item["at"] or "", item["case"], item["current"])


def precedents_by_rule(state: GameState) -> dict[str, list[Precedent]]:
    """Every rule's precedents (rule id -> list, newest first), in one pass over the docket."""
    found: dict[str, list[Precedent]] = defaultdict(list)
    for case in state.cases.values():
        for judgment, superseded in _judgments(case):
            for named in judgment.get("rules") or []:
                rule = state.rules.get(str(named.get("rule")))
                if rule is not None:
                    found[rule["id"]].append(precedent(case, judgment, rule,
                                                       named.get("revision"), superseded))
    return {rule_id: sorted(items, key=_newest_first, reverse=True)
            for rule_id, items in found.items()}


def precedents(state: GameState, rule_id: str) -> list[Precedent]:
    """The judgments naming rule ``rule_id`` (in force or not), newest first; [] if none."""
    rule = state.rules.get(str(rule_id))
    if rule is None:
        return []
    found = [precedent(case, judgment, rule, named.get("revision"), superseded)
             for case in state.cases.values()
             for judgment, superseded in _judgments(case)
             for named in judgment.get("rules") or []
             if str(named.get("rule")) == rule["id"]]
    return sorted(found, key=_newest_first, reverse=True)

"""Render a game's current rules as Agora's Full or Short Logical Ruleset.

The rules imported from an FLR carry their history as parsed; every change the game
made since (an adopted proposal, a decree, ...) is an entry the kernel wrote, with its
cause, and is turned here into the structured history entry the FLR renderer prints:
an amendment gets the next revision number, a power change its old and new power, a
proposal its number, title, author and coauthors. The header's date is the game's
date; its highest proposal and rule numbers include what the game has added.
"""

from __future__ import annotations

import copy
from typing import Any

from scriba.agora.flr import (
    SETTINGS_KEY,
    Rule,
    Ruleset,
    render_flr,
    render_slr,
    ruleset_from_parts,
)
from scriba.agora.flr.cases import annotations_by_rule
from scriba.kernel.changes import REVISING
from scriba.kernel.state import GameState

DEFAULT_POWER = "1"  # Rule 105: an enacted rule's power defaults to one
NEW_CATEGORY = "Uncategorized"


def written_by_kernel(entry: dict[str, Any]) -> bool:
    """Entries the kernel appended carry the instant ("at") of the change; imported don't."""
    return "at" in entry


def _cause(cause: dict[str, Any] | None, state: GameState) -> dict[str, Any] | None:
    if not cause or cause.get("kind") == "initial":
        return None
    kind = cause["kind"]
    if kind == "proposal":
        proposal = state.proposals.get(str(cause.get("proposal")), {})
        coauthors = (proposal.get("data") or {}).get("coauthors") or []
        return {"kind": "proposal", "proposal": str(cause.get("label") or cause["proposal"]),
                "title": cause.get("title") or None, "tags": [],
                "authors": [cause["author"], *coauthors] if cause.get("author") else []}
    if kind == "rule":
        return {"kind": "rule", "rule": str(cause["rule"]), "authors": []}
    return {"kind": kind, "authors": list(cause.get("authors") or [])}


def _entry(entry: dict[str, Any], revision: int | None, state: GameState) -> dict[str, Any]:
    """A kernel history entry as an FLR history entry (empty: no FLR wording for it)."""
    change, detail = entry["change"], entry.get("detail") or {}
    flr: dict[str, Any] = {"change": change, "revision": None, "detail": {},
                           "cause": _cause(entry.get("cause"), state), "date": entry["date"],
                           "date_circa": False, "date_until": None}
    if change in ("amend", "amend_paragraph"):
        flr.update(change="amend", revision=revision)
    elif change == "reenact":
        flr.update(revision=revision, detail={"amended": bool(detail.get("text"))})
    elif change == "retitle":
        flr["detail"] = {"from": detail.get("from"), "to": detail.get("to")}
    elif change in ("transmute", "set_attribute"):
        if "power" not in (detail.get("to") or {}):
            return {}
        flr.update(change="power", detail={"from": str(detail["from"].get("power")),
                                           "to": str(detail["to"]["power"])})
    elif change not in ("enact", "repeal", "renumber"):
        return {}
    return flr


def flr_rule(rule: dict[str, Any], state: GameState,
             annotations: list[dict[str, Any]] | None = None) -> Rule:
    """A game rule in the FLR renderer's format, with the game's own changes added and
    ``annotations`` (from the game's cases) under it."""
    attributes = copy.deepcopy(rule["attributes"])
    revision = int(attributes.get("revision", 0))
    history = []
    for entry in rule["history"]:
        if not written_by_kernel(entry):
            history.append(entry)
            continue
        if entry["change"] in REVISING:
            revision += 1
        converted = _entry(entry, revision, state)
        if converted:
            history.append(converted)
    attributes.pop("annotations", None)  # games imported before annotations were cases
    if annotations is None:
        annotations = copy.deepcopy(rule["attributes"].get("annotations") or [])
    attributes.update(revision=revision,
                      power=str(attributes.get("power", DEFAULT_POWER)),
                      category=attributes.get("category") or NEW_CATEGORY)
    return {"id": rule["id"], "title": rule["title"], "text": rule["text"], "code": None,
            "attributes": attributes, "history": history, "annotations": annotations}


def _highest(values: list[Any]) -> str:
    numbers = [int(v) for v in values if str(v).isdigit()]
    return str(max(numbers)) if numbers else ""


def game_ruleset(state: GameState) -> Ruleset:
    """The game's current rules, arranged as the imported FLR was."""
    meta = copy.deepcopy(state.settings.get(SETTINGS_KEY) or
                         {"kind": "flr", "header": {"notes": []}, "categories": []})
    kept = annotations_by_rule(state.cases.values())
    # A game imported before annotations became cases keeps them in the rules' attributes.
    rules = [flr_rule(rule, state, kept.get(rule["id"], []) if kept else None)
             for rule in state.rules_in_force()]
    ruleset = ruleset_from_parts(meta, rules)
    header = ruleset.header
    if state.time:
        header["date"] = state.time[:10]
    adopted = [p["number"] for p in state.proposals.values() if p["status"] == "adopted"]
    header["highest_proposal"] = _highest([header.get("highest_proposal"), *adopted])
    header["highest_rule_enacted"] = _highest([
        header.get("highest_rule_enacted"), state.vars.get("highest_rule_enacted"),
        *(r["id"] for r in rules)])
    return ruleset


def export_text(state: GameState, kind: str = "flr") -> str:
    """The game's ruleset as an FLR ("flr") or SLR ("slr") text."""
    if kind not in ("flr", "slr"):
        raise ValueError(f"unknown ruleset format {kind!r}: flr or slr")
    ruleset = game_ruleset(state)
    return render_flr(ruleset) if kind == "flr" else render_slr(ruleset)

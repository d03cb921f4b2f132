"""Agora's published rulesets and the service: a game made from a Full Logical Ruleset
(FLR), a game's rules written back as an FLR or SLR. The format itself is
:mod:`scriba.agora.flr`; the CLI's ``import flr`` and ``export flr|slr`` come here.

Every rule of the FLR becomes a rule of the game: id, title, text, its full structured
history, and as attributes its power, category and printed revision. Each CFJ annotation
under a rule becomes a closed case of the game, a precedent naming the rule
(:mod:`scriba.agora.flr.cases`); the export writes the annotations back from the cases.
Where the bundled `agora` ruleset has code for a rule with the same id, the code is
attached: the imported text governs, the code enforces. The FLR's header and
categories are kept in the game's settings (``settings["flr"]``) so that the game's
current rules can be rendered back in Agora's format (:mod:`scriba.agora.flr.exporter`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from scriba.agora.flr import (
    SETTINGS_KEY,
    Progress,
    Rule,
    Ruleset,
    parse_flr,
    ruleset_meta,
)
from scriba.agora.flr.cases import annotation_cases
from scriba.agora.flr.exporter import export_text
from scriba.agora.flr.measure import strip_raw
from scriba.agora.flr.roundtrip import compare, summary
from scriba.kernel.state import GameState
from scriba.rulesets import load_ruleset
from scriba.service.commands import Commands

RULESET = "agora"
__all__ = ["ImportResult", "export_game", "import_flr", "roundtrip"]


@dataclass
class ImportResult:
    state: GameState
    ruleset: Ruleset
    coded: list[str] = field(default_factory=list)  # imported rules that got bundled code
    code_without_rule: list[str] = field(default_factory=list)  # bundled code, no such rule
    text_differs: list[str] = field(default_factory=list)  # coded rules whose text differs


def kernel_rule(rule: Rule, code: str | None) -> dict[str, Any]:
    """An FLR rule in the kernel's rule format (its annotations become cases)."""
    return {
        "id": rule["id"],
        "title": rule["title"],
        "text": rule["text"],
        "code": code,
        "attributes": dict(rule["attributes"]),
        "history": copy.deepcopy(rule["history"]),
    }


def game_settings(ruleset: Ruleset) -> dict[str, Any]:
    header = ruleset.header
    settings: dict[str, Any] = {SETTINGS_KEY: ruleset_meta(ruleset)}
    if str(header.get("highest_proposal", "")).isdigit():
        settings["first_proposal"] = int(header["highest_proposal"]) + 1
    if str(header.get("highest_rule_enacted", "")).isdigit():
        settings["highest_rule_enacted"] = int(header["highest_rule_enacted"])
    return settings


def import_flr(commands: Commands, text: str, game_id: str | None = None,
               progress: Progress | None = None,
               offices: dict[str, str] | None = None) -> ImportResult:
    """Parse an FLR and create the game; `progress(done, total)` is called per rule."""
    parsed = parse_flr(text, progress)
    # Only what was structured is stored: the export renders from the fields, and lines
    # that could not be structured keep their verbatim text.
    stored = strip_raw(parsed)
    bundled = load_ruleset(RULESET)
    codes = {rule["id"]: rule for rule in bundled.rules if rule.get("code")}
    ordered = stored.ordered_rules()
    rules = [kernel_rule(rule, (codes.get(rule["id"]) or {}).get("code")) for rule in ordered]
    date = parsed.header.get("date")
    state = commands.create_game(
        bundled, game_id=game_id, players=[], offices=offices or {},
        start=f"{date}T00:00:00Z" if date else None, rules=rules,
        settings=game_settings(parsed), cases=annotation_cases(ordered))
    return ImportResult(
        state=state,
        ruleset=parsed,
        coded=[r["id"] for r in rules if r["code"]],
        code_without_rule=sorted(set(codes) - set(parsed.rules), key=int),
        text_differs=[rule_id for rule_id in codes if rule_id in parsed.rules
                      and parsed.rules[rule_id]["text"] != codes[rule_id]["text"]],
    )


def export_game(commands: Commands, game_id: str, kind: str = "flr") -> str:
    """The game's current rules as an FLR ("flr") or SLR ("slr") text."""
    return export_text(commands.load(game_id), kind)


def roundtrip(text: str, exported: str) -> str:
    """How an exported text differs from the FLR it was imported from, in a few lines."""
    return summary(compare(text, exported))

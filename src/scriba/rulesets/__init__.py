"""Bundled rulesets: each a folder of rule texts (.md) and rule code (.star).

``rulesets/<id>/ruleset.toml`` names the ruleset, its language, the seed it comes from
and its settings, gives its variables and offices their labels (``[labels.variables]``,
``[labels.offices]``) and says how the game is read (every key optional; a ruleset that
declares nothing shows no period and no score):

- ``[vocabulary]`` ``period``: game variables that count the game's periods, the first
  the game has wins (``["day"]`` → "Giornata 3" from the label and the value);
  ``score``: the player variables that are the score (``["points"]``), shown first on the
  game's page, in the status and at the end of each period's report.
- ``[display.variables]``: how a variable's value is shown — ``"number"``, ``"player"``,
  ``"players"`` (a list of names), ``"proposal"`` (its label), ``"date"`` (an ISO time),
  ``"flag"`` (true/false), ``"text"``, or ``{kind = "money", unit = "N"}``; a variable
  without one is shown as it is.

The service reads these through :class:`Ruleset` and nowhere guesses a ruleset's words;
a game created with a ``vocabulary`` or ``display`` setting uses that instead.

``rules/<n>.md`` holds a rule's original text under a small YAML front
matter (id, title, attributes, optional history); ``rules/<n>.star`` its code, if any;
``initial.yaml`` (optional) an initial state for games that start in progress: players
with their variables, game variables, offices and earlier proposals.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from scriba.kernel.state import natural_key
from scriba.rulecode.std import CURRENT as STD_CURRENT

BUNDLED = Path(str(resources.files("scriba.rulesets")))


class RulesetError(Exception):
    pass


@dataclass
class Ruleset:
    id: str
    name: str
    language: str
    source: str
    settings: dict[str, Any]
    rules: list[dict[str, Any]]
    initial: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, Any] = field(default_factory=dict)
    vocabulary: dict[str, list[str]] = field(default_factory=dict)  # period, score
    display: dict[str, dict[str, str]] = field(default_factory=dict)  # variable → kind
    path: Path | None = None

    def game_payload(self, game_id: str, name: str, seed: int, clock: str,
                     settings: dict[str, Any] | None = None) -> dict[str, Any]:
        return {
            "game_id": game_id, "name": name, "ruleset": self.id, "language": self.language,
            "seed": seed, "clock": clock,
            # the std version the game keeps for its whole life (rulecode/std)
            "settings": {"std": STD_CURRENT, **self.settings, **(settings or {})},
            "rules": self.rules, "proposals": self.initial.get("proposals", []),
        }


def list_rulesets() -> list[Ruleset]:
    return [load_ruleset(p.name) for p in sorted(BUNDLED.iterdir())
            if (p / "ruleset.toml").is_file()]


def load_ruleset(ruleset_id: str, root: Path | None = None) -> Ruleset:
    path = (root or BUNDLED) / ruleset_id
    manifest = path / "ruleset.toml"
    if not manifest.is_file():
        known = ", ".join(r.id for r in list_rulesets())
        raise RulesetError(f"no ruleset {ruleset_id!r} (bundled: {known})")
    meta = tomllib.loads(manifest.read_text(encoding="utf-8"))
    rules = [_load_rule(md) for md in (path / "rules").glob("*.md")]
    rules.sort(key=lambda r: natural_key(r["id"]))
    initial_file = path / "initial.yaml"
    initial = yaml.safe_load(initial_file.read_text(encoding="utf-8")) if initial_file.is_file() \
        else {}
    return Ruleset(id=meta.get("id", ruleset_id), name=meta.get("name", ruleset_id),
                   language=meta.get("language", "en"), source=meta.get("source", ""),
                   settings=meta.get("settings", {}), rules=rules, initial=initial or {},
                   labels=meta.get("labels", {}), vocabulary=vocabulary(meta.get("vocabulary")),
                   display=display(meta.get("display")), path=path)


VOCABULARY_KEYS = ("period", "score")
DISPLAY_KINDS = ("number", "money", "player", "players", "proposal", "date", "flag", "text")


def vocabulary(table: Any) -> dict[str, list[str]]:
    """``[vocabulary]`` checked: each key a list of variable names."""
    table = table or {}
    if not isinstance(table, dict) or set(table) - set(VOCABULARY_KEYS):
        raise RulesetError(f"[vocabulary] takes only {', '.join(VOCABULARY_KEYS)}")
    out = {}
    for key, names in table.items():
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise RulesetError(f"[vocabulary] {key} must be a list of variable names")
        out[key] = list(names)
    return out


def display(table: Any) -> dict[str, dict[str, str]]:
    """``[display.variables]`` checked: variable → ``{"kind": …}`` (``"unit"`` for money)."""
    table = table or {}
    variables = table.get("variables", {}) if isinstance(table, dict) else None
    if not isinstance(variables, dict) or set(table) - {"variables"}:
        raise RulesetError("[display] takes only a table [display.variables]")
    out = {}
    for name, kind in variables.items():
        shown = {"kind": kind} if isinstance(kind, str) else kind
        if not isinstance(shown, dict) or shown.get("kind") not in DISPLAY_KINDS \
                or set(shown) - {"kind", "unit"} \
                or (shown["kind"] == "money") != isinstance(shown.get("unit"), str):
            raise RulesetError(f"[display.variables] {name}: one of "
                               f"{', '.join(DISPLAY_KINDS)}; money with its unit")
        out[str(name)] = {str(k): str(v) for k, v in shown.items()}
    return out


def _load_rule(md: Path) -> dict[str, Any]:
    text = md.read_text(encoding="utf-8")
    front: dict[str, Any] = {}
    if text.startswith("---\n"):
        head, _, text = text[4:].partition("\n---\n")
        front = yaml.safe_load(head) or {}
    code_file = md.with_suffix(".star")
    rule = {
        "id": str(front.get("id", md.stem)),
        "title": front.get("title", ""),
        "text": text.strip("\n"),
        "code": code_file.read_text(encoding="utf-8") if code_file.is_file() else None,
        "attributes": front.get("attributes", {}) or {},
    }
    if front.get("history"):
        rule["history"] = front["history"]
    if front.get("in_force") is False:
        rule["in_force"] = False
    return rule

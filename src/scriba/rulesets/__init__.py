"""Bundled rulesets: each a folder of rule texts (.md) and rule code (.star).

``rulesets/<id>/ruleset.toml`` names the ruleset, its language, the seed it comes from
and its settings, gives its variables and offices their labels (``[labels.variables]``,
``[labels.offices]``) and its actions and their parameters theirs (``[labels.actions.<name>]``,
see :func:`action_labels`), and says how the game is read (every key optional; a ruleset
that declares nothing shows no period and no score):

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

import functools
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from scriba.kernel.state import natural_key
from scriba.rulecode.std import CURRENT as STD_CURRENT

BUNDLED = Path(str(resources.files("scriba.rulesets")))
# libyaml's loader reads the same YAML as PyYAML's SafeLoader, ten times faster (a ruleset's
# front matter and initial state are read at every new game); PyYAML's own if it is absent.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(text: str) -> Any:
    """YAML as :func:`yaml.safe_load` reads it (:data:`SAFE_LOADER`)."""
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader


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


def _bundled_folders() -> list[Path]:
    return [p for p in sorted(BUNDLED.iterdir()) if (p / "ruleset.toml").is_file()]


def list_rulesets() -> list[Ruleset]:
    return [load_ruleset(p.name) for p in _bundled_folders()]


def bundled_rulesets() -> list[dict[str, str]]:
    """The bundled rulesets' ``id``, ``name`` and ``language``, from their manifests alone
    (a new game's form lists them; their rules need not be read for that)."""
    return [dict(entry) for entry in _manifests()]


@functools.cache
def _manifests() -> tuple[dict[str, str], ...]:
    found = []
    for folder in _bundled_folders():
        meta = tomllib.loads((folder / "ruleset.toml").read_text(encoding="utf-8"))
        found.append({"id": meta.get("id", folder.name), "name": meta.get("name", folder.name),
                      "language": meta.get("language", "en")})
    return tuple(found)


def load_ruleset(ruleset_id: str, root: Path | None = None) -> Ruleset:
    path = (root or BUNDLED) / ruleset_id
    manifest = path / "ruleset.toml"
    if not manifest.is_file():
        known = ", ".join(r["id"] for r in bundled_rulesets())
        raise RulesetError(f"no ruleset {ruleset_id!r} (bundled: {known})")
    meta = tomllib.loads(manifest.read_text(encoding="utf-8"))
    rules = [_load_rule(md) for md in (path / "rules").glob("*.md")]
    rules.sort(key=lambda r: natural_key(r["id"]))
    initial_file = path / "initial.yaml"
    initial = read_yaml(initial_file.read_text(encoding="utf-8")) if initial_file.is_file() \
        else {}
    return Ruleset(id=meta.get("id", ruleset_id), name=meta.get("name", ruleset_id),
                   language=meta.get("language", "en"), source=meta.get("source", ""),
                   settings=meta.get("settings", {}), rules=rules, initial=initial or {},
                   labels=_labels(meta.get("labels")),
                   vocabulary=vocabulary(meta.get("vocabulary")),
                   display=display(meta.get("display")), path=path)


# period_end: the notice kinds with which the rules end the running period (its report
# is due then, before the next period begins)
VOCABULARY_KEYS = ("period", "score", "period_end")
DISPLAY_KINDS = ("number", "money", "player", "players", "proposal", "date", "flag", "text")


def vocabulary(table: Any) -> dict[str, list[str]]:
    """``[vocabulary]`` checked: each key a list of names (variables; notice kinds for
    ``period_end``)."""
    table = table or {}
    if not isinstance(table, dict) or set(table) - set(VOCABULARY_KEYS):
        raise RulesetError(f"[vocabulary] takes only {', '.join(VOCABULARY_KEYS)}")
    out = {}
    for key, names in table.items():
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise RulesetError(f"[vocabulary] {key} must be a list of variable names"
                               if key != "period_end" else
                               "[vocabulary] period_end must be a list of notice kinds")
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


def _labels(table: Any) -> dict[str, Any]:
    """``[labels]``: name → label tables (variables, offices, assets, ``tally``: the keys
    of the rules' tallies, ``timers``: deadlines by name), ``actions`` and
    ``proposal_data`` checked."""
    table = dict(table or {})
    if "actions" in table:
        table["actions"] = action_labels(table["actions"])
    if "proposal_data" in table:
        table["proposal_data"] = proposal_data_labels(table["proposal_data"])
    return table


def proposal_data_labels(table: Any) -> dict[str, dict[str, Any]]:
    """``[labels.proposal_data]`` checked: what of a proposal's data (kept there by the
    rules) is worth telling where the proposal is told, in the ruleset's language::

        letter = "lettera"                                    # "lettera: 1"
        class = { values = { G = "Grundregel-Änderung" } }    # the value's words alone
        stage = { label = "Stand", values = { deferred = "vertagt" } }

    Data not named is not told; a value not among ``values`` is told only with a label.
    Returns key → ``{"label": str, "values": {value: str}}``."""
    if not isinstance(table, dict):
        raise RulesetError("[labels.proposal_data] takes one entry per key")
    out: dict[str, dict[str, Any]] = {}
    for key, entry in table.items():
        where = f"[labels.proposal_data] {key}"
        told = {"label": entry} if isinstance(entry, str) else entry
        values = told.get("values", {}) if isinstance(told, dict) else None
        if not isinstance(told, dict) or set(told) - {"label", "values"} \
                or not isinstance(told.get("label", ""), str) \
                or not isinstance(values, dict) \
                or not all(isinstance(v, str) and v for v in values.values()) \
                or not (told.get("label") or values):
            raise RulesetError(f"{where}: a label, or {{ label = …, values = {{ … }} }}")
        out[str(key)] = {"label": told.get("label", ""),
                         "values": {str(k): v for k, v in values.items()}}
    return out


def _texts(value: Any, where: str) -> dict[str, str]:
    """A label or help: one string (in the ruleset's language, key ``""``) or a table of
    language → string."""
    if isinstance(value, str) and value:
        return {"": value}
    if isinstance(value, dict) and value and all(
            isinstance(k, str) and 2 <= len(k) <= 5 and isinstance(v, str) and v
            for k, v in value.items()):
        return dict(value)
    raise RulesetError(f"{where}: a text, or a table of language = text")


def action_labels(table: Any) -> dict[str, dict[str, Any]]:
    """``[labels.actions.<action>]`` checked: how an action and its parameters are called
    on pages and in letters, by language::

        [labels.actions.propose]
        label = { it = "Proponi", en = "Propose" }
        help = { it = "…", en = "…" }                   # optional
        params.in_vigore_dal = { it = "In vigore dal", en = "In force from" }
        params.vote_now = { label = { it = "…", en = "…" }, help = { it = "…", en = "…" } }

    Each text is a string (the ruleset's language) or a table language → string. Returns
    action → ``{"label": {lang: text}, "help": {…}, "params": {param: {"label": …,
    "help": …}}}`` (``""`` the ruleset's language)."""
    if not isinstance(table, dict):
        raise RulesetError("[labels.actions] takes one table per action")
    out: dict[str, dict[str, Any]] = {}
    for name, entry in table.items():
        where = f"[labels.actions.{name}]"
        if not isinstance(entry, dict) or "label" not in entry \
                or set(entry) - {"label", "help", "params"}:
            raise RulesetError(f"{where}: label (required), help, params")
        params = entry.get("params") or {}
        if not isinstance(params, dict):
            raise RulesetError(f"{where} params: one entry per parameter")
        shown: dict[str, dict[str, dict[str, str]]] = {}
        for param, value in params.items():
            told = value if isinstance(value, dict) and "label" in value else {"label": value}
            if set(told) - {"label", "help"}:
                raise RulesetError(f"{where} params.{param}: a label, or label and help")
            shown[str(param)] = {key: _texts(text, f"{where} params.{param}")
                                 for key, text in told.items()}
        out[str(name)] = {"label": _texts(entry["label"], where),
                          "help": _texts(entry["help"], where) if "help" in entry else {},
                          "params": shown}
    return out


def _load_rule(md: Path) -> dict[str, Any]:
    text = md.read_text(encoding="utf-8")
    front: dict[str, Any] = {}
    if text.startswith("---\n"):
        head, _, text = text[4:].partition("\n---\n")
        front = read_yaml(head) or {}
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

"""A game's own words and how values are shown: :class:`Words` (labels of variables,
offices and assets from ``ruleset.toml`` or the rules' declarations, the vote words, the
period and score vocabulary, each variable's display kind), and the small phrases every
reader shares (a status, a vote choice, a rule change, a value, a time).

Templates are English, translated through the Babel catalog (``scriba.po``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from babel import UnknownLocaleError
from babel.dates import format_date

from scriba.kernel.declarations import Declarations
from scriba.service.messages import translate

# Variables whose values are long structures are shown cut to this many characters.
VALUE_LIMIT = 160

# Statuses and vote choices we know how to translate; others are shown as they are.
STATUS_WORDS = {
    "open": "open", "adopted": "adopted", "rejected": "rejected",
    "failed_quorum": "failed for lack of quorum", "withdrawn": "withdrawn",
    "vetoed": "vetoed", "expired": "expired", "invalid": "invalid",
}
CHOICE_WORDS = {"for": "for", "against": "against", "abstain": "abstain", "present": "present"}
CHANGE_WORDS = {
    "enact": "enact rule {rule}", "enact_new": "enact a new rule",
    "enact_titled": "enact a new rule, \u201c{title}\u201d",
    "repeal": "repeal rule {rule}", "amend": "amend rule {rule}",
    "amend_paragraph": "amend paragraph {paragraph} of rule {rule}",
    "transmute": "transmute rule {rule}", "set_attribute": "change an attribute of rule {rule}",
    "retitle": "retitle rule {rule}", "renumber": "renumber rule {rule} as {to}",
    "reenact": "re-enact rule {rule}",
}


@dataclass(frozen=True)
class Said:
    """A text and the language it is in (a page marks it with ``lang``)."""

    text: str
    lang: str


@dataclass
class ActionWords:
    """An action's words for one reader: its label and help, and per parameter its label
    and help (``None``: not declared, the interface says it its own way)."""

    label: Said | None = None
    help: Said | None = None
    params: dict[str, tuple[Said | None, Said | None]] = field(default_factory=dict)


@dataclass
class Words:
    """A game's own words: variable and office labels, vote words, proposal labels."""

    language: str = "en"
    variables: dict[str, str] = field(default_factory=dict)
    offices: dict[str, str] = field(default_factory=dict)
    assets: dict[str, str] = field(default_factory=dict)  # kind → its name in the game
    choices: dict[str, str] = field(default_factory=dict)  # canonical → the ruleset's word
    proposals: dict[str, str] = field(default_factory=dict)  # number → title
    rule_titles: dict[str, str] = field(default_factory=dict)
    # The ruleset's vocabulary (rulesets/__init__.py): what counts periods, what is the
    # score, how a variable's value is shown. Nothing declared: no period, no score.
    period: list[str] = field(default_factory=list)
    period_end: list[str] = field(default_factory=list)  # notice kinds that end a period
    score: list[str] = field(default_factory=list)
    display: dict[str, dict[str, str]] = field(default_factory=dict)
    # How actions and their parameters are called ([labels.actions]): action → its texts
    # by language (rulesets.action_labels); read them with :meth:`action`.
    action_texts: dict[str, dict[str, Any]] = field(default_factory=dict)
    ruleset_language: str = "en"
    # The ruleset's words for the keys of its tallies, its deadlines, and the proposal
    # data worth telling ([labels.tally], [labels.timers], [labels.proposal_data]).
    tally: dict[str, str] = field(default_factory=dict)
    timers: dict[str, str] = field(default_factory=dict)
    proposal_data: dict[str, dict[str, Any]] = field(default_factory=dict)

    def var(self, name: str) -> str:
        return self.variables.get(name, name)

    def period_variable(self, game_vars: dict[str, Any]) -> str | None:
        """The first of the ruleset's period variables the game has, if any."""
        return next((name for name in self.period if name in game_vars), None)

    def show(self, name: str, value: Any) -> str:
        """A variable's value as the ruleset says to show it (``[display.variables]``)."""
        shown = self.display.get(name) or {}
        kind = shown.get("kind")
        if value is None or kind in (None, "number", "text"):
            return show_value(value, self.language)
        if kind == "money" and isinstance(value, int | float) and not isinstance(value, bool):
            return f"{show_value(value, self.language)} {shown.get('unit', '')}".strip()
        if kind == "flag" and isinstance(value, bool):
            return "✓" if value else "–"
        if kind == "players" and isinstance(value, list):
            return show_value(", ".join(str(v) for v in value) or "–")
        if kind == "proposal" and isinstance(value, int | str) and not isinstance(value, bool):
            return self.proposal(value)
        if kind == "date" and isinstance(value, str):
            return show_time(value)
        return show_value(value, self.language)

    def action(self, name: str) -> ActionWords:
        """An action's label and help, and its parameters', in this reader's language
        where the ruleset gives it, else in the ruleset's (each with its language)."""
        texts = self.action_texts.get(name) or {}
        return ActionWords(
            label=self._pick(texts.get("label")), help=self._pick(texts.get("help")),
            params={param: (self._pick(told.get("label")), self._pick(told.get("help")))
                    for param, told in (texts.get("params") or {}).items()})

    def _pick(self, texts: dict[str, str] | None) -> Said | None:
        if not texts:
            return None
        own = {(lang or self.ruleset_language): text for lang, text in texts.items()}
        for lang in (self.language, self.ruleset_language, "en"):
            if lang in own:
                return Said(own[lang], lang)
        lang, text = next(iter(own.items()))
        return Said(text, lang)

    def office(self, name: str) -> str:
        return self.offices.get(name, name)

    def timer(self, name: Any) -> str:
        """A deadline as the ruleset calls it ("zat" → "ZAT"), else by its name."""
        return self.timers.get(str(name), str(name).replace("_", " "))

    def data_told(self, data: dict[str, Any]) -> list[str]:
        """What the rules say about a proposal, from its data, in the ruleset's words: only
        the keys the ruleset declares worth telling, in the order it declares them."""
        told = []
        for key, said in self.proposal_data.items():
            value = data.get(key)
            if value is None or value == "" or value == []:
                continue
            word = said["values"].get(str(value))
            if word and said["label"]:
                told.append(f"{said['label']}: {word}")
            elif word:
                told.append(word)
            elif said["label"]:
                told.append(f"{said['label']}: {show_value(value, self.language)}")
        return told

    def proposal(self, number: Any) -> str:
        """How a sentence names a proposal: the one way (see :func:`proposal_name`)."""
        return proposal_name(number, self.proposals.get(str(number)), self.language)


def proposal_name(number: Any, title: str | None, language: str) -> str:
    """A proposal in a sentence: its number, with its title when it has one ("301
    “Bonus”"); never its label beside its number, never a dash with nothing after it."""
    if not title:
        return str(number)
    return _("{number} \u201c{title}\u201d", language, number=number, title=title)


def _(template: str, language: str, **params: Any) -> str:
    return translate(template, language, **params)


def label_in(label: Any, language: str) -> str | None:
    """A declaration's label: a string, or a mapping of language → string."""
    if isinstance(label, str):
        return label
    if isinstance(label, dict):
        value = label.get(language) or next(iter(label.values()), None)
        return str(value) if value is not None else None
    return None


@lru_cache(maxsize=64)
def _toml_words(ruleset_id: str) -> dict[str, Any]:
    """A bundled ruleset's labels, vocabulary and display kinds (its ruleset.toml)."""
    from scriba.rulesets import RulesetError, load_ruleset
    try:
        ruleset = load_ruleset(ruleset_id)
    except (RulesetError, OSError, ValueError):
        return {}
    return {"labels": {kind: {str(k): str(v) for k, v in (table or {}).items()}
                       for kind, table in ruleset.labels.items()
                       if isinstance(table, dict) and kind not in ("actions",
                                                                   "proposal_data")},
            "actions": ruleset.labels.get("actions") or {},
            "proposal_data": ruleset.labels.get("proposal_data") or {},
            "vocabulary": ruleset.vocabulary, "display": ruleset.display}


def _recorded(state: Any, key: str, check: Any, default: Any) -> Any:
    """A vocabulary the game recorded in its settings at its start, if it did and it is
    well formed; else the ruleset's."""
    from scriba.rulesets import RulesetError
    value = (getattr(state, "settings", None) or {}).get(key)
    if value is None:
        return default
    try:
        return check({"variables": value} if key == "display" else value)
    except RulesetError:
        return default


def ruleset_words(state: Any, language: str | None = None) -> Words:
    """The words of the game's ruleset: its labels and its vocabulary."""
    from scriba.rulesets import display, vocabulary
    toml = _toml_words(state.ruleset) if state.ruleset else {}
    labels = toml.get("labels", {})
    vocab = _recorded(state, "vocabulary", vocabulary, toml.get("vocabulary", {}))
    return Words(
        language=language or state.language,
        variables=dict(labels.get("variables", {})),
        offices=dict(labels.get("offices", {})),
        assets=dict(labels.get("assets", {})),
        period=list(vocab.get("period", [])),
        period_end=list(vocab.get("period_end", [])), score=list(vocab.get("score", [])),
        display=dict(_recorded(state, "display", display, toml.get("display", {}))),
        action_texts=dict(toml.get("actions", {})),
        ruleset_language=state.language or "en",
        tally=dict(labels.get("tally", {})), timers=dict(labels.get("timers", {})),
        proposal_data=dict(toml.get("proposal_data", {})),
    )


def base_words(state: Any, language: str | None = None) -> Words:
    """The words a state alone gives: the ruleset's, and proposal labels and rule titles."""
    words = ruleset_words(state, language)
    words.proposals = {str(n): str(p.get("title") or "") for n, p in state.proposals.items()}
    words.rule_titles = {rid: r["title"] for rid, r in state.rules.items()}
    return words


# Names of the keys a rule's structured value often has ({"proposal": 1, "author": …}).
KEY_WORDS = {"proposal": "proposal", "author": "author", "player": "player", "rule": "rule",
             "players": "players", "text": "text", "title": "title", "number": "number",
             "time": "time", "reason": "reason", "choice": "choice", "votes": "votes",
             "mutable": "mutable", "class": "class", "paragraph": "paragraph", "days": "days",
             "officer": "officer", "owner": "owner"}
# A time as the log stores it ("2026-03-04T10:00:00Z"): shown as show_time writes it.
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|\+00:00)?")


def show_value(value: Any, language: str = "en") -> str:
    """A value for a reader: never JSON or Python (``{}``, ``[]``, ``None``, ``false``):
    yes/no, "–" for nothing, lists joined by commas, mappings as "key: value" pairs."""
    text = _plain(value, language)
    return text if len(text) <= VALUE_LIMIT else text[:VALUE_LIMIT - 1] + "…"


def _plain(value: Any, language: str) -> str:
    if isinstance(value, str):
        return show_time(value) if ISO_TIME.fullmatch(value) else value
    if isinstance(value, bool):
        return _("yes" if value else "no", language)
    if value is None:
        return "–"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, dict):
        return "; ".join(f"{key_word(k, language)}: {_plain(v, language)}"
                         for k, v in value.items()) or "–"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(_plain(v, language) for v in value) or "–"
    return str(value)


def key_word(key: Any, language: str) -> str:
    """A structured value's key as a word ("in_force_since" → "in force since")."""
    key = str(key)
    return _(KEY_WORDS[key], language) if key in KEY_WORDS else key.replace("_", " ")


def short_reason(reason: Any) -> str:
    """The line of a Starlark traceback that says what went wrong ("fail: …")."""
    text = str(reason or "?")
    for line in text.splitlines():
        if line.startswith("error: "):
            return show_value(line[len("error: "):].strip())
    return show_value(text.strip().splitlines()[0] if text.strip() else "?")


def show_time(time: str | None) -> str:
    """``2026-03-04T10:00:00Z`` → ``2026-03-04 10:00 UTC``."""
    if not time or len(time) < 16:
        return time or ""
    return f"{time[:10]} {time[11:16]} UTC"


def time_in_words(moment: str, language: str) -> str:
    """``2026-03-14T18:00:00Z`` → "sabato 14 marzo 2026, 18:00 UTC" (the reader's words)."""
    try:
        when = datetime.fromisoformat(moment.replace("Z", "+00:00")).astimezone(UTC)
        day = format_date(when, "full", locale=language)
    except (ValueError, TypeError, UnknownLocaleError):
        return show_time(moment)
    return f"{day}, {when:%H:%M} UTC"


def status_word(status: Any, language: str) -> str:
    status = str(status)
    return _(STATUS_WORDS[status], language) if status in STATUS_WORDS else status


def choice_word(choice: Any, words: Words) -> str:
    choice = str(choice)
    if choice in words.choices:
        return words.choices[choice]
    return _(CHOICE_WORDS[choice], words.language) if choice in CHOICE_WORDS else choice


def change_phrase(change: dict[str, Any], language: str) -> str:
    kind = str(change.get("type", ""))
    if kind == "enact" and not change.get("rule"):
        kind = "enact_titled" if change.get("title") else "enact_new"
    template = CHANGE_WORDS.get(kind)
    if template is None:
        return kind
    return _(template, language, rule=change.get("rule", "?"), title=change.get("title"),
             paragraph=change.get("paragraph", "?"), to=change.get("to", "?"))


def declared_words(state: Any, decl: Declarations, language: str | None = None) -> Words:
    """The words a state gives (:func:`base_words`) and those its rules in force declare
    (``decl``: the kernel's declarations): labels of variables and offices, vote words."""
    words = base_words(state, language)
    for (_scope, name), variable in decl.variables.items():
        label = label_in(variable.get("label"), words.language)
        if label and name not in words.variables:
            words.variables[name] = label
    for name, office in decl.offices.items():
        label = label_in(office.get("label"), words.language)
        if label:
            words.offices.setdefault(name, label)
    for name, action in decl.actions.items():
        # A rule enacted in play may name its action itself ("label": text or by language).
        said = action.get("label")
        if name not in words.action_texts and (isinstance(said, str) and said
                                                or isinstance(said, dict) and said):
            texts = said if isinstance(said, dict) else {"": said}
            words.action_texts[name] = {"label": {str(k): str(v) for k, v in texts.items()},
                                        "params": _param_labels(action.get("param_labels"))}
        if action.get("kind") == "vote":
            for word, canonical in (action.get("choices") or {}).items():
                words.choices.setdefault(str(canonical), str(word))
    return words


def _param_labels(declared: Any) -> dict[str, dict[str, dict[str, str]]]:
    """An action's ``param_labels`` (parameter → text, or language → text) as the
    ruleset's ``[labels.actions]`` gives them: parameter → {"label": language → text}."""
    if not isinstance(declared, dict):
        return {}
    found = {}
    for param, said in declared.items():
        texts = said if isinstance(said, dict) else {"": said}
        found[str(param)] = {"label": {str(k): str(v) for k, v in texts.items()
                                       if isinstance(v, str) and v}}
    return found

"""The forms of the actions a reader may take, as the page shows them: each action and
parameter by its label in the reader's language (the ruleset's ``[labels.actions]``, or
the pages' own words for what every game has: a proposal's title, a vote), the values the
rules leave open as choices, the owed move first, and a refused form's values kept with the
refusal beside the field it concerns.

Form fields are named ``a_<parameter>`` (an argument) and ``c_<part>`` (the rule change of
a proposal); :mod:`scriba.web.pages.game` reads them back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scriba.service.deciding import field_word

# A vote's choices by meaning, in this order; meanings a ruleset adds come after.
MEANINGS = ("for", "against", "abstain", "present")
# Free text parameters written on several lines.
LONG_TEXT = ("text", "reason", "reasons", "note", "judgment", "question", "position",
             "decision")
# The fields of a proposal's rule change, as the form names them.
CHANGE_FIELDS = ("c_type", "c_rule", "c_title", "c_text", "c_code", "c_yaml")

# Which field a refusal of the kernel concerns (its reason, kept with the refusal).
_REASON_FIELDS = {
    "rule_code_invalid": "c_code", "change_enact_empty": "c_text",
    "change_rule_missing": "c_rule", "change_needs_rule": "c_rule",
    "change_rule_exists": "c_rule", "change_reenact_in_force": "c_rule",
    "change_paragraph_missing": "c_rule", "change_malformed": "c_yaml",
    "change_unknown_type": "c_yaml", "changes_empty": "c_type", "label_taken": "a_label",
    "proposal_closed": "a_proposal", "unknown_proposal": "a_proposal",
    "bad_choice": "a_choice",
}


@dataclass
class Text:
    """Words on the page and their language (``lang`` set where it is not the page's)."""

    text: str
    lang: str | None = None


@dataclass
class Choice:
    value: str
    text: Text
    meaning: str = ""  # a vote word's meaning in the reader's language, if it differs


@dataclass
class Field:
    name: str  # the form's field: a_<parameter>
    id: str
    label: Text
    widget: str  # select, radio, checks, bool, number, text, textarea, yaml
    optional: bool = False
    help: Text | None = None
    choices: list[Choice] = field(default_factory=list)
    value: str = ""
    error: str = ""
    minimum: int | None = None  # a number's bounds, where known
    maximum: int | None = None
    suggestions: list[str] = field(default_factory=list)  # typed freely, these offered


@dataclass
class Kept:
    """A refused form, sent back: its values, the refusal, and the field it concerns
    (``""``: the form as a whole)."""

    action: str
    values: dict[str, str]
    message: str
    field: str = ""
    checked: dict[str, Any] | None = None  # what the check button found (rulecheck)


@dataclass
class ActionForm:
    name: str
    kind: str
    label: Text
    help: Text | None
    target: str
    request_id: str
    fields: list[Field]
    due: bool = False
    deadline: str | None = None
    due_reason: str = ""
    # A proposal: its rule change's values (None: not given, the form's first choice).
    changes: dict[str, str | None] | None = None
    change_error: dict[str, str] = field(default_factory=dict)  # c_… → refusal
    error: str = ""  # a refusal that concerns no one field
    refused: bool = False
    checked: dict[str, Any] | None = None  # the proposal checked, not made

    @property
    def important(self) -> bool:
        """Shown open, never folded away: owed, sent back refused, or checked."""
        return self.due or self.refused or self.checked is not None


def named_values(actions: list[Any], rules: list[dict[str, Any]],
                 docket: Callable[[], list[dict[str, Any]]]) -> dict[str, dict[str, str]]:
    """Cases by number (their question) and rules in force (their title), for the forms'
    parameters that name one; the docket is read only when a form needs it."""
    wanted = {str(t).rstrip("?") for a in actions for t in a.params.values()}
    cases = {str(c["number"]): c["question"] for c in docket()} if "case" in wanted else {}
    named = {str(r["id"]): str(r.get("title") or "") for r in rules if r.get("in_force")} \
        if "rule" in wanted or any(a.kind == "judge" for a in actions) else {}
    return {"cases": cases, "rules": named}


def error_field(reason: str, kept_values: dict[str, str], fields: list[str]) -> str:
    """The form field a refusal (its reason: a message id of the kernel, or the field a
    form check named) concerns, if it is on the form; else ``""``."""
    name = reason if reason.startswith(("a_", "c_")) else _REASON_FIELDS.get(reason, "")
    if name == "c_code" and not kept_values.get("c_code") and kept_values.get("c_yaml"):
        name = "c_yaml"  # the code was in the further changes
    return name if name in fields or name in CHANGE_FIELDS else ""


class FormBuilder:
    """Builds the forms of one page: ``_`` the pages' words in the reader's language,
    ``words`` the game's (service.words.Words), ``proposal_title`` a proposal's number →
    its title, ``players``/``open_proposals`` what a parameter offers when the rules list
    no values for it."""

    def __init__(self, _: Callable[..., str], words: Any, page_lang: str,
                 players: list[str], open_proposals: list[dict[str, Any]],
                 proposal_named: Callable[[str], str],
                 cases: dict[str, str] | None = None,
                 rules: dict[str, str] | None = None) -> None:
        self._ = _
        # A case's number → its question, a rule in force's number → its title: the
        # choices of the parameters that name one.
        self.cases = cases or {}
        self.rules = rules or {}
        self.words = words
        self.page_lang = page_lang
        self.players = players
        self.open_proposals = open_proposals
        self.proposal_named = proposal_named
        # The ruleset's language, where it is not the page's (marked with ``lang``).
        self.rule_lang = None if words.ruleset_language == page_lang else \
            words.ruleset_language
        # The kernel's fields of a proposal and a vote, titled as its refusals name them
        # (the service's words), with the pages' help.
        helps = {"label": _("A short name for it, instead of its number"),
                 "text": _("Why, in your words"),
                 "question": _("What the judge is asked to decide")}

        def titled(names: tuple[str, ...]) -> dict[str, tuple[str, str]]:
            return {name: (field_word(name, page_lang) or name, helps.get(name, ""))
                    for name in names}
        self.builtin_params = titled(("label", "title", "text", "proposal", "choice"))
        # The kernel's parameters of a court's actions (a case, a judgment, an appeal).
        self.court_params = titled(("question", "case", "judgment", "reasons", "rules",
                                    "parties"))
        self.kind_labels = {"propose": _("Propose a rule change"), "vote": _("Cast a vote"),
                            "join": _("Join the game"), "leave": _("Leave the game")}
        self.meanings = {"for": _("for"), "against": _("against"),
                         "abstain": _("abstain"), "present": _("present")}

    def said(self, said: Any) -> Text | None:
        """A ruleset's text (service.words.Said) with its language when not the page's."""
        if said is None:
            return None
        return Text(said.text, None if said.lang == self.page_lang else said.lang)

    def form(self, action: Any, target: str, request_id: str,
             kept: Kept | None = None) -> ActionForm:
        told = self.words.action(action.name)
        mine = kept if kept is not None and kept.action == action.name else None
        values = mine.values if mine else {}
        label = self._action_label(action, told)
        help_ = self.said(told.help) or (Text(action.help, self.rule_lang)
                                         if action.help and told.label is None else None)
        skip = ("changes", "label", "title", "text") if action.kind == "propose" else ()
        fields = []
        if action.kind == "propose":
            fields += [self._field(action, told, name, "str?", values)
                       for name in ("title", "text", "label")]
        fields += [self._field(action, told, name, type_, values)
                   for name, type_ in action.params.items() if name not in skip]
        form = ActionForm(
            name=action.name, kind=action.kind, label=label, help=help_, target=target,
            request_id=request_id, fields=fields, due=action.due, deadline=action.deadline,
            due_reason=action.due_reason,
            changes={k: values.get(k) for k in CHANGE_FIELDS}
            if action.kind == "propose" else None)
        if mine and mine.message:  # (a form started from a rule to amend has none)
            self._place_refusal(form, mine)
        form.checked = mine.checked if mine else None
        return form

    def _action_label(self, action: Any, told: Any) -> Text:
        own = told.label
        if own is not None and (own.lang == self.page_lang or action.kind not in
                                self.kind_labels):
            return self.said(own) or Text(action.name)
        if action.kind in self.kind_labels:
            return Text(self.kind_labels[action.kind])
        if own is not None:
            return self.said(own) or Text(action.name)
        # A rule enacted in play that names its action no way: its name, read as words.
        return Text(action.name.replace("_", " ").capitalize(), "und")

    def _field(self, action: Any, told: Any, name: str, type_: str,
               values: dict[str, str]) -> Field:
        _ = self._
        optional = type_.endswith("?")
        base = type_.rstrip("?")
        own_label, own_help = told.params.get(name, (None, None))
        builtin = self.builtin_params.get(name) if action.kind in ("propose", "vote") \
            else self.court_params.get(name) if action.kind in ("case", "judge", "appeal") \
            else None
        if own_label is not None and (builtin is None or own_label.lang == self.page_lang):
            label, help_ = self.said(own_label), self.said(own_help)
        elif builtin is not None:
            label, help_ = Text(builtin[0]), Text(builtin[1]) if builtin[1] else None
        else:
            label = Text(name.replace("_", " ").capitalize(), "und")
            help_ = None
        fid = f"f-{action.name}-{name}"
        out = Field(name=f"a_{name}", id=fid, label=label or Text(name), widget="text",
                    optional=optional, help=help_, value=values.get(f"a_{name}", ""))
        offered = action.options.get(name)
        if action.kind == "vote" and name == "choice":
            out.widget = "radio"
            out.choices = self._vote_choices(action, offered)
        elif action.kind == "judge" and name == "judgment" and action.choices:
            out.widget = "radio"  # the ruleset's judgments, one word per meaning
            first: dict[str, str] = {}
            for word, meaning in action.choices.items():
                first.setdefault(meaning, word)
            shown = offered if offered is not None else list(first.values())
            out.choices = [Choice(str(w), Text(str(w), self.rule_lang)) for w in shown]
        elif action.kind == "judge" and name == "rules" and self.rules:
            out.widget = "checks"  # the rules it interprets: any of those in force
            out.choices = self._choices("rule", None)
        elif offered is not None or base in ("player", "proposal", "case", "rule"):
            out.widget = "select"
            out.choices = self._choices(base, offered)
        elif base == "bool":
            out.widget = "bool"
            out.choices = [Choice("true", Text(_("yes"))), Choice("false", Text(_("no")))]
        elif base == "int":
            out.widget = "number"
        elif base == "event":  # the number of an entry of the chronicle
            out.widget = "number"
            out.minimum = 1
            out.help = out.help or Text(_("The number of an entry of the chronicle."))
        elif base in ("changes", "list", "dict"):
            out.widget = "yaml"
            out.help = out.help or Text(_(
                "Written as YAML, e.g. a number, a list `[a, b]` or `{key: value}`."))
        elif name in LONG_TEXT:
            out.widget = "textarea"
        return out

    def _choices(self, base: str, offered: list[str] | None) -> list[Choice]:
        if base == "player":
            names = offered if offered is not None else self.players
            return [Choice(str(p), Text(str(p))) for p in names]
        if base == "proposal":
            if offered is None:
                return [Choice(str(p["number"]), Text(named(p))) for p in self.open_proposals]
            return [Choice(str(n), Text(self.proposal_named(str(n)))) for n in offered]
        if base == "case":
            numbers = offered if offered is not None else list(self.cases)
            return [Choice(str(n), Text(_titled(self._("case %(number)s", number=n),
                                                self.cases.get(str(n), ""))))
                    for n in numbers]
        if base == "rule":
            ids = offered if offered is not None else list(self.rules)
            return [Choice(str(r), Text(_titled(str(r), self.rules.get(str(r), "")),
                                        self.rule_lang)) for r in ids]
        return [Choice(str(v), Text(str(v), self.rule_lang)) for v in offered or []]

    def _vote_choices(self, action: Any, offered: list[str] | None) -> list[Choice]:
        """One choice per meaning, shown by the ruleset's first word for it."""
        by_meaning: dict[str, str] = {}
        for word, meaning in (action.choices or {}).items():
            if word != meaning:
                by_meaning.setdefault(meaning, word)
        meanings = offered if offered is not None else (
            list(by_meaning) or ["for", "against", "abstain"])
        order = {m: i for i, m in enumerate(MEANINGS)}
        out = []
        for meaning in meanings:
            word = by_meaning.get(meaning, meaning)
            told = self.meanings.get(meaning, meaning)
            if word == meaning:  # no word of the ruleset's own: the pages' word
                out.append(Choice(word, Text(told)))
            else:
                out.append(Choice(word, Text(word, self.rule_lang),
                                  "" if word.lower() == meaning else told))
        if offered is None:
            out.sort(key=lambda c: order.get(action.choices.get(c.value, c.value), 9))
        return out

    def _place_refusal(self, form: ActionForm, kept: Kept) -> None:
        form.refused = True
        names = [f.name for f in form.fields]
        target = error_field(kept.field, kept.values, names)
        if target.startswith("c_") and form.changes is not None:
            form.change_error = {target: kept.message}
            return
        for f in form.fields:
            if f.name == target:
                f.error = kept.message
                return
        form.error = kept.message


def _titled(name: str, title: str, limit: int = 120) -> str:
    """A case or a rule as a choice: its number, with its question or title (shortened)."""
    title = " ".join(title.split())
    if len(title) > limit:
        title = title[:limit - 1] + "\u2026"
    return f"{name} \u2013 {title}" if title else name


def named(proposal: dict[str, Any]) -> str:
    """A proposal as a choice: its number with its title (or its label, if untitled)."""
    number = str(proposal["number"])
    if proposal.get("title"):
        return f"{number} – {proposal['title']}"
    label = proposal.get("label")
    return f"{number} ({label})" if label and str(label) != number else number

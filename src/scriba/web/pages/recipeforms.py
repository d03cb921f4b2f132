"""Recipes as the propose form offers them (``service.recipes``): the recipes that fit the
game, one recipe's blanks as form fields, and the propose form filled with the rule a
recipe makes, which the author may edit, check and propose.

Blanks are form fields named ``b_<blank>``; :mod:`scriba.web.pages.recipes` serves the
pages, :mod:`scriba.web.pages.game` the list on the propose form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scriba.service import errors
from scriba.web.pages.actionforms import Choice, Field, Kept, Text

MAX_BLANKS = 30  # a recipe has a few; a query with more is not a form of ours
MAX_VALUE = 200  # characters of one blank's value kept (the service allows 80 of text)


@dataclass
class Offered:
    """A recipe in the list: its words in the reader's language."""

    name: str
    title: str
    summary: str


def offered(service: Any, game_id: str, language: str) -> list[Offered]:
    """The recipes that fit the game, for the propose form's list."""
    return [Offered(r.name, r.title, r.summary)
            for r in service.recipes.list(language, game_id)]


def fill_recipe(service: Any, name: str, values: Mapping[str, str], reader_language: str,
         game_language: str, game_id: str) -> Any:
    """The rule a recipe writes, in the game's language (its rules are written in it); a
    refusal names the blank by its label in the reader's language."""
    rule = service.recipes.fill(name, values, reader_language, game_id)
    if game_language != reader_language:
        rule = service.recipes.fill(name, values, game_language, game_id)
    return rule


def blank_values(query: Mapping[str, str]) -> dict[str, str]:
    """The blanks' values from a query (``b_<blank>``), bounded: hostile queries are long."""
    values: dict[str, str] = {}
    for key, value in query.items():
        if key.startswith("b_") and len(values) < MAX_BLANKS:
            values[key[2:][:64]] = str(value)[:MAX_VALUE]
    return values


def blank_fields(recipe: Any, values: Mapping[str, str], language: str, rule_lang: str,
                 refused: errors.InvalidInput | None = None) -> list[Field]:
    """One form field per blank: its label and help in the reader's language, the value
    written (else the default), and a refusal beside the blank it names. The game's rules
    are offered by their titles, in the game's language ``rule_lang``."""
    fields = []
    for blank in recipe.blanks:
        value = values.get(blank.name)
        out = Field(name=f"b_{blank.name}", id=f"b-{blank.name}",
                    label=Text(blank.label, language),
                    help=Text(blank.help, language) if blank.help else None,
                    widget="text", value=blank.default if value is None else value)
        if blank.kind == "number":
            out.widget = "number"
            out.minimum, out.maximum = blank.minimum, blank.maximum
        elif blank.kind in ("rule", "choice") and blank.choices:
            out.widget = "select"
            said = rule_lang if blank.kind == "rule" else language
            out.choices = [Choice(v, Text(label, said)) for v, label in blank.choices]
        elif blank.kind == "office":
            # Its offices as suggestions: a new office's name is welcome too.
            out.suggestions = [v for v, _label in blank.choices]
        if refused is not None and refused.field == blank.name:
            out.error = str(refused)
        fields.append(out)
    return fields


def prefilled(action: str, rule: Any) -> Kept:
    """The propose form filled with a recipe's rule: a new rule, titled as the proposal."""
    return Kept(action, {"a_title": rule.title, "c_type": "enact", "c_title": rule.title,
                         "c_text": rule.text, "c_code": rule.code.strip("\n")}, "")

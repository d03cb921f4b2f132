"""``template NAME`` by mail (``modello``, ``Vorlage``): a recipe of the cookbook
(``service.recipes``) written out for a letter — its rule's text and code filled in with
its defaults (or the values written after its name: ``template bonus_for_adoption
points=5``), its blanks explained, and the proposal block to send back, the code fenced.
``template`` alone lists the recipes that fit the game.

The answer is in the reader's language (the ``mail`` catalog); the rule's text is in the
game's, as its rules are. Anyone who may write to the game may ask: it writes nothing.
"""

from __future__ import annotations

import re
from typing import Any

from scriba.service.errors import InvalidInput
from scriba.service.letters import mail_text

# The words a reader is told to write, in their language.
VERB = {"en": "template", "it": "modello", "de": "Vorlage"}
PROPOSE = {"en": "propose", "it": "proposta", "de": "Vorschlag"}
END = {"en": "end", "it": "fine", "de": "ende"}
_PAIR = re.compile(r"([^\W\d][\w-]{0,40})=(\"[^\"]{0,200}\"|'[^']{0,200}'|\S{1,200})")


def _t(english: str, language: str, **params: object) -> str:
    return mail_text(english, language).format(**params)


def template_reply(service: Any, game_id: str, language: str, rest: str) -> str:
    """The answer to ``template`` + ``rest`` (a recipe's name and ``blank=value`` pairs,
    or nothing: the list)."""
    name, _sep, pairs = rest.strip().partition(" ")
    recipes = service.recipes.list(language, game_id)
    if not name:
        return _listing(recipes, language)
    recipe = next((r for r in recipes if r.name == name.lower()), None)
    if recipe is None:
        return _t("There is no recipe called {name} for this game.", language,
                  name=name[:40]) + "\n\n" + _listing(recipes, language)
    values = {key: value.strip("\"'") for key, value in _PAIR.findall(pairs)}
    game_language = service.reads.status(game_id).get("language") or "en"
    try:
        service.recipes.fill(recipe.name, values, language, game_id)  # said in their words
        rule = service.recipes.fill(recipe.name, values, game_language, game_id)
    except InvalidInput as refused:
        taken = {k: v for k, v in values.items() if k != refused.field}  # the rest as asked
        return "\n\n".join([_t("Not filled in: {reason}", language, reason=str(refused)),
                            _blanks(recipe, taken, language)])
    return "\n\n".join(part for part in (
        f"{recipe.title}: {recipe.summary}",
        _blanks(recipe, values, language),
        _t("To propose it, send this block to the game (change its text and code as "
           "you like first):", language),
        _block(rule, language)) if part)


def _listing(recipes: list[Any], language: str) -> str:
    if not recipes:
        return _t("No recipe fits this game yet.", language)
    verb = VERB.get(language, "template")
    lines = [_t("The recipes for this game (write \"{verb} NAME\" for one of them: its "
                "rule's text and code, ready to propose):", language, verb=verb)]
    lines += [f"- {r.name}: {r.title} — {r.summary}" for r in recipes]
    return "\n".join(lines)


def _blanks(recipe: Any, values: dict[str, str], language: str) -> str:
    if not recipe.blanks:
        return _t("This recipe has no blanks to fill in.", language)
    lines = [_t("Its blanks:", language)]
    for blank in recipe.blanks:
        value = values.get(blank.name) or blank.default
        help_ = f" {blank.help}" if blank.help else ""
        lines.append(f"- {blank.name}: {blank.label}.{help_} {_allowed(blank, language)} "
                     + _t("Here: {value}.", language, value=value))
    example = " ".join(f"{b.name}={values.get(b.name) or b.default}"
                       for b in recipe.blanks if " " not in (values.get(b.name) or b.default))
    lines.append(_t("To fill them in otherwise, write for example:", language))
    lines.append(f"    {VERB.get(language, 'template')} {recipe.name} {example}".rstrip())
    return "\n".join(lines)


def _allowed(blank: Any, language: str) -> str:
    """What a blank takes, said for a reader who writes it by hand."""
    if blank.kind == "number":
        return _t("A whole number from {minimum} to {maximum}.", language,
                  minimum=blank.minimum, maximum=blank.maximum)
    if blank.kind == "rule":
        return _t("The number of a rule in force.", language)
    if blank.kind == "office":
        named = ", ".join(v for v, _label in blank.choices)
        return _t("An office's name: one of this game's ({offices}) or a new one.",
                  language, offices=named) if named else _t("An office's name.", language)
    if blank.kind == "choice":
        return _t("One of: {choices}.", language, choices=", ".join(
            f"{value} ({label})" if label != value else value
            for value, label in blank.choices))
    return _t("A short text on one line, without quotation marks.", language)


def _block(rule: Any, language: str) -> str:
    """The proposal as a letter writes it: the verb and title, the text, the code fenced,
    and the line that ends it (nothing after it is taken for the rule's text)."""
    return "\n".join([f"{PROPOSE.get(language, 'propose')}: {rule.title}", rule.text.strip(),
                      "```", rule.code.strip("\n"), "```", END.get(language, "end")])

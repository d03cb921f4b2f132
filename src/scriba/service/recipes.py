"""The cookbook: tested recipes a player fills in to write a rule without programming.

A recipe is a data file, ``scriba/cookbook/<name>.toml``: its title, summary and rule text
in each language, its Starlark code, the rulesets it fits, and its blanks (how many points,
which rule, which office). Text and code are :class:`string.Template` s: ``$points`` never
collides with Starlark, which has no ``$``. :meth:`Recipes.fill` checks every value against
its blank before anything is written into code, so a filled recipe is a rule that compiles
(the suite proves each on every ruleset it fits: ``cookbook/scenarios/<name>.<ruleset>.yaml``,
played by tests/test_cookbook.py for the defaults and every extreme the blanks allow).

File format (every player-facing string a table of languages, ``en`` the fallback)::

    fits = ["a-ruleset", ...]           # rulesets whose games it is offered in
    title = {en = "...", it = "...", de = "..."}
    summary = {...}
    text = {...}                        # the rule's text, with $blanks
    code = '''...'''                    # or [code]: "common" (for all), then the part
                                        # for the game's ruleset (its id) or "default"
    [words]                             # sentences the code says, $name in the code
    reached = {en = "...", ...}         # (no quotation marks: they go in a string)
    [[blanks]]
    name = "points"  kind = "number"  minimum = 1  maximum = 100  default = "10"
    label = {...}  help = {...}
    choices = [{value = "...", label = {...}, code = "..."}]   # kind "choice" only;
                                        # code: what the choice writes into the code
                                        # (default: its value), so that a filled rule
                                        # holds no test of a constant against itself
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from scriba.catalogs import lookup
from scriba.errors import InvalidInput, with_sentence

KINDS = ("number", "rule", "office", "choice", "text")
TEXT_LIMIT = 80
# A rule id as rulesets write them (101, G.10, R.2a); an office's name as a word or two.
_RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9.]{0,19}")
_OFFICE = re.compile(r"[^\W\d_][\w-]{0,29}(?: [\w-]{1,30}){0,2}")
_INTEGER = re.compile(r"[+-]?\d{1,9}")


def cookbook_dir() -> Path:
    return Path(str(resources.files("scriba"))) / "cookbook"


@dataclass(frozen=True)
class Blank:
    """One value a recipe needs, as a form field: ``label`` and ``help`` in the reader's
    language; ``choices`` (value, label) for "choice", and for "rule" and "office" when a
    game is given (its rules in force; its offices, where any name is also accepted)."""

    name: str
    label: str
    help: str
    kind: str
    default: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Recipe:
    name: str
    title: str
    summary: str
    blanks: list[Blank]
    fits: tuple[str, ...] = ()


@dataclass(frozen=True)
class FilledRule:
    title: str
    text: str
    code: str


@dataclass(frozen=True)
class _Source:
    """A recipe file as read: every language's words, for :class:`Recipe` in one."""

    name: str
    fits: tuple[str, ...]
    title: dict[str, str]
    summary: dict[str, str]
    text: dict[str, str]
    code: dict[str, str]  # ruleset id (or "default") → Starlark template
    words: dict[str, dict[str, str]]  # sentences the code says, by language
    blanks: list[dict[str, Any]] = field(default_factory=list)


class GameReader(Protocol):
    def load(self, game_id: str) -> Any: ...


def _in(texts: Mapping[str, str], language: str) -> str:
    return texts.get(language) or texts.get("en") or next(iter(texts.values()), "")


@cache
def _sources() -> dict[str, _Source]:
    found = {}
    for path in sorted(cookbook_dir().glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        code = data["code"] if isinstance(data["code"], dict) else {"default": data["code"]}
        found[path.stem] = _Source(path.stem, tuple(data.get("fits", ())), data["title"],
                                   data["summary"], data["text"], code,
                                   data.get("words", {}), data.get("blanks", []))
    return found


class Recipes:
    """``service.recipes``: the recipes that fit a game, and a recipe filled in."""

    def __init__(self, games: GameReader | None) -> None:
        self._games = games  # None: recipes without a game only

    def list(self, language: str, game_id: str | None = None) -> list[Recipe]:
        """The recipes that fit the game's ruleset (all of them without a game)."""
        state = self._load(game_id)
        return [self._recipe(source, language, state) for source in _sources().values()
                if state is None or state.ruleset in source.fits]

    def get(self, name: str, language: str, game_id: str | None = None) -> Recipe:
        source = self._source(name, language)
        state = self._load(game_id)
        return self._recipe(source, language, state)

    def fill(self, name: str, values: Mapping[str, str], language: str,
             game_id: str | None = None, *, ruleset: str | None = None) -> FilledRule:
        """The rule a recipe makes with these values: its title and text in ``language``,
        its code for the game's ruleset (``ruleset`` stands for a game not yet made).
        Raises :class:`InvalidInput` naming the first blank whose value is refused."""
        source = self._source(name, language)
        state = self._load(game_id)
        recipe = self._recipe(source, language, state)
        filled: dict[str, str] = {}
        for blank in recipe.blanks:
            raw = values.get(blank.name)
            value = blank.default if raw is None or not str(raw).strip() else str(raw)
            filled[blank.name] = _checked(blank, value, language, state is not None)
        rules_of = (state.ruleset if state is not None else ruleset) or source.fits[0]
        code = source.code.get("common", "") + (source.code.get(rules_of)
                                                 or source.code.get("default", ""))
        # People read a choice's label, the code its value.
        told = {**filled, **{b.name: dict(b.choices)[filled[b.name]] for b in recipe.blanks
                             if b.kind == "choice"}}
        # The code's own sentences (a refusal, a winner's reason) in the language, filled too.
        said = {key: string.Template(_in(texts, language)).substitute(told)
                for key, texts in source.words.items()}
        return FilledRule(
            title=_in(source.title, language),
            text=string.Template(_in(source.text, language)).substitute(told),
            code=string.Template(code).substitute({**said, **filled,
                                                   **_choices_code(source, filled)}))

    def _load(self, game_id: str | None) -> Any:
        if not game_id:
            return None
        assert self._games is not None, "a game's recipes need the reads"
        return self._games.load(game_id)

    def _source(self, name: str, language: str) -> _Source:
        source = _sources().get(name)
        if source is None:
            shown = "".join(c for c in str(name)[:40] if c.isprintable())  # hostile input
            raise with_sentence(InvalidInput(lookup("scriba", language, _NO_RECIPE).format(
                name=shown), field="recipe"), _NO_RECIPE, name=shown)
        return source

    @staticmethod
    def _recipe(source: _Source, language: str, state: Any) -> Recipe:
        return Recipe(source.name, _in(source.title, language), _in(source.summary, language),
                      [_blank(b, language, state) for b in source.blanks], source.fits)


def _choices_code(source: _Source, filled: Mapping[str, str]) -> dict[str, str]:
    """The code each chosen choice writes, where the recipe gives it one."""
    written = {}
    for blank in source.blanks:
        for choice in blank.get("choices") or ():
            if "code" in choice and str(choice["value"]) == filled.get(blank["name"]):
                written[blank["name"]] = str(choice["code"])
    return written


def _blank(data: dict[str, Any], language: str, state: Any) -> Blank:
    kind = data["kind"]
    choices: tuple[tuple[str, str], ...] = ()
    if kind == "choice":
        choices = tuple((str(c["value"]), _in(c["label"], language)) for c in data["choices"])
    elif kind == "rule" and state is not None:
        choices = tuple((r["id"], f"{r['id']} {r['title']}".strip())
                        for r in state.rules_in_force())
    elif kind == "office" and state is not None:
        choices = tuple((name, name) for name in state.offices)
    default = data["default"]  # a value, or one per language (an office's name)
    default = _in(default, language) if isinstance(default, dict) else str(default)
    return Blank(data["name"], _in(data["label"], language), _in(data.get("help", {}), language),
                 kind, default, data.get("minimum"), data.get("maximum"), choices)


# The sentences of a refused value: each names the blank by its label and says what is
# allowed (translations in locale/<lang>/LC_MESSAGES/scriba.po).
_NO_RECIPE = "There is no recipe called {name}."
_NUMBER = "{label}: write a whole number from {minimum} to {maximum}."
_RULE = "{label}: choose one of the rules in force."
_RULE_ID_TEXT = "{label}: write a rule's number, such as 101."
_OFFICE_TEXT = ("{label}: write the office's name in letters (a word or three, up to 30 "
                "letters each).")
_CHOICE = "{label}: choose one of: {choices}."
_TEXT = ("{label}: write up to {limit} characters on one line, without quotation marks, "
         "backslashes or dollar signs.")


def _refuse(blank: Blank, language: str, template: str, **params: object) -> InvalidInput:
    params = {"label": blank.label, **params}
    sentence = lookup("scriba", language, template).format(**params)
    return with_sentence(InvalidInput(sentence, field=blank.name), template, **params)


def _checked(blank: Blank, value: str, language: str, in_game: bool) -> str:
    """The value as it goes into text and code, or :class:`InvalidInput`."""
    value = value.strip()
    if blank.kind == "number":
        low, high = blank.minimum, blank.maximum
        if not _INTEGER.fullmatch(value) or not low <= int(value) <= high:  # type: ignore[operator]
            raise _refuse(blank, language, _NUMBER, minimum=low, maximum=high)
        return str(int(value))
    if blank.kind == "rule":
        if in_game and value not in {v for v, _ in blank.choices}:
            raise _refuse(blank, language, _RULE)
        if not _RULE_ID.fullmatch(value):
            raise _refuse(blank, language, _RULE_ID_TEXT)
        return value
    if blank.kind == "office":
        if not _OFFICE.fullmatch(value):
            raise _refuse(blank, language, _OFFICE_TEXT)
        return value
    if blank.kind == "choice":
        if value not in {v for v, _ in blank.choices}:
            raise _refuse(blank, language, _CHOICE,
                          choices=", ".join(label for _, label in blank.choices))
        return value
    if len(value) > TEXT_LIMIT or any(c in value for c in '"\\$') or not value.isprintable():
        raise _refuse(blank, language, _TEXT, limit=TEXT_LIMIT)
    return value

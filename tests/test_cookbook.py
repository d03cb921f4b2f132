"""The cookbook (issue 23): every recipe, filled in, is a rule that compiles and does what
its text says on every ruleset it fits.

Each recipe has a scenario per ruleset it fits, ``cookbook/scenarios/<recipe>.<ruleset>.yaml``:
the bundled scenario format (tests/test_ruleset_scenarios.py), with a step ``recipe: true``
that proposes the filled recipe, written as a Jinja template over the blanks' values
(``{{ 5 + points }}``) so that one scenario says what players see for any value the form
allows. It is played for the defaults and for each blank's extremes (numbers at their
minimum and maximum, every choice), and must pass with no rule's code aborted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from scriba.service import Service
from scriba.service.errors import InvalidInput, told
from scriba.service.recipes import Blank, Recipe, Recipes, cookbook_dir
from scriba.service.scenario import load_scenario, run_scenario

SCENARIOS = sorted((cookbook_dir() / "scenarios").glob("*.yaml"))
LANGUAGES = ("en", "it", "de")
_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


@pytest.fixture(scope="module")
def svc(make_service: Any) -> Iterator[Service]:
    service = make_service("sqlite://")
    yield service
    service.close()


def _recipes(svc: Service, language: str = "en") -> dict[str, Recipe]:
    return {r.name: r for r in svc.recipes.list(language)}


def _cases(recipe: Recipe) -> list[tuple[str, dict[str, str]]]:
    """The defaults, then each blank at each extreme it allows (the others at default)."""
    cases = [("defaults", {})]
    for blank in recipe.blanks:
        if blank.kind == "number":
            cases += [(f"{blank.name}={v}", {blank.name: str(v)})
                      for v in (blank.minimum, blank.maximum)]
        elif blank.kind == "choice":
            cases += [(f"{blank.name}={v}", {blank.name: v}) for v, _ in blank.choices
                      if v != blank.default]
    return cases


def _render(path: Path, recipe: Recipe, values: dict[str, str], svc: Service
            ) -> dict[str, Any]:
    """The scenario with these values: expectations computed, recipe steps proposing the
    filled recipe in the ruleset's language."""
    ruleset = path.stem.split(".", 1)[1]
    language = {r["id"]: r["language"] for r in svc.reads.rulesets()}[ruleset]
    recipe = svc.recipes.get(recipe.name, language)  # its defaults in the game's language
    filled = {b.name: values.get(b.name, b.default) for b in recipe.blanks}
    numbers = {b.name: int(filled[b.name]) for b in recipe.blanks if b.kind == "number"}
    text = _JINJA.from_string(path.read_text(encoding="utf-8")).render(**{**filled, **numbers})
    scenario = yaml.safe_load(text)
    assert scenario["ruleset"] == ruleset, path
    rule = svc.recipes.fill(recipe.name, filled, language, ruleset=ruleset)
    for step in scenario["steps"]:
        if step.pop("recipe", None):
            step["changes"] = [{"enact": {"title": rule.title, "text": rule.text,
                                          "code": rule.code}}]
    return load_scenario(yaml.safe_dump(scenario, allow_unicode=True))


def _params() -> list[Any]:
    recipes = {r.name: r for r in Recipes(None).list("en")}  # no game: no service needed
    out = []
    for path in SCENARIOS:
        name, ruleset = path.stem.split(".", 1)
        out += [pytest.param(path, case, id=f"{name}.{ruleset}-{case}")
                for case, _ in _cases(recipes[name])]
    return out


def test_every_recipe_has_a_scenario_on_every_ruleset_it_fits(svc: Service) -> None:
    recipes = _recipes(svc)
    assert len(recipes) >= 12, sorted(recipes)
    tried = {}
    for path in SCENARIOS:
        name, ruleset = path.stem.split(".", 1)
        tried.setdefault(name, set()).add(ruleset)
    for name, recipe in recipes.items():
        assert recipe.fits, f"{name} fits no ruleset"
        assert tried.get(name) == set(recipe.fits), name
    assert set(tried) <= set(recipes)
    # The three languages' rulesets are all served.
    languages = {r["id"]: r["language"] for r in svc.reads.rulesets()}
    assert {languages[r] for recipe in recipes.values() for r in recipe.fits} == set(LANGUAGES)


@pytest.mark.parametrize(("path", "case"), _params())
def test_recipe_scenario_passes(svc: Service, path: Path, case: str) -> None:
    recipe = _recipes(svc)[path.stem.split(".", 1)[0]]
    values = dict(_cases(recipe))[case]
    result = run_scenario(svc.commands, _render(path, recipe, values, svc))
    assert result.errors == []
    log = svc.reads.log(result.game_id)
    assert [e for e in log if e["type"] in ("rule_code_aborted", "rule_change_failed")] == []
    # The recipe was proposed and adopted: its rule is in force, with its code.
    state = svc.reads.load(result.game_id)
    title = svc.recipes.get(recipe.name, state.language).title
    assert any(r["title"] == title and r["code"] for r in state.rules_in_force())
    # Every action of the game, the recipe's own too, and each of its parameters have a
    # name for players: pages and letters never show the code's names.
    words = svc.reads.words(result.game_id)
    for name, action in svc.reads.engine.declarations(state).actions.items():
        said = words.action(name)
        assert said.label, name
        for param in action.get("params") or {}:
            assert (said.params.get(param) or (None,))[0], (name, param)


@pytest.mark.parametrize("language", LANGUAGES)
def test_recipes_are_told_in_every_language(svc: Service, language: str) -> None:
    english = _recipes(svc)
    for name, recipe in _recipes(svc, language).items():
        assert recipe.title and recipe.summary
        for blank, in_english in zip(recipe.blanks, english[name].blanks, strict=True):
            assert blank.label and blank.help
            if language != "en":
                assert blank.label != in_english.label, (name, blank.name)
        rule = svc.recipes.fill(name, {}, language)
        assert "$" not in rule.text and "$" not in rule.code
        if language != "en":
            assert rule.text != svc.recipes.fill(name, {}, "en").text, name


def _bad_values(blank: Blank) -> list[str]:
    if blank.kind == "number":
        assert blank.minimum is not None and blank.maximum is not None
        return [str(blank.minimum - 1), str(blank.maximum + 1), "two", "1.5", "9" * 30]
    if blank.kind == "choice":
        return ["none of them", blank.default + "x"]
    if blank.kind == "rule":
        return ["1; repeal", "x" * 40, '101"']
    if blank.kind == "office":
        return ['King"', "a\nb", "x" * 31, "1st"]
    return ['say "hi"', "back\\slash", "$money", "a" * 81, "line\nbreak"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_invalid_values_are_refused_naming_the_blank(svc: Service, language: str) -> None:
    for name, recipe in _recipes(svc, language).items():
        for blank in recipe.blanks:
            for bad in _bad_values(blank):
                with pytest.raises(InvalidInput) as refused:
                    svc.recipes.fill(name, {blank.name: bad}, language)
                sentence = str(refused.value)
                assert sentence.startswith(blank.label + ": "), sentence
                assert refused.value.field == blank.name
                if len(bad) > 3:  # the value is not echoed back: the label says which
                    assert bad not in sentence
                if language != "en":  # translated, not the English sentence
                    assert told(refused.value, "en") != sentence


def test_a_game_is_offered_the_recipes_that_fit_and_its_own_rules(svc: Service) -> None:
    svc.commands.create_game("suber", game_id="cookbook-suber", players=["Anna", "Bruno"],
                             start="2026-03-01T10:00:00Z")
    offered = svc.recipes.list("en", "cookbook-suber")
    assert offered and all("suber" in r.fits for r in offered)
    assert len(offered) < len(_recipes(svc)) or all("suber" in r.fits
                                                    for r in _recipes(svc).values())
    rules = [b for r in offered for b in r.blanks if b.kind == "rule"]
    for blank in rules:
        assert ("101", "101 Obey the rules") in blank.choices or \
            any(v == "101" for v, _ in blank.choices)
        recipe = next(r for r in offered if blank in r.blanks)
        with pytest.raises(InvalidInput, match=blank.label):  # no rule 999 in this game
            svc.recipes.fill(recipe.name, {blank.name: "999"}, "en", "cookbook-suber")


def test_an_unknown_recipe_is_refused_in_the_readers_language(svc: Service) -> None:
    with pytest.raises(InvalidInput, match="Non c'è una ricetta chiamata nessuna"):
        svc.recipes.fill("nessuna", {}, "it")
    with pytest.raises(InvalidInput) as refused:  # a hostile name is not echoed whole
        svc.recipes.get("<b>\x00" + "x" * 10_000, "de")
    assert str(refused.value) == "Es gibt kein Rezept namens <b>" + "x" * 36 + "."


def test_a_short_text_is_taken_as_written_and_anything_that_could_break_code_refused() -> None:
    # No recipe has a text blank yet; the form offers the kind, so its check is proved here.
    from scriba.service.recipes import _checked

    blank = Blank("motto", "Motto", "", "text", "")
    assert _checked(blank, "  Viva la Nomic!  ", "it", in_game=False) == "Viva la Nomic!"
    for bad in _bad_values(blank):
        with pytest.raises(InvalidInput, match="^Motto: scrivi al massimo 80 caratteri"):
            _checked(blank, bad, "it", in_game=False)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_office_name_the_form_allows_makes_code_that_compiles(svc: Service,
                                                                     language: str) -> None:
    # The scenarios play each office blank with its default (an office the game has); the
    # longest, oddest name the check lets through must make working code too.
    longest = "Ü" + "ß" * 29 + " " + "ü-" * 15 + " " + "9" * 30
    for recipe in _recipes(svc, language).values():
        offices = {b.name: longest for b in recipe.blanks if b.kind == "office"}
        for ruleset in recipe.fits if offices else ():
            rule = svc.recipes.fill(recipe.name, offices, language, ruleset=ruleset)
            assert longest in rule.text
            checked = svc.checks.code(rule.code, language)
            assert (checked["refused"], checked["warnings"]) == (None, []), recipe.name

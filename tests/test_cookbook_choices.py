"""A choice in a recipe writes code, not a constant the rule then tests against itself: the
rule a player proposes reads as what it does (issue 23: "if "author" == "author":" was
what the bonus recipe put in the rule's code)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from scriba.service import Service

# Two quoted constants compared: a test whose answer the filled rule already knows.
_CONSTANT_TEST = re.compile(r'"[^"\n]*"\s*(?:==|!=)\s*"[^"\n]*"')


@pytest.fixture(scope="module")
def svc(make_service: Any) -> Iterator[Service]:
    service = make_service("sqlite://")
    yield service
    service.close()


def test_no_filled_recipe_compares_two_constants(svc: Service) -> None:
    checked = 0
    for recipe in svc.recipes.list("en"):
        for blank in recipe.blanks:
            for value, _label in blank.choices if blank.kind == "choice" else ():
                for ruleset in recipe.fits:
                    code = svc.recipes.fill(recipe.name, {blank.name: value}, "en",
                                            ruleset=ruleset).code
                    assert not _CONSTANT_TEST.search(code), (recipe.name, value, code)
                    checked += 1
    assert checked > 0


def test_the_bonus_goes_to_whom_the_choice_names_in_the_code(svc: Service) -> None:
    author = svc.recipes.fill("bonus_for_adoption", {"who": "author"}, "en",
                              ruleset="suber").code
    supporters = svc.recipes.fill("bonus_for_adoption", {"who": "supporters"}, "en",
                                  ruleset="suber").code
    assert 'gainers = [proposal["author"]]' in author
    assert 'vote["choice"] == "for"' in supporters and '"author"' not in supporters

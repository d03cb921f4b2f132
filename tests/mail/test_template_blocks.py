"""Every recipe's ``template`` answer, in every reader's language, for every bundled
ruleset it fits: the proposal block in it reads back (through the letters' own reader,
:func:`scriba.mail.reading.read_commands`) as one proposal of exactly the rule the recipe
writes — its title, text and code — so what a player sends back as it came is what the
cookbook tested."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scriba.mail.reading import read_commands
from scriba.mail.recipes import END, PROPOSE, template_reply
from scriba.mail.requests import REQUESTS, split
from scriba.service import Service, open_service
from scriba.service.recipes import Recipes

RULESETS = sorted({ruleset for recipe in Recipes(None).list("en") for ruleset in recipe.fits})


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    svc = open_service("sqlite://")
    for ruleset in RULESETS:
        svc.commands.create_game(ruleset, game_id=ruleset, players=["Anna", "Bruno"],
                                 offices={"GM": "Max"} if ruleset == "anderwelt" else None)
    yield svc
    svc.close()


def _block(answer: str, language: str) -> str:
    lines = answer.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(PROPOSE[language] + ":"))
    end = next(i for i in range(start, len(lines)) if lines[i] == END[language])
    return "\n".join(lines[start:end + 1]) + "\n"


@pytest.mark.parametrize("ruleset", RULESETS)
@pytest.mark.parametrize("language", ["en", "it", "de"])
def test_each_block_reads_back_as_the_recipes_rule(service: Service, ruleset: str,
                                                   language: str) -> None:
    actions = service.reads.declared_actions(ruleset)
    labels = service.reads.words(ruleset, language).action_texts
    game_language = service.reads.status(ruleset)["language"]
    recipes = service.recipes.list(language, ruleset)
    listing = template_reply(service, ruleset, language, "")
    assert all(f"- {r.name}: {r.title}" in listing for r in recipes), listing
    for recipe in recipes:
        answer = template_reply(service, ruleset, language, recipe.name)
        for blank in recipe.blanks:
            assert f"- {blank.name}: {blank.label}." in answer, answer
        reading = read_commands(_block(answer, language), "", actions, labels, language)
        assert len(reading.items) == 1 and not reading.unclear, (recipe.name, answer)
        rule = service.recipes.fill(recipe.name, {}, game_language, ruleset)
        assert reading.items[0].args["changes"] == [
            {"enact": {"title": rule.title, "text": rule.text, "code": rule.code}}], \
            (recipe.name, reading.items[0].args)


def test_the_request_words_in_three_languages() -> None:
    assert "template" in REQUESTS
    for line, argument in (("template", ""), ("Modello bonus_for_adoption points=3",
                                              "bonus_for_adoption points=3"),
                           ("Bitte Vorlage win_condition", "win_condition"),
                           ("ricette", "")):
        [asked], rest = split(f"{line}\n", frozenset())
        assert (asked.request.name, asked.argument) == ("template", argument)
        assert not rest.strip()

"""Every action and parameter of every bundled ruleset has a label in the ruleset's
language and in English (``[labels.actions]`` of its ruleset.toml, or the pages' own word
for what every game has), the loader refuses a malformed table, a reader gets the words
in their language or else the ruleset's, and a compile error of a proposed rule reads as
such, its compiler lines kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriba.kernel.checking import KIND_PARAMS
from scriba.rulesets import RulesetError, action_labels, list_rulesets, load_ruleset
from scriba.service import Service

RULESETS = list_rulesets()


def languages(texts: dict[str, str], ruleset_language: str) -> set[str]:
    return {lang or ruleset_language for lang in texts}


@pytest.mark.parametrize("ruleset", RULESETS, ids=lambda r: r.id)
def test_every_action_and_parameter_has_a_label(ruleset, service: Service) -> None:
    game = service.commands.create_game(ruleset.id, players=["Anna", "Bruno", "Carla"],
                                        start="2026-03-01T10:00:00Z").game_id
    told = ruleset.labels.get("actions") or {}
    declared = service.reads.declared_actions(game)
    wanted = {ruleset.language, "en"}
    for action in declared:
        assert action.name in told, (ruleset.id, action.name)
        assert wanted <= languages(told[action.name]["label"], ruleset.language), \
            (ruleset.id, action.name)
        for param in action.params:
            if param in KIND_PARAMS.get(action.kind, {}):
                continue  # a proposal's title, a vote's choice: the pages' own words
            label = told[action.name]["params"].get(param, {}).get("label") or {}
            assert wanted <= languages(label, ruleset.language), (ruleset.id, action.name,
                                                                 param)
    # No label for an action the rules do not declare (a name mistyped, a rule gone).
    assert set(told) <= {a.name for a in declared}, ruleset.id


def test_a_reader_gets_the_words_in_their_language_else_the_rulesets(
        service: Service) -> None:
    game = service.commands.create_game("equinomic", players=["Anna", "Bruno"],
                                        start="2026-03-01T10:00:00Z").game_id
    english = service.reads.words(game, "en").action("propose")
    assert (english.label.text, english.label.lang) == ("Propose a change", "en")
    assert english.params["in_vigore_dal"][0].text == "In force from"
    german = service.reads.words(game, "de").action("propose")  # none in German: Italian
    assert (german.label.text, german.label.lang) == ("Proponi un cambiamento", "it")
    assert german.params["in_vigore_dal"][1].lang == "it"
    assert service.reads.words(game, "it").action("no_such_action").label is None


@pytest.mark.parametrize("table", [
    {"vote": {"help": {"en": "x"}}},  # no label
    {"vote": {"label": {"en": ""}}},  # an empty text
    {"vote": {"label": "Vote", "params": {"choice": {"label": "x", "hint": "y"}}}},
    {"vote": {"label": "Vote", "colour": "red"}},
    {"vote": {"label": {"english": "Vote"}}},  # not a language code
    ["vote"],
])
def test_a_malformed_labels_table_is_refused(table) -> None:
    with pytest.raises(RulesetError):
        action_labels(table)


def test_a_rulesets_file_with_bad_action_labels_does_not_load(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    (folder / "rules").mkdir(parents=True)
    (folder / "ruleset.toml").write_text(
        'id = "bad"\n[labels.actions.vote]\nhelp = "no label"\n', encoding="utf-8")
    with pytest.raises(RulesetError, match="label"):
        load_ruleset("bad", root=tmp_path)
    assert load_ruleset("suber").labels["actions"]["roll"]["label"] == {"": "Roll the die"}


BROKEN = "def on_vote_cast(game, event):\n    return [std.set_var('a', 1\n"


@pytest.mark.parametrize("language, sentence", [
    ("en", "The new rule's code does not compile:"),
    ("it", "Il codice della nuova regola non compila:"),
    ("de", "Der Code der neuen Regel lässt sich nicht übersetzen:"),
])
def test_a_new_rules_compile_error_names_it_and_keeps_its_lines(
        service: Service, language: str, sentence: str) -> None:
    ruleset = {"en": "suber", "it": "equinomic", "de": "anderwelt"}[language]
    game = service.commands.create_game(ruleset, players=["Anna", "Bruno", "Carla"],
                                        offices={"GM": "Max"} if language == "de" else None,
                                        start="2026-03-01T10:00:00Z").game_id
    outcome = service.commands.perform(game, "Anna", "propose", {"changes": [
        {"enact": {"title": "Bonus", "text": "a) One point each.", "code": BROKEN}}]})
    assert not outcome.accepted
    first, *rest = outcome.message.splitlines()
    assert first == sentence
    assert "rule new" not in outcome.message and not first.endswith("error:")
    # The line shown, with the caret under its column, as a block indented by four spaces.
    assert "    2 |     return [std.set_var('a', 1" in rest, outcome.message
    assert any(line.startswith("      |") and line.endswith("^") for line in rest)

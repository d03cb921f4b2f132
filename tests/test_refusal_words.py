"""A refusal names what the player sees on the form — the action's and its fields' labels,
what a field takes — in the game's language, not the rule code's names ("question",
"int", "call_for_judgment")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scriba.service import Service

START = "2026-03-01T10:00:00Z"


@pytest.fixture(scope="module")
def svc(make_service: Any) -> Iterator[Service]:
    service = make_service("sqlite://")
    yield service
    service.close()


def test_a_missing_field_is_named_by_its_label(svc: Service) -> None:
    game = svc.commands.create_game("nomic3", players=["Ada", "Bo", "Cy"], start=START).game_id
    outcome = svc.commands.perform(game, "Bo", "appeal", {})
    assert not outcome.accepted
    assert outcome.message == "'Appellati al Giudice' richiede 'La questione'."


def test_a_field_of_the_wrong_kind_says_what_it_takes(svc: Service) -> None:
    game = svc.commands.create_game("nomic3", players=["Ada", "Bo", "Cy"], start=START).game_id
    outcome = svc.commands.perform(game, "Bo", "appeal", {"question": "?", "rule": "9999"})
    assert not outcome.accepted and "9999" in outcome.message
    outcome = svc.commands.perform(game, "Bo", "appeal", {"question": ["a"]})
    assert not outcome.accepted
    assert outcome.message.startswith("'Appellati al Giudice': 'La questione' deve essere "
                                      "un testo"), outcome.message


def test_an_unknown_field_lists_the_fields_by_their_labels(svc: Service) -> None:
    game = svc.commands.create_game("nomic3", players=["Ada", "Bo", "Cy"], start=START).game_id
    outcome = svc.commands.perform(game, "Bo", "appeal", {"question": "?", "colour": "red"})
    assert not outcome.accepted
    assert "'La questione'" in outcome.message and "'Regola in questione'" in outcome.message
    assert "proposal" not in outcome.message

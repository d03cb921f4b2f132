"""Input validated at the service boundary: the findings of issue 8 ("Bad input") and a
property test of hostile names, texts and argument values."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriba.service import Service, validation
from scriba.service.errors import GameExists, InvalidInput

START = "2026-03-01T10:00:00Z"
ENACT = {"enact": {"title": "Saluti", "text": "Ogni giocatore saluta."}}


def equinomic(service: Service, game: str = "eq") -> str:
    return service.commands.create_game("equinomic", game_id=game, start=START,
                                        players=["Anna", "Bruno", "Carla"]).game_id


def assert_replay_equal(service: Service, game: str) -> None:
    assert service.reads.replay(game).to_json() == service.reads.load(game).to_json()


# --- names ----------------------------------------------------------------------------

def test_a_name_with_an_undecodable_byte_is_refused_and_the_game_still_works(service):
    # What Python makes of `scriba player add eq1 $'Ren\xe9'`: a lone surrogate.
    game = equinomic(service)
    with pytest.raises(InvalidInput, match="UTF-8"):
        service.commands.add_player(game, "Ren\udce9")
    with pytest.raises(InvalidInput, match="UTF-8"):
        service.commands.add_player(game, b"Ren\xe9")  # type: ignore[arg-type]
    assert "Ren\udce9" not in service.reads.load(game).players
    # the rules are still enforced: only the author's turn, status answers, export works
    assert service.commands.perform(game, "Anna", "propose", {"label": "p1",
                                                              "changes": [ENACT]}).accepted
    assert not service.commands.perform(game, "Anna", "propose",
                               {"label": "p2", "changes": [ENACT]}).accepted
    assert service.reads.query(game, "status") is not None
    assert len(list(service.commands.export_game(game))) == service.reads.load(game).seq
    assert_replay_equal(service, game)


@pytest.mark.parametrize("name, message", [
    ("", "vuoto"), ("   ", "vuoto"), ("\u200b", "vuoto"),
    (" Anna2", "spazio"), ("Dora ", "spazio"),
    ("Do\u200bra", "U+200B"), ("\x1b[31mDora", "U+001B"), ("Do\nra", "U+000A"),
    ("Do\u202era", "U+202E"), ("x" * 65, "troppo lungo"), ("x" * 100_000, "troppo lungo"),
])
def test_bad_names_are_refused_in_the_games_language(service, name, message):
    game = equinomic(service)
    with pytest.raises(InvalidInput, match=re.escape(message)):
        service.commands.add_player(game, name)
    assert set(service.reads.load(game).players) == {"Anna", "Bruno", "Carla"}


@pytest.mark.parametrize("name", ["\u0410nna", "ANNA", "anna", "\u0412runo", "Carl\u0430",
                                  "Brun\u043e", "\u0391nna", "CarIa"])
def test_look_alike_names_are_refused(service, name):
    # Cyrillic А, В, а, о; Greek Α; another case; a capital I for an l
    game = equinomic(service)
    with pytest.raises(InvalidInput, match="somiglia"):
        service.commands.add_player(game, name)


def test_names_are_stored_in_nfc(service):
    game = equinomic(service)
    assert service.commands.add_player(game, "Rene\u0301").accepted
    assert "Ren\u00e9" in service.reads.load(game).players
    with pytest.raises(InvalidInput, match="somiglia"):
        service.commands.add_player(game, "R\u0435n\u00e9")  # a Cyrillic е


def test_markup_names_are_stored_as_text(service):
    game = equinomic(service)
    for name in ("[/red]", "[white]Dora[/]"):
        assert service.commands.add_player(game, name).accepted
    assert "[/red]" in service.reads.load(game).players
    assert_replay_equal(service, game)


def test_initial_players_are_checked_against_each_other(service):
    with pytest.raises(InvalidInput, match="somiglia"):
        service.commands.create_game("equinomic", game_id="eq", start=START,
                                     players=["Anna", "\u0410nna"])
    with pytest.raises(InvalidInput, match="vuoto"):
        service.commands.create_game("equinomic", game_id="eq", start=START, players=["Anna", " "])
    assert service.reads.games() == []


# --- game ids, commands, sizes ----------------------------------------------------------

@pytest.mark.parametrize("game_id", ["../etc", "a b", "", "x" * 65, "-x", "é", "a/b"])
def test_game_ids_are_safe_slugs(service, game_id):
    with pytest.raises(InvalidInput):
        service.commands.create_game("equinomic", game_id=game_id, start=START)


def test_a_duplicate_game_id_is_game_exists(service):
    equinomic(service)
    with pytest.raises(GameExists, match="eq"):
        equinomic(service)


def test_argument_values_are_checked_and_nothing_is_recorded(service):
    game = equinomic(service)
    seq = service.reads.load(game).seq
    deep: object = "x"
    for _ in range(200):
        deep = [deep]
    bad_args = [
        {"label": "p1", "changes": [ENACT], "title": "t" * (validation.TITLE_MAX + 1)},
        {"label": "p1", "changes": [{"enact": {"title": "T", "text": "x" * 100_001}}]},
        {"label": "p1", "changes": [{"enact": {"title": "T", "code": "x" * 100_001}}]},
        {"label": "p1", "changes": [ENACT] * (validation.CHANGES_MAX + 1)},
        {"label": deep, "changes": [ENACT]},
        {"label": "p\udce9", "changes": [ENACT]},
        {"label": "p\x1b[2J", "changes": [ENACT]},
        {"label": float("nan"), "changes": [ENACT]},
        {f"k{i}": "v" for i in range(validation.ARGS_MAX + 1)},
        {"bad key": "v"},
    ]
    for args in bad_args:
        with pytest.raises(InvalidInput):
            service.commands.perform(game, "Anna", "propose", args)
    with pytest.raises(InvalidInput):
        service.commands.perform(game, "Anna\u200b", "propose", {"changes": [ENACT]})
    assert service.reads.load(game).seq == seq
    assert service.commands.store.inbound(game) == []


def test_a_one_megabyte_title_is_refused():
    with pytest.raises(InvalidInput, match="too long"):
        validation.text("t" * 1_000_000, "title", "en", validation.TITLE_MAX)


def test_limits_table_names_every_limit():
    assert {k for k in validation.LIMITS} >= {"name", "title", "text", "code", "arg_text",
                                              "changes", "depth", "game_id"}
    assert all(isinstance(v[0], int) and v[1] for v in validation.LIMITS.values())


# --- the property: hostile input is refused clearly or stored harmlessly -----------------

HOSTILE = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.sampled_from(list("Aa[]/\x1b\u200b\u202e\n \u0410\u0301\ud800é")),
            max_size=20),
    st.sampled_from(["[/red]", "[bold]x[/]", "\x1b[31m", "Ren\udce9", " ", "", "Anna",
                     "\u0410nna", "x" * 70, "Rule 301: does it bind?", "yes"]),
)
VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), HOSTILE,
                                st.floats(allow_nan=True)),
                      lambda inner: st.lists(inner, max_size=3) |
                      st.dictionaries(HOSTILE, inner, max_size=3), max_leaves=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.sampled_from(["join", "propose", "vote", "other"]),
                                HOSTILE, VALUES), min_size=1, max_size=6))
def test_hostile_input_is_refused_clearly_or_stored_harmlessly(make_service, steps):
    service = make_service("sqlite://")  # rule code in-process: no sandbox per example
    try:
        game = equinomic(service, "prop")
        for kind, text_value, value in steps:
            try:
                if kind == "join":
                    service.commands.add_player(game, text_value)
                elif kind == "propose":
                    service.commands.perform(game, "Anna", "propose",
                                             {"label": text_value, "title": value,
                                     "changes": [{"enact": {"title": text_value,
                                                            "text": "t"}}]})
                elif kind == "vote":
                    service.commands.perform(game, text_value, "vote",
                                             {"proposal": value, "choice": text_value})
                else:
                    service.commands.perform(game, "Bruno", text_value, {"x": value})
            except InvalidInput as refusal:
                assert str(refusal) and "Traceback" not in str(refusal)
        state = service.reads.load(game)
        # every stored string is valid, NFC, and names have no control characters
        json.dumps(state.to_dict(), ensure_ascii=False).encode("utf-8")
        for name in state.players:
            assert validation.name(name, "en") == name
        players = list(state.players)
        assert all(validation.look_alike(p, players) is None for p in players)
        # the game still enforces its rules: a non-player is refused, status answers
        assert not service.commands.perform(game, "Nobody-at-all", "propose",
                                            {"changes": [ENACT]}).accepted
        assert service.reads.query(game, "status") is not None
        assert_replay_equal(service, game)
    finally:
        service.close()

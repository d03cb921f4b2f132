"""Nothing a rule stores or returns can poison its game (issue 8, "A rule can poison its
game"): each hostile rule is adopted for real, then a proposal repealing it must still be
voted, counted and adopted, and the replay must equal the live state."""

from __future__ import annotations

import pytest

from scriba.kernel.engine import Command
from scriba.kernel.errors import Refused
from scriba.kernel.limits import (
    MAX_EFFECTS_PER_CALL,
    MAX_EVENTS_PER_COMMAND,
    MAX_REACTION_DEPTH,
    MAX_VALUE_DEPTH,
)
from scriba.service import Service
from scriba.service.errors import InvalidInput

PLAYERS = ["Anna", "Bruno", "Carla"]


@pytest.fixture
def game(service: Service) -> str:
    return service.commands.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                                        players=PLAYERS).game_id


def play_turn(service: Service, game: str, changes: list) -> dict:
    """The player whose turn it is proposes; everyone else votes in favour."""
    author = service.reads.load(game).vars["turn"]
    outcome = service.commands.perform(game, author, "propose", {"changes": changes})
    assert outcome.accepted, outcome.message
    number = outcome.events[0]["payload"]["number"]
    for voter in PLAYERS:
        if voter != author:
            vote = service.commands.perform(game, voter, "vote", {"proposal": number,
                                                                  "choice": "favorevole"})
            assert vote.accepted, vote.message
    return service.reads.load(game).proposals[str(number)]


def enact(service: Service, game: str, *codes: str) -> list[str]:
    """Adopt rules with this code, one a turn (EquiNomic's proposals make one change)."""
    before = set(service.reads.load(game).rules)
    for i, code in enumerate(codes):
        proposal = play_turn(service, game, [{"enact": {"title": f"Bad {i}", "text": "x",
                                                        "code": code}}])
        assert proposal["status"] == "adopted"
    return sorted(set(service.reads.load(game).rules) - before)


def aborts(service: Service, game: str, since: int = 0) -> list[dict]:
    return [e["payload"] for e in service.reads.log(game)
            if e["type"] == "rule_code_aborted" and e["seq"] > since]


def assert_repeal_still_counts(service: Service, game: str, rules: list[str]) -> None:
    for rule in rules:
        assert play_turn(service, game, [{"repeal": {"rule": rule}}])["status"] == "adopted"
    state = service.reads.load(game)
    assert not any(state.rules[r]["in_force"] for r in rules)
    assert service.reads.replay(game).to_json() == state.to_json()
    # and the game plays on as before
    assert play_turn(service, game, [{"enact": {"title": "After", "text": "y"}}])["status"] \
        == "adopted"


DEEP = '''
def on_vote_cast(game, event):
    value = []
    for i in range(200):
        value = [value]
    return [{"effect": "set_var", "name": "deep", "value": value}]
'''


def test_a_value_nested_200_deep_is_refused_and_never_stored(service, game):
    bad = enact(service, game, DEEP)
    seq = service.reads.load(game).seq
    play = play_turn(service, game, [{"enact": {"title": "Next", "text": "n"}}])
    assert play["status"] == "adopted"
    reasons = [a["reason"] for a in aborts(service, game, seq) if a["rule"] == bad[0]]
    assert reasons and all(f"nested more than {MAX_VALUE_DEPTH} levels" in r for r in reasons)
    assert "deep" not in service.reads.load(game).vars
    assert_repeal_still_counts(service, game, bad)


MANY = '''
def on_vote_cast(game, event):
    return [{"effect": "notice", "text": "n" + str(i)} for i in range(1200)]
'''


def test_more_than_1000_effects_abort_the_rule_not_the_vote(service, game):
    bad = enact(service, game, MANY)
    seq = service.reads.load(game).seq
    author = service.reads.load(game).vars["turn"]
    outcome = service.commands.perform(game, author, "propose",
                                       {"changes": [{"enact": {"title": "N", "text": "n"}}]})
    voter = next(p for p in PLAYERS if p != author)
    vote = service.commands.perform(game, voter, "vote", {"proposal": outcome.events[0]["payload"][
        "number"], "choice": "favorevole"})
    assert vote.accepted, vote.message
    reasons = [a["reason"] for a in aborts(service, game, seq) if a["rule"] == bad[0]]
    assert any(f"returned 1200 effects; one call may return at most {MAX_EFFECTS_PER_CALL}"
               in r for r in reasons)
    assert not [n for n in service.reads.load(game).notices if n["text"] == "n1"]
    third = next(p for p in PLAYERS if p not in (author, voter))
    assert service.commands.perform(game, third, "vote", {"proposal": outcome.events[0]["payload"][
        "number"], "choice": "favorevole"}).accepted
    assert_repeal_still_counts(service, game, bad)


PING = '''
def notices():
    return ["ping"]

def on_vote_cast(game, event):
    return [{"effect": "notice", "kind": "ping", "text": "ping"}]

def on_notice(game, event):
    if event.get("kind") == "pong":
        return [{"effect": "notice", "kind": "ping", "text": "ping"}]
    return []
'''
PONG = '''
def notices():
    return ["pong"]

def on_notice(game, event):
    if event.get("kind") == "ping":
        return [{"effect": "notice", "kind": "pong", "text": "pong"}]
    return []
'''


def test_two_rules_triggering_each_other_are_stopped_with_a_clear_reason(service, game):
    bad = enact(service, game, PING, PONG)
    seq = service.reads.load(game).seq
    play = play_turn(service, game, [{"enact": {"title": "Next", "text": "n"}}])
    assert play["status"] == "adopted"
    reasons = [a["reason"] for a in aborts(service, game, seq)]
    assert any(f"hooks triggered hooks more than {MAX_REACTION_DEPTH} times" in r
               for r in reasons)
    assert_repeal_still_counts(service, game, bad)


FLOOD = '''
def notices():
    return ["flood"]

def on_vote_cast(game, event):
    return [{"effect": "notice", "kind": "flood", "text": "f"}]

def on_notice(game, event):
    if event.get("kind") == "flood":
        return [{"effect": "notice", "kind": "flood", "text": "f"} for i in range(3)]
    return []
'''


def test_reactions_that_multiply_stop_at_the_events_cap(service, game):
    bad = enact(service, game, FLOOD)
    seq = service.reads.load(game).seq
    play = play_turn(service, game, [{"enact": {"title": "Next", "text": "n"}}])
    assert play["status"] == "adopted"
    reasons = [a["reason"] for a in aborts(service, game, seq)]
    assert any(f"reached {MAX_EVENTS_PER_COMMAND} events" in r or
               f"past {MAX_EVENTS_PER_COMMAND} events" in r for r in reasons)
    assert_repeal_still_counts(service, game, bad)


FORGER = '''
def actions():
    return [{"name": "forge"}]

def on_action_taken(game, event):
    if event["action"] != "forge":
        return []
    return [{"effect": "change_rules",
             "changes": [{"enact": {"title": "Forged", "text": "f"}}],
             "cause": {"kind": "proposal", "proposal": 1, "author": "Carla",
                       "title": "Carla's idea"}}]
'''


def test_a_rule_cannot_credit_its_change_to_another_players_proposal(service, game):
    bad = enact(service, game, FORGER)
    seq = service.reads.load(game).seq
    assert service.commands.perform(game, "Bruno", "forge", {}).accepted
    state = service.reads.load(game)
    assert not [r for r in state.rules.values() if r["title"] == "Forged"]
    reasons = [a["reason"] for a in aborts(service, game, seq) if a["rule"] == bad[0]]
    assert reasons == ["a change may cite proposal 1 as its cause only in reaction to an "
                       "event about that proposal"]
    assert_repeal_still_counts(service, game, bad)


CITES_OWN_RULE = '''
def actions():
    return [{"name": "decree"}]

def on_action_taken(game, event):
    if event["action"] != "decree":
        return []
    return [{"effect": "change_rules",
             "changes": [{"enact": {"title": "Decreed", "text": "d"}}],
             "cause": {"kind": "decree", "rule": "101", "by": event["actor"]}}]
'''


def test_a_cause_of_its_own_kind_names_the_rule_that_really_made_the_change(service, game):
    bad = enact(service, game, CITES_OWN_RULE)
    assert service.commands.perform(game, "Bruno", "decree", {}).accepted
    decreed = [r for r in service.reads.load(game).rules.values() if r["title"] == "Decreed"]
    assert decreed[0]["history"][-1]["cause"] == {"kind": "decree", "rule": bad[0],
                                                  "by": "Bruno"}


@pytest.mark.parametrize(("declaration", "complaint"), [
    # The game is Italian: what is wrong is told in Italian, at the declaration's line.
    ('[{"help": "no name"}]', "La voce 1 di `actions()` non ha un nome"),
    ('[{"name": "x", "params": {"n": "integer"}}]',
     "Il parametro `n` dell'azione `x` ha il tipo `integer`"),
    ('[{"name": "x", "params": ["n"]}]', "I parametri dell'azione `x` devono essere un "
                                         "dizionario"),
    ('[{"name": "x", "who": "king"}]', "Chi può compiere l'azione `x` è indicato come `king`"),
    ('[{"name": "x", "kind": "vote", "choices": ["si"]}]',
     "Le `choices` dell'azione `x` devono associare"),
    ('{"name": "x"}', "`actions()` deve restituire una lista"),
])
def test_a_malformed_declaration_is_refused_when_proposed(service, game, declaration,
                                                          complaint):
    code = f"def actions():\n    return {declaration}\n"
    author = service.reads.load(game).vars["turn"]
    outcome = service.commands.perform(game, author, "propose", {"changes": [
        {"enact": {"title": "Bad", "text": "x", "code": code}}]})
    assert not outcome.accepted
    assert complaint in outcome.message
    assert not service.reads.load(game).open_proposals()


def test_malformed_variables_and_offices_are_refused_when_proposed(service, game):
    author = service.reads.load(game).vars["turn"]
    for code, complaint in (
            ('def variables():\n    return [{"scope": "game"}]\n', "La voce 1 di `variables()`"),
            ('def variables():\n    return [{"name": "v", "scope": "team"}]\n',
             "La variabile `v` ha l'ambito `team`"),
            ('def offices():\n    return [{"label": {"it": "Re"}}]\n', "La voce 1 di `offices()`")):
        outcome = service.commands.perform(game, author, "propose", {"changes": [
            {"enact": {"title": "Bad", "text": "x", "code": code}}]})
        assert not outcome.accepted and complaint in outcome.message, outcome.message


def test_a_player_cannot_send_a_deeply_nested_argument(service, game):
    author = service.reads.load(game).vars["turn"]
    value: list = []
    for _ in range(200):
        value = [value]
    before = service.reads.load(game).seq
    # Refused at the service's boundary, before anything is kept (the kernel refuses
    # the same for any caller that reaches it: see test_kernel_refuses_a_deep_argument).
    with pytest.raises(InvalidInput, match="8"):
        service.commands.perform(game, author, "propose", {"changes": [
            {"enact": {"title": "Deep", "text": "x", "attributes": {"deep": value}}}]})
    assert service.reads.load(game).seq == before


def test_kernel_refuses_a_deep_argument(service, game):
    state = service.reads.load(game)
    author = state.vars["turn"]
    value: list = []
    for _ in range(200):
        value = [value]
    command = Command(author, "propose", {"changes": [
        {"enact": {"title": "Deep", "text": "x", "attributes": {"deep": value}}}]})
    with pytest.raises(Refused) as refused:
        service.commands.engine.handle(state, command, state.time)
    assert refused.value.message_id == "argument_not_plain"
    assert f"more than {MAX_VALUE_DEPTH} levels" in refused.value.params["reason"]

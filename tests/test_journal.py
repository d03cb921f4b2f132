"""A trial leaves the state exactly as it was: values and the order of every dict."""

from __future__ import annotations

import json
import pickle

from scriba.bench.sizes import AGORA_OFFICES, AGORA_PLAYERS, agora_events
from scriba.kernel.events import apply_event, make_event
from scriba.kernel.journal import trial
from scriba.kernel.state import GameState


def _ordered(state: GameState) -> str:
    # json without sort_keys: the dicts' order is compared too
    return json.dumps(state.to_dict(), ensure_ascii=False)


def test_a_trial_undoes_every_kind_of_event_exactly(service):
    service.commands.create_game("agora", game_id="a", start="2020-01-06T12:00:00Z",
                                 players=AGORA_PLAYERS, offices=AGORA_OFFICES)
    state = service.reads.load("a")
    for event in agora_events(30, state.seq + 1, state.time):
        apply_event(state, event)
    before = _ordered(state)
    copy = pickle.loads(pickle.dumps(state))
    time = state.time
    extra = [
        *agora_events(10, state.seq + 1, time),
        make_event("timer_set", time, None, id="t9", name="x", at=time, data={}, rule="955"),
        make_event("timer_fired", time, None, id="t9"),
        make_event("asset_set", time, None, kind="coin", id="c1", owner="nix", data={"v": 1}),
        make_event("asset_destroyed", time, None, kind="coin", id="c1"),
        make_event("vote_withdrawn", time, None, proposal=3, player="G."),
        make_event("player_status", time, None, player="Kate", status="left"),
        make_event("player_joined", time, None, player="Omd", vars={"x": 1}),
        make_event("office_set", time, None, office="Herald", holder="Omd"),
        make_event("notice", time, None, text="hello"),
        make_event("rule_changed", time, None, change={"type": "renumber", "rule": "869",
                                                       "to": "8690"}, cause={}),
        make_event("rule_changed", time, None, change={"type": "set_attribute", "rule": "955",
                                                       "name": "power", "value": "9"},
                   cause={}),
        make_event("winner_declared", time, None, players=["nix"], end=True),
    ]
    with trial(state):
        for seq, event in enumerate(extra, start=state.seq + 1):
            event["seq"] = seq
            apply_event(state, event)
        assert state.ended and "8690" in state.rules and "Omd" in state.players
    assert _ordered(state) == before
    assert _ordered(state) == _ordered(copy)
    assert state.open_proposals() == copy.open_proposals()


def test_a_command_makes_no_copy_of_the_whole_state(service, monkeypatch):
    game = service.commands.create_game("equinomic", game_id="eq", start="2026-03-01T10:00:00Z",
                                        players=["Anna", "Bruno", "Carla"]).game_id
    service.reads.load(game)

    def no_copy(self: GameState) -> GameState:
        raise AssertionError("the whole state was copied")

    monkeypatch.setattr(GameState, "copy", no_copy)
    outcome = service.commands.perform(game, "Anna", "propose", {"changes": [
        {"enact": {"title": "A", "text": "a"}}]})
    assert outcome.accepted, outcome.message
    assert service.commands.perform(game, "Bruno", "vote", {"proposal": 1, "choice": "favorevole"})
    assert service.reads.replay(game).to_json() == service.reads.load(game).to_json()

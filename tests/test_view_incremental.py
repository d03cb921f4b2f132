"""A vote costs what it touches: the view's keys and the request follow the change only.

The keys of the proposals' parts are kept up to date from the proposals that changed (the
log of proposal changes), through trials undone and states copied; they must always be
the keys made afresh. A request for a vote names the proposals' parts as a change from
keys the worker holds, so its size does not grow with the open proposals; the host's
mirror and the worker keep the same parts and keys, sweeps included.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scriba.bench.open import open_proposal_events
from scriba.bench.sizes import AGORA_OFFICES, AGORA_PLAYERS
from scriba.kernel import view as kernel_view
from scriba.kernel.events import apply_event
from scriba.kernel.journal import trial
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import to_ts
from scriba.kernel.view import build_view
from scriba.rulecode import viewparts
from scriba.rulecode.viewparts import PartStore
from scriba.service import Service

ECHO = ("def query_view(game, args):\n"
        "    return {k: v for k, v in game.items() if k != 'this_rule'}\n")


def _open_game(service: Service, count: int, game_id: str = "a") -> GameState:
    service.commands.create_game("agora", game_id=game_id, start="2020-01-06T12:00:00Z",
                        players=AGORA_PLAYERS, offices=AGORA_OFFICES)
    state = service.reads.load(game_id)
    for event in open_proposal_events(count, state.seq + 1, state.time,
                                      int(to_ts(state.time))):
        apply_event(state, event)
    return state


def _vote(state: GameState, number: int, voter: str, choice: str = "for") -> None:
    apply_event(state, {"seq": state.seq + 1, "type": "vote_cast", "time": state.time,
                        "actor": voter, "payload": {"proposal": number, "player": voter,
                                                    "choice": choice, "data": {}}})


def _fresh_keys(state: GameState, order: list[str]) -> list[str]:
    """The keys made afresh, with nothing remembered from earlier views."""
    kept = kernel_view._LAYOUTS.copy()
    kernel_view._LAYOUTS.clear()
    try:
        return build_view(state, order).proposals.keys
    finally:
        kernel_view._LAYOUTS.clear()
        kernel_view._LAYOUTS.update(kept)


def test_the_keys_kept_up_to_date_are_the_keys_made_afresh(service: Service) -> None:
    state = _open_game(service, 40)
    order = service.commands.engine.precedence(state)
    first = build_view(state, order).proposals
    assert first.keys == _fresh_keys(state, order)
    for round_ in range(12):
        number = 40 - round_ % 5
        _vote(state, number, AGORA_PLAYERS[round_ % 5])
        keys = build_view(state, order).proposals
        assert keys.keys == _fresh_keys(state, order)
        # made from keys known a change or two away (here the copy's, below): not afresh
        assert keys.base is not None and len(keys.changed) <= 2
        with trial(state):  # votes tried and undone, as the kernel does to look ahead
            _vote(state, 1, "Kate")
            _vote(state, 2, "Kate", "against")
            assert build_view(state, order).proposals.keys == _fresh_keys(state, order)
        assert build_view(state, order).proposals.keys == _fresh_keys(state, order)
        copy = state.copy()  # a copy carries the log: its keys are kept up to date too
        _vote(copy, 3, "nix")
        assert build_view(copy, order).proposals.keys == _fresh_keys(copy, order)
        assert build_view(state, order).proposals.keys == _fresh_keys(state, order)


def test_keys_follow_a_proposal_made_and_one_resolved(service: Service) -> None:
    state = _open_game(service, 10)
    order = service.commands.engine.precedence(state)
    build_view(state, order)
    apply_event(state, {"seq": state.seq + 1, "type": "proposal_resolved",
                        "time": state.time, "actor": None,
                        "payload": {"by_rule": "955", "proposal": 4, "outcome": "rejected",
                                    "tally": {}, "apply": False}})
    assert build_view(state, order).proposals.keys == _fresh_keys(state, order)
    _vote(state, 5, "nix")
    assert build_view(state, order).proposals.keys == _fresh_keys(state, order)


def _request_for_a_vote(service: Service, count: int, game_id: str) -> dict:
    state = _open_game(service, count, game_id)
    order = service.commands.engine.precedence(state)
    [warm] = service.commands.host.call([("echo", ECHO)], ["echo"], "query_view",
                               build_view(state, order), [{}])
    assert warm.error is None
    _vote(state, count, "nix")
    view = build_view(state, order)
    request, lines = viewparts.views_for([view], service.commands.host.pool.parts,
                                         service.commands.host._encoded)
    # what the worker makes of it is the whole view, as rule code sees it
    [result] = service.commands.host.call([("echo", ECHO)], ["echo"], "query_view", view, [{}])
    assert result.value == json.loads(json.dumps(view.to_dict()))
    return request


def test_a_vote_request_does_not_grow_with_the_open_proposals(service: Service) -> None:
    small = _request_for_a_vote(service, 5, "small")
    large = _request_for_a_vote(service, 400, "large")
    for request in (small, large):
        [sent_view] = request["views"]
        assert "keys" not in sent_view["proposals"]  # a change from what the worker holds
        assert len(sent_view["proposals"]["changed"]) == 1
        assert len(request["send"]) == 1  # the part of the proposal voted on
    # the same request but for ids and numbers: a few bytes apart, not 400 keys
    assert abs(len(json.dumps(large)) - len(json.dumps(small))) < 100


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 30), max_size=6),
                          st.lists(st.integers(0, 40), max_size=3), st.booleans()),
                min_size=1, max_size=60))
def test_the_mirror_and_the_worker_keep_the_same_keys(requests: list) -> None:
    """Requests as views_for makes them: entries, then the proposals' keys in full or as
    a change from keys held; sweeps (a few parts kept) never drop what a held view uses."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(viewparts, "KEPT_PARTS", 8)
        mirror: PartStore[None] = PartStore()
        worker: PartStore[str] = PartStore()
        keys = [f"p:{place}:0" for place in range(12)]
        next_id, version = 1, 0
        for entries, changes, afresh in requests:
            next_id += 1
            if version in mirror.proposals and not afresh:
                new = list(keys)
                changed = []
                for place in changes:
                    new[place % 12] = f"p:{place % 12}:{next_id}"
                    changed.append([place % 12, new[place % 12]])
                wire = {"id": next_id, "base": version, "changed": changed}
            else:
                new = [f"p:{place}:{next_id}" for place in range(12)]
                wire = {"id": next_id, "keys": new}
            keys, version = new, next_id
            views = [{"parts": [f"e{n}" for n in entries], "proposals": wire}]
            used = {*views[0]["parts"], *keys}
            send = sorted(used - mirror.items.keys())
            assert mirror.take([(key, None) for key in send], views) == ([], [keys])
            assert worker.take([(key, key) for key in send], views) == ([], [keys])
            assert list(mirror.items) == list(worker.items)
            assert list(mirror.proposals) == list(worker.proposals)
            for held in worker.proposals.values():
                assert set(held) <= worker.items.keys()
        assert len(worker.items) <= 12 * viewparts.HELD_VIEWS + 6 + 2 * 8


def test_a_worker_missing_the_keys_a_change_is_from_says_so() -> None:
    worker: PartStore[str] = PartStore()
    missing, _ = worker.take([("p:0:2", "x")], [{"parts": [], "proposals": {
        "id": 2, "base": 1, "changed": [[0, "p:0:2"]]}}])
    assert missing  # the host then sends everything again (reset_parts)


def test_keys_stay_kept_up_to_date_past_the_log_s_limit(service: Service) -> None:
    from scriba.kernel.state import PROPOSAL_LOG_LIMIT

    state = _open_game(service, 30)
    order = service.commands.engine.precedence(state)
    build_view(state, order)
    for index in range(PROPOSAL_LOG_LIMIT + 40):  # the log drops its older entries
        _vote(state, 1 + index % 30, AGORA_PLAYERS[index % 5])
        keys = build_view(state, order).proposals
        assert keys.base is not None and len(keys.changed) == 1
        if index % 37 == 0:
            assert keys.keys == _fresh_keys(state, order)
    assert build_view(state, order).proposals.keys == _fresh_keys(state, order)


def test_rule_code_sees_every_open_proposal_vote_after_vote(service: Service) -> None:
    """Views made from the last one, and now and then afresh from blocks of parts kept
    (only the blocks with a proposal voted on made again): always the whole view."""
    state = _open_game(service, 100)
    order = service.commands.engine.precedence(state)
    for index in range(40):  # past the longest chain of views made one from the last
        _vote(state, 1 + (index * 37) % 100, AGORA_PLAYERS[index % 5])
        view = build_view(state, order)
        [result] = service.commands.host.call([("echo", ECHO)], ["echo"], "query_view", view, [{}])
        assert result.value == json.loads(json.dumps(view.to_dict()))

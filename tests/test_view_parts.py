"""The game view reaches the workers part by part, and rule code still sees the whole view.

A part's key must always name the same content (else a worker would answer from a stale
copy); the host's mirror of a worker's parts must agree with the worker; a worker that
lost its parts gets them again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scriba.bench.sizes import AGORA_OFFICES, AGORA_PLAYERS, agora_events
from scriba.kernel.events import apply_event
from scriba.kernel.journal import trial
from scriba.kernel.view import build_view
from scriba.rulecode import viewparts
from scriba.rulecode.viewparts import EncodedParts, PartStore
from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

# A rule whose query hands back the view it was given, as the rule sees it.
ECHO = ("def query_view(game, args):\n"
        "    return {k: v for k, v in game.items() if k != 'this_rule'}\n")


class CheckedParts(EncodedParts):
    """Encodes every part again on every use and fails if a key ever named other content."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, bytes] = {}
        self.checked = 0

    def get(self, key, build):  # type: ignore[no-untyped-def]
        encoded = viewparts.encode(build())
        first = self.seen.setdefault(key, encoded)
        assert first == encoded, f"part {key} changed without a new key"
        self.checked += 1
        return encoded


# One scenario of each ruleset: between them every kind of event, refusals (trials undone)
# and rule changes.
SCENARIOS = sorted({p.parent.parent.name: p
                    for p in sorted(BUNDLED.glob("*/scenarios/*.yaml"))}.values())


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.parent.parent.name)
def test_a_part_key_always_names_the_same_content(path: Path, service: Service) -> None:
    host = service.commands.host
    checked = CheckedParts()
    kept, host._encoded = host._encoded, checked
    try:
        assert run_scenario(service.commands, load_scenario(path)).errors == []
    finally:
        host._encoded = kept
    assert checked.checked > 0  # the scenario's rules were called with game views


def _agora(service: Service, resolved: int) -> str:
    service.commands.create_game("agora", game_id="a", start="2020-01-06T12:00:00Z",
                                 players=AGORA_PLAYERS, offices=AGORA_OFFICES)
    state = service.reads.load("a")
    for event in agora_events(resolved, state.seq + 1, state.time):
        apply_event(state, event)
    return "a"


def _echo(service: Service, state) -> dict:  # type: ignore[no-untyped-def]
    view = build_view(state, service.commands.engine.precedence(state))
    [result] = service.commands.host.call([("echo", ECHO)], ["echo"], "query_view", view, [{}])
    assert result.error is None, result.error
    return result.value


def _expected(service: Service, state) -> dict:  # type: ignore[no-untyped-def]
    view = build_view(state, service.commands.engine.precedence(state)).to_dict()
    return json.loads(json.dumps(view))


@pytest.mark.parametrize("host_kind", ["in-process", "sandbox"])
def test_rule_code_sees_the_whole_view_as_it_changes(host_kind: str,
                                                      request: pytest.FixtureRequest) -> None:
    # real workers only for the sandbox case
    service = request.getfixturevalue("sandbox_service" if host_kind == "sandbox"
                                      else "service")
    service.commands.create_game("agora", game_id="a", start="2020-01-06T12:00:00Z",
                                 players=AGORA_PLAYERS, offices=AGORA_OFFICES)
    state = service.reads.load("a")
    events = agora_events(110, state.seq + 1, state.time)
    cut = len(events) * 4 // 5
    for event in events[:cut]:
        apply_event(state, event)
    assert _echo(service, state) == _expected(service, state)
    # proposals made, voted on and resolved one event at a time
    for index, event in enumerate(events[cut:]):
        apply_event(state, event)
        if index % 5 == 0:
            assert _echo(service, state) == _expected(service, state), f"after {event}"
    # the same proposals, other parts changed, many times over (views made one from the
    # last, and afresh now and then)
    for round_ in range(40):
        apply_event(state, {"seq": state.seq + 1, "type": "var_set", "time": state.time,
                            "actor": None, "payload": {"player": "nix", "name": "coins",
                                                       "value": round_}})
        if round_ % 3 == 0:
            apply_event(state, {"seq": state.seq + 1, "type": "office_set",
                                "time": state.time, "actor": None,
                                "payload": {"office": "Herald", "holder": "Kate"}})
        assert _echo(service, state) == _expected(service, state)
    with trial(state):  # changed, then undone: the view follows both ways
        for event in agora_events(3, state.seq + 1, state.time, seed=9)[:8]:
            apply_event(state, {**event, "payload": {**event["payload"], "number": 999}}
                        if event["type"] == "proposal_submitted" else event)
        assert _echo(service, state) == _expected(service, state)
    assert _echo(service, state) == _expected(service, state)


def test_a_long_game_sends_only_what_changed(service: Service) -> None:
    state = service.reads.load(_agora(service, 200))
    host = service.commands.host
    _echo(service, state)
    vote = {"seq": state.seq + 1, "type": "vote_cast", "time": state.time, "actor": "nix",
            "payload": {"proposal": 200, "player": "nix", "choice": "FOR"}}
    apply_event(state, vote)
    request, lines = viewparts.views_for([build_view(state,
                                                     service.commands.engine.precedence(state))],
                                         host.pool.parts, host._encoded)
    assert len(request["send"]) == 1  # the part holding the proposal voted on, no other
    assert '"200":' in lines.decode()


def test_a_worker_that_lost_its_parts_gets_them_again(service: Service) -> None:
    state = service.reads.load(_agora(service, 30))
    _echo(service, state)
    service.commands.host.pool.worker.box.parts.clear()  # e.g. a worker restarted behind our back
    assert _echo(service, state) == _expected(service, state)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 700), max_size=40), min_size=1, max_size=60))
def test_the_mirror_and_the_worker_keep_the_same_parts(requests: list[list[int]]) -> None:
    mirror: PartStore[None] = PartStore()
    worker: PartStore[str] = PartStore()
    for used in requests:
        keys = dict.fromkeys(f"k{n}" for n in used)
        send = [key for key in keys if key not in mirror.items]
        views = [{"parts": list(keys)}]
        assert mirror.take([(key, None) for key in send], views) == ([], [[]])
        assert worker.take([(key, key) for key in send], views) == ([], [[]])
        assert list(mirror.items) == list(worker.items)
        assert keys.keys() <= worker.items.keys()
    # dropped in sweeps: never more than the parts of a request and twice what is kept
    assert len(worker.items) <= max(map(len, requests)) + 2 * viewparts.KEPT_PARTS


def test_two_games_never_share_a_part_key(service: Service) -> None:
    keys = []
    for game_id in ("g1", "g2"):  # two games alike but for their ids
        service.commands.create_game("equinomic", game_id=game_id, start="2026-01-01T00:00:00Z",
                                     players=["Anna", "Bruno", "Carla"])
        state = service.reads.load(game_id)
        keys.append({p.key for p in build_view(state,
                                               service.commands.engine.precedence(state)).parts})
    assert keys[0] and not keys[0] & keys[1]

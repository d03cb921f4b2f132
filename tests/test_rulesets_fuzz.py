"""Every bundled ruleset survives random commands: no internal errors, exact replay."""

from __future__ import annotations

import random

import pytest

from scriba.rulesets import list_rulesets, load_ruleset
from scriba.service import Service

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
WORDS = ["", "x", "12345", "Spartaco", "-3", "sì"]
CHANGES = [[{"enact": {"title": "T", "text": "a) Una regola."}}], [{"repeal": {"rule": "1"}}],
           [{"amend": {"rule": "101", "text": "Testo."}}], []]


def _value(rng: random.Random, type_: str, state, action: dict) -> object:
    type_ = type_.rstrip("?")
    proposals = list(state.proposals) or ["1"]
    return {
        "player": lambda: rng.choice(PLAYERS + ["Zoe"]),
        "proposal": lambda: rng.choice(proposals + ["999"]),
        "int": lambda: rng.choice([0, 1, 5, 12345, -1, 500]),
        "number": lambda: rng.choice([0, 1.5, 7]),
        "bool": lambda: rng.choice([True, False]),
        "changes": lambda: rng.choice(CHANGES),
        "list": lambda: rng.choice([[], ["Anna"], [1, 2]]),
        "dict": lambda: rng.choice([{}, {"a": 1}]),
    }.get(type_, lambda: rng.choice(WORDS + list(action.get("choices") or {}) + ["for"]))()


def _command(rng: random.Random, service: Service, game: str):
    state = service.reads.load(game)
    actions = service.commands.engine.declarations(state).actions
    name = rng.choice(sorted(actions))
    action = actions[name]
    params = dict(action.get("params") or {})
    if action.get("kind") == "propose":
        params.update({"changes": "changes"})
    if action.get("kind") == "vote":
        params.update({"proposal": "proposal", "choice": "str"})
    args = {p: _value(rng, t, state, action) for p, t in params.items()
            if not t.endswith("?") or rng.random() < 0.5}
    return rng.choice(PLAYERS + list(state.offices.values()) + ["Zoe"]), name, args


@pytest.mark.parametrize("ruleset", [r.id for r in list_rulesets()])
def test_random_commands_never_break_a_ruleset(ruleset: str, make_service) -> None:
    rng = random.Random(ruleset)
    service = make_service("sqlite://")
    try:
        spec = load_ruleset(ruleset)
        players = None if spec.initial.get("players") else PLAYERS
        probe = service.commands.create_game(ruleset, game_id="probe", players=players)
        declared = service.commands.engine.declarations(probe).offices
        state = service.commands.create_game(ruleset, game_id="fuzz", start="2026-03-01T10:00:00Z",
                                             players=players, offices={o: "Anna" for o in declared})
        for _ in range(150):
            if rng.random() < 0.1:
                service.commands.advance(state.game_id, by=rng.choice([3600, 86400, 8 * 86400]))
                continue
            who, name, args = _command(rng, service, state.game_id)
            # Whoever may do it does it (the player whose turn it is, an officer...): the
            # others' attempts are refused on the way, which is input worth fuzzing too.
            candidates = [who] + rng.sample(PLAYERS, len(PLAYERS))
            for actor in candidates[:3]:
                outcome = service.commands.perform(state.game_id, actor, name, args)
                assert outcome.accepted or outcome.message
                if outcome.accepted:
                    break
        log = service.reads.log(state.game_id)
        internal = [e["payload"]["message"] for e in log if e["type"] == "command_refused"
                    and e["payload"]["reason"] == "internal_error"]
        assert internal == []
        aborted = [e["payload"] for e in log if e["type"] == "rule_code_aborted"]
        assert aborted == []  # bad input is refused by checks, never crashes a rule's code
        reads = service.reads
        assert reads.replay(state.game_id).to_json() == reads.load(state.game_id).to_json()
    finally:
        service.close()

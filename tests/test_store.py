"""The event store on SQLite and on a real PostgreSQL: same games, same states."""

from __future__ import annotations

import pytest

from scriba.rulesets import BUNDLED
from scriba.service.scenario import load_scenario, run_scenario
from scriba.store.eventstore import Conflict, EventStore


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scriba.db'}"
    return request.getfixturevalue("postgres_url")



def test_a_scenario_runs_and_replays_on_each_database(db_url, request, make_service):
    service = make_service(db_url, snapshot_every=5)
    scenario = load_scenario(BUNDLED / "equinomic" / "scenarios" / "basic.yaml")
    result = run_scenario(service.commands, scenario, game_id=f"basic-{request.node.callspec.id}")
    assert result.errors == []
    service.close()
    reader = make_service(db_url)  # a new process would start like this: snapshot + later events
    game = result.game_id
    assert reader.reads.load(game).to_json() == reader.reads.replay(game).to_json()
    assert reader.commands.store.latest_snapshot(game) is not None
    assert {g["id"] for g in reader.reads.games()} >= {game}
    reader.close()


def test_two_writers_never_lose_an_event(db_url, request, make_service):
    game = f"race-{request.node.callspec.id}"
    first, second = make_service(db_url), make_service(db_url)
    first.commands.create_game("equinomic", game_id=game, start="2026-03-01T10:00:00Z",
                               players=["Anna", "Bruno", "Carla"])
    second.reads.load(game)  # second caches the state, then first moves on
    first.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [
        {"enact": {"title": "X", "text": "x"}}]})
    outcome = second.commands.perform(game, "Bruno", "vote", {"proposal": "p1",
                                                              "choice": "favorevole"})
    assert outcome.accepted
    log = second.reads.log(game)
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
    assert first.reads.load(game).to_json() == second.reads.load(game).to_json()
    first.close()
    second.close()


def test_the_unique_sequence_turns_a_stale_append_into_a_conflict(db_url, request):
    store = EventStore(db_url)
    game = f"conflict-{request.node.callspec.id}"
    event = {"seq": 1, "type": "clock_advanced", "time": "2026-01-01T00:00:00Z", "actor": None,
             "payload": {}}
    store.create_game(game, game, "equinomic", [event])
    with pytest.raises(Conflict):
        store.append(game, [event])
    assert len(store.events(game)) == 1
    store.close()

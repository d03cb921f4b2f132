"""The write path's economy, and that it costs no guarantee: how many statements a vote
takes, a queued input's durability setting given back, writers already queued going
first, other processes' players seen, and the outbox reading seats per transaction.
Real SQLite files (and PostgreSQL where the behaviour differs)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from sqlalchemy import event

from scriba.service.errors import InvalidInput
from scriba.service.outbox import Outbox
from scriba.service.service import Service
from scriba.store.eventstore import EventStore

START = "2026-03-01T10:00:00Z"
PLAYERS = ["Anna", "Bruno", "Carla"]


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'scriba.db'}"


def new_game(service: Service) -> str:
    game = f"eq-{uuid.uuid4().hex[:6]}"
    service.create_game("equinomic", game_id=game, start=START, players=list(PLAYERS))
    return game


def open_proposal(service: Service, game: str) -> tuple[str, list[str]]:
    """A proposal by the player whose turn it is: its number, and who may vote on it."""
    author = service.load(game).vars["turn"]
    outcome = service.perform(game, author, "propose", {"changes": [
        {"enact": {"title": "Regola", "text": "Testo."}}]})
    assert outcome.accepted, outcome.message
    return outcome.events[0]["payload"]["number"], [p for p in PLAYERS if p != author]


def statements_of(service: Service, action: Callable[[], object]) -> list[str]:
    seen: list[str] = []

    def note(_conn, _cursor, statement, *_args) -> None:  # noqa: ANN001
        seen.append(statement.split(None, 2)[0].upper() + " " + statement.split()[1]
                    if statement.split()[0].upper() == "BEGIN" else statement.split()[0])
    event.listen(service.store.engine, "before_cursor_execute", note)
    try:
        action()
    finally:
        event.remove(service.store.engine, "before_cursor_execute", note)
    return seen


def test_a_vote_takes_eight_statements_and_is_kept_decided(services) -> None:
    service = services()
    game = new_game(service)
    number, voters = open_proposal(service, game)
    outcomes = []
    seen = statements_of(service, lambda: outcomes.append(service.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"},
        request_id="v-1")))
    # read: BEGIN, events since the cache, the request id, inputs queued; write: BEGIN
    # IMMEDIATE, the events, the input kept already decided, the seats to announce to
    # (then COMMIT). Nothing is read before the game's lock is held.
    assert seen == ["BEGIN DEFERRED", "SELECT", "SELECT", "SELECT", "BEGIN IMMEDIATE",
                    "INSERT", "INSERT", "SELECT"]
    [outcome] = outcomes
    assert outcome.accepted and outcome.inbound_id is not None
    [row] = [r for r in service.store.inbound(game) if r["request_id"] == "v-1"]
    assert row["status"] == "accepted"
    assert row["outcome"]["seqs"] == [e["seq"] for e in outcome.events]
    again = service.perform(game, voters[0], "vote",
                            {"proposal": number, "choice": "favorevole"}, request_id="v-1")
    assert again.repeated and [e["seq"] for e in again.events] == row["outcome"]["seqs"]
    assert service.load(game).to_json() == service.replay(game).to_json()


def test_a_queued_input_gives_the_connection_back_fully_durable(url) -> None:
    Service(url).close()  # the schema
    store = EventStore(url)
    try:
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        row_id, created = store.receive("api", "{}", None, None, {"op": "x"}, queued=True)
        assert created and store.inbound_row(row_id)["status"] == "received"
        # the pool holds one connection: the one the queued insert used
        assert store.engine.pool.checkedin() == 1
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2
    finally:
        store.close()


def test_a_command_behind_a_queued_writer_is_queued_and_decided_once(services) -> None:
    first, second = services(), services()
    game = new_game(first)
    number, voters = open_proposal(first, game)
    second.load(game)
    assert first.store.has_queue(game) is False
    with first.store.queued(game):  # a writer of another process, waiting its answer
        assert second.store.has_queue(game) is True
        outcome = second.perform(game, voters[0], "vote",
                                 {"proposal": number, "choice": "contrario"},
                                 request_id="q-1")
    assert outcome.accepted and not outcome.repeated
    rows = [r for r in second.store.inbound(game) if r["request_id"] == "q-1"]
    assert [r["status"] for r in rows] == ["accepted"]
    assert first.store.has_queue(game) is False
    assert first.load(game).to_json() == first.replay(game).to_json()


def test_a_player_admitted_by_another_process_acts_at_once(services) -> None:
    cached, other = services(), services()
    game = new_game(cached)
    number, _ = open_proposal(cached, game)
    cached.load(game)  # cached before Dora joins elsewhere
    assert other.add_player(game, "Dora").accepted
    outcome = cached.perform(game, "Dora", "vote", {"proposal": number, "choice": "favorevole"})
    assert outcome.events and outcome.events[-1]["actor"] == "Dora"
    assert "Dora" in cached.load(game).players


def test_a_look_alike_of_a_player_admitted_elsewhere_is_refused(services) -> None:
    cached, other = services(), services()
    game = new_game(cached)
    cached.load(game)
    assert other.add_player(game, "Dora").accepted
    before = len(cached.log(game))
    with pytest.raises(InvalidInput):  # a Cyrillic о: checked on the fresh state
        cached.perform(game, "D\u043era", "vote", {"proposal": "1", "choice": "favorevole"})
    assert len(cached.log(game)) == before


def test_the_outbox_sees_a_seat_taken_between_two_commands(services) -> None:
    service = services()
    game = new_game(service)
    outbox = Outbox(service)
    number, voters = open_proposal(service, game)
    service.accounts.seat(game, voters[1], "second@players.test")
    assert service.perform(game, voters[0], "vote",
                           {"proposal": number, "choice": "favorevole"}).accepted
    service.accounts.seat(game, voters[0], "first@players.test")
    assert service.perform(game, voters[1], "vote",
                           {"proposal": number, "choice": "contrario"}).accepted
    told = [(m["recipient"], m["player"]) for m in outbox.messages(kind="announce")]
    # the proposal (before any seat) went to nobody; each vote to the other seated voter
    assert told == [("second@players.test", voters[1]), ("first@players.test", voters[0])]

"""The write path's economy, and that it costs no guarantee: how many statements a vote
takes, a writer waiting for a game holding no connection, other processes' players seen,
and the outbox reading seats per transaction. Real SQLite files; two services on one file
stand for two processes."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

import pytest
from sqlalchemy import event

from scriba.service.errors import InvalidInput
from scriba.service.outbox import Outbox
from scriba.service.service import Service

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
    """The first word of every statement ``action`` sends to the database."""
    seen: list[str] = []

    def note(_conn, _cursor, statement, *_args) -> None:  # noqa: ANN001
        seen.append(statement.split()[0].upper())
    event.listen(service.store.engine, "before_cursor_execute", note)
    try:
        action()
    finally:
        event.remove(service.store.engine, "before_cursor_execute", note)
    return seen


def test_a_vote_takes_few_statements_and_is_kept_decided(services) -> None:
    service = services()
    game = new_game(service)
    number, voters = open_proposal(service, game)
    outcomes = []
    seen = statements_of(service, lambda: outcomes.append(service.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"},
        request_id="v-1")))
    # Two transactions: one that reads (the events since the cache, the request id), one
    # that writes (the events, the input kept already decided, the outbox's seats).
    assert len(seen) <= 7, seen
    assert seen.count("INSERT") == 2 and "UPDATE" not in seen and "DELETE" not in seen
    [outcome] = outcomes
    assert outcome.accepted and outcome.inbound_id is not None and not outcome.repeated
    [row] = [r for r in service.store.inbound(game) if r["request_id"] == "v-1"]
    assert row["status"] == "accepted"
    assert row["outcome"]["seqs"] == [e["seq"] for e in outcome.events]
    # The same request again: answered from the record, nothing written.
    again = []
    seen = statements_of(service, lambda: again.append(service.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"},
        request_id="v-1")))
    assert len(seen) <= 4 and not {"INSERT", "UPDATE", "DELETE"} & set(seen), seen
    assert again[0].repeated and [e["seq"] for e in again[0].events] == row["outcome"]["seqs"]
    assert service.load(game).to_json() == service.replay(game).to_json()


def test_a_writer_waiting_for_a_game_holds_no_connection(services) -> None:
    """The lock order: a writer waits for the game's lock before it takes a connection
    from the pool, so writers queued on busy games can never starve the one that holds
    a game of the connection it needs to commit."""
    holder, waiter = services(), services()
    game = new_game(holder)
    number, voters = open_proposal(holder, game)
    waiter.load(game)
    entered, release = threading.Event(), threading.Event()
    handle = holder.engine.handle

    def held(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        entered.set()
        release.wait(30)
        return handle(*args, **kwargs)
    holder.engine.handle = held  # type: ignore[method-assign]
    outcomes: dict[str, object] = {}
    first = threading.Thread(target=lambda: outcomes.setdefault("first", holder.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"})))
    second = threading.Thread(target=lambda: outcomes.setdefault("second", waiter.perform(
        game, voters[1], "vote", {"proposal": number, "choice": "contrario"})))
    first.start()
    assert entered.wait(30)
    second.start()
    second.join(0.3)  # the second writer is now waiting for the game
    try:
        assert second.is_alive() and "second" not in outcomes
        assert waiter.store.engine.pool.checkedout() == 0
    finally:
        release.set()
        first.join(30)
        second.join(30)
    assert [o.accepted for o in (outcomes["first"], outcomes["second"])] == [True, True]
    votes = [e["actor"] for e in waiter.log(game) if e["type"] == "vote_cast"]
    assert votes == voters[:2]
    assert waiter.load(game).to_json() == holder.replay(game).to_json()


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

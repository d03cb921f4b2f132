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

from scriba.bench.writers import setup_game
from scriba.service import Service
from scriba.service.errors import InvalidInput

START = "2026-03-01T10:00:00Z"
PLAYERS = ["Anna", "Bruno", "Carla"]


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'scriba.db'}"


def new_game(service: Service) -> str:
    game = f"eq-{uuid.uuid4().hex[:6]}"
    service.commands.create_game("equinomic", game_id=game, start=START, players=list(PLAYERS))
    return game


def open_proposal(service: Service, game: str) -> tuple[str, list[str]]:
    """A proposal by the player whose turn it is: its number, and who may vote on it."""
    author = service.reads.load(game).vars["turn"]
    outcome = service.commands.perform(game, author, "propose", {"changes": [
        {"enact": {"title": "Regola", "text": "Testo."}}]})
    assert outcome.accepted, outcome.message
    return outcome.events[0]["payload"]["number"], [p for p in PLAYERS if p != author]


def held_in_deciding(service: Service) -> tuple[threading.Event, threading.Event]:
    """Make the service's next decision wait, holding its game's lock, until released:
    (set when it is waiting, set it to let it go on)."""
    entered, release = threading.Event(), threading.Event()
    handle = service.commands.engine.handle

    def held(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        entered.set()
        release.wait(30)
        return handle(*args, **kwargs)
    service.commands.engine.handle = held  # type: ignore[method-assign]
    return entered, release


def statements_of(service: Service, action: Callable[[], object]) -> list[str]:
    """The first word of every statement ``action`` sends to the database."""
    seen: list[str] = []

    def note(_conn, _cursor, statement, *_args) -> None:  # noqa: ANN001
        seen.append(statement.split()[0].upper())
    event.listen(service.commands.store.engine, "before_cursor_execute", note)
    try:
        action()
    finally:
        event.remove(service.commands.store.engine, "before_cursor_execute", note)
    return seen


def test_a_vote_takes_few_statements_and_is_kept_decided(services) -> None:
    service = services()
    game = new_game(service)
    number, voters = open_proposal(service, game)
    outcomes = []
    seen = statements_of(service, lambda: outcomes.append(service.commands.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"},
        request_id="v-1")))
    # Two transactions: one that reads (the events since the cache, the request id), one
    # that writes (the events, the game's row, the input kept already decided, the
    # outbox's seats).
    assert len(seen) <= 8, seen
    assert seen.count("INSERT") == 2 and seen.count("UPDATE") == 1 and "DELETE" not in seen
    [outcome] = outcomes
    assert outcome.accepted and outcome.inbound_id is not None and not outcome.repeated
    [row] = [r for r in service.commands.store.inbound(game) if r["request_id"] == "v-1"]
    assert row["status"] == "accepted"
    assert row["outcome"]["seqs"] == [e["seq"] for e in outcome.events]
    # The same request again: answered from the record, nothing written.
    again = []
    seen = statements_of(service, lambda: again.append(service.commands.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"},
        request_id="v-1")))
    assert len(seen) <= 4 and not {"INSERT", "UPDATE", "DELETE"} & set(seen), seen
    assert again[0].repeated and [e["seq"] for e in again[0].events] == row["outcome"]["seqs"]
    assert service.reads.load(game).to_json() == service.reads.replay(game).to_json()


def test_a_writer_waiting_for_a_game_holds_no_connection(services) -> None:
    """The lock order: a writer waits for the game's lock before it takes a connection
    from the pool, so writers queued on busy games can never starve the one that holds
    a game of the connection it needs to commit."""
    holder, waiter = services(), services()
    game = new_game(holder)
    number, voters = open_proposal(holder, game)
    waiter.commands.load(game)
    entered, release = held_in_deciding(holder)
    outcomes: dict[str, object] = {}
    first = threading.Thread(target=lambda: outcomes.setdefault("first", holder.commands.perform(
        game, voters[0], "vote", {"proposal": number, "choice": "favorevole"})))
    second = threading.Thread(target=lambda: outcomes.setdefault("second", waiter.commands.perform(
        game, voters[1], "vote", {"proposal": number, "choice": "contrario"})))
    first.start()
    assert entered.wait(30)
    second.start()
    second.join(0.3)  # the second writer is now waiting for the game
    try:
        assert second.is_alive() and "second" not in outcomes
        assert waiter.commands.store.engine.pool.checkedout() == 0
    finally:
        release.set()
        first.join(30)
        second.join(30)
    assert [o.accepted for o in (outcomes["first"], outcomes["second"])] == [True, True]
    votes = [e["actor"] for e in waiter.reads.log(game) if e["type"] == "vote_cast"]
    assert votes == voters[:2]
    assert waiter.reads.load(game).to_json() == holder.reads.replay(game).to_json()


def test_a_player_admitted_by_another_process_acts_at_once(services) -> None:
    cached, other = services(), services()
    game = new_game(cached)
    number, _ = open_proposal(cached, game)
    cached.commands.load(game)  # cached before Dora joins elsewhere
    assert other.commands.add_player(game, "Dora").accepted
    outcome = cached.commands.perform(game, "Dora", "vote", {"proposal": number,
                                                             "choice": "favorevole"})
    assert outcome.events and outcome.events[-1]["actor"] == "Dora"
    assert "Dora" in cached.reads.load(game).players


def test_a_look_alike_of_a_player_admitted_elsewhere_is_refused(services) -> None:
    cached, other = services(), services()
    game = new_game(cached)
    cached.commands.load(game)
    assert other.commands.add_player(game, "Dora").accepted
    before = len(cached.reads.log(game))
    with pytest.raises(InvalidInput):  # a Cyrillic о: checked on the fresh state
        cached.commands.perform(game, "D\u043era", "vote", {"proposal": "1",
                                                            "choice": "favorevole"})
    assert len(cached.reads.log(game)) == before


def test_the_outbox_sees_a_seat_taken_between_two_commands(services) -> None:
    service = services()
    game = new_game(service)
    outbox = service.outbox
    number, voters = open_proposal(service, game)
    service.seats.seat(game, voters[1], "second@players.test")
    assert service.commands.perform(game, voters[0], "vote",
                                    {"proposal": number, "choice": "favorevole"}).accepted
    service.seats.seat(game, voters[0], "first@players.test")
    assert service.commands.perform(game, voters[1], "vote",
                                    {"proposal": number, "choice": "contrario"}).accepted
    told = [(m["recipient"], m["player"]) for m in outbox.messages(kind="announce")]
    # the proposal (before any seat) went to nobody; each vote to the other seated voter
    assert told == [("second@players.test", voters[1]), ("first@players.test", voters[0])]


@pytest.fixture(params=["sqlite", "postgresql"])
def two_process_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'line.db'}"
    return str(request.getfixturevalue("postgres_url"))


def test_the_writer_first_in_line_reads_ahead_while_the_game_is_busy(
        two_process_url, make_service) -> None:
    """A writer that finds its game busy waits in line, and the first in line reads what
    was committed meanwhile while the other decides: its turn then reads only the commit
    it waited for. Nothing changes in what is decided."""
    game, _ = setup_game(two_process_url, 3, proposals=1)
    holder, waiter = make_service(two_process_url), make_service(two_process_url)
    try:
        def vote(service: Service, voter: int) -> Callable[[], object]:
            return lambda: service.commands.perform(game, f"Voter{voter}", "vote",
                                           {"proposal": 9001, "choice": "FOR"})
        before = waiter.commands.load(game).seq
        assert vote(holder, 0)().accepted  # committed while the waiter is not looking
        committed = holder.reads.load(game).seq
        entered, release = held_in_deciding(holder)
        outcomes: dict[str, object] = {}
        first = threading.Thread(target=lambda: outcomes.setdefault("first", vote(holder, 1)()))
        second = threading.Thread(target=lambda: outcomes.setdefault("second", vote(waiter, 2)()))
        first.start()
        assert entered.wait(30)
        second.start()
        try:
            for _ in range(300):  # the waiter catches up while the holder still decides
                if waiter.commands._states[game].seq == committed:
                    break
                second.join(0.01)
            assert before < committed == waiter.commands._states[game].seq
            assert second.is_alive() and "second" not in outcomes
        finally:
            release.set()
            first.join(30)
            second.join(30)
        assert [o.accepted for o in (outcomes["first"], outcomes["second"])] == [True, True]
        voters = [e["actor"] for e in waiter.reads.log(game) if e["type"] == "vote_cast"]
        assert voters == ["Voter0", "Voter1", "Voter2"]
        assert waiter.reads.load(game).to_json() == holder.reads.replay(game).to_json()
    finally:
        holder.close()
        waiter.close()

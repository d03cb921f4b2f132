"""A request id is its player's own: unique per (game, player, id) on every path, never a
way to read or block another player's command. The same command again gets the first
outcome; another command under the same id is refused (RequestIdReused), nothing kept.
Real SQLite files and a real PostgreSQL; several services on one database stand for
several processes."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from scriba.service import Outcome, Service
from scriba.service.errors import RequestIdReused
from scriba.store.schema import inbound

START = "2026-03-01T10:00:00Z"
ENACT = {"enact": {"title": "Aquiloni", "text": "Si possono portare aquiloni."}}


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scriba.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def services(db_url: str, make_service: Callable[..., Service]) -> Iterator[
        Callable[[], Service]]:
    """New services on the one database, as separate processes would have them."""
    made: list[Service] = []

    def new() -> Service:
        made.append(make_service(db_url))
        return made[-1]
    yield new
    for service in made:
        service.close()


def equinomic(service: Service) -> str:
    """Abele's turn (the first name alphabetically), his proposal p1 open to the others."""
    game = f"rid-{uuid.uuid4().hex[:8]}"
    service.commands.create_game("equinomic", game_id=game, start=START,
                                 players=["Abele", "Anna", "Carla", "Dario"])
    proposed = service.commands.perform(game, "Abele", "propose", {"label": "p1",
                                                                   "changes": [ENACT]})
    assert proposed.accepted, proposed.message
    return game


def vote(service: Service, game: str, player: str, choice: str,
         request_id: str) -> Outcome:
    return service.commands.perform(game, player, "vote", {"proposal": "p1", "choice": choice},
                                    request_id=request_id)


def choices(service: Service, game: str) -> dict[str, str]:
    votes = service.reads.load(game).proposals["1"]["votes"]
    return {player: vote["choice"] for player, vote in votes.items()}


def rows_of(service: Service, game: str) -> list[tuple[str | None, str | None, str]]:
    return [(r["player"], r["request_id"],
             r["status"]) for r in service.commands.store.inbound(game)]


def test_another_players_request_id_is_a_new_command_not_their_outcome(services) -> None:
    service = services()
    game = equinomic(service)
    carla = vote(service, game, "Carla", "favorevole", "anna-2")
    anna = vote(service, game, "Anna", "contrario", "anna-2")
    assert carla.accepted and anna.accepted, (carla.message, anna.message)
    assert not anna.repeated and anna.inbound_id != carla.inbound_id
    assert [(e["type"], e["actor"]) for e in anna.events] == [("vote_cast", "Anna")]
    assert choices(service, game) == {"Carla": "for", "Anna": "against"}
    assert rows_of(service, game)[-2:] == [("Carla", "anna-2", "accepted"),
                                           ("Anna", "anna-2", "accepted")]
    # Anna's retry: her own first outcome, decided once, nothing recorded.
    log, rows = service.reads.log(game), service.commands.store.inbound(game)
    again = vote(services(), game, "Anna", "contrario", "anna-2")  # another process
    assert again.repeated and again.accepted and again.inbound_id == anna.inbound_id
    assert again.events == anna.events
    # Another command under her id: refused in the game's language, nothing kept.
    with pytest.raises(RequestIdReused) as refused:
        vote(service, game, "Anna", "favorevole", "anna-2")
    assert str(refused.value) == RequestIdReused.told("it") != RequestIdReused.told("en")
    with pytest.raises(RequestIdReused):
        service.commands.perform(game, "Anna", "propose", {"changes": [ENACT]}, request_id="anna-2")
    assert service.reads.log(game) == log and service.commands.store.inbound(game) == rows
    assert choices(service, game) == {"Carla": "for", "Anna": "against"}


def test_the_officers_request_ids_are_their_own_too(services) -> None:
    service = services()
    game = equinomic(service)
    vote(service, game, "Anna", "favorevole", "add-1")
    admitted = service.commands.add_player(game, "Elena", request_id="add-1")
    assert admitted.accepted and not admitted.repeated
    assert ("", "add-1", "accepted") in rows_of(service, game)  # not NULL: see the next test
    assert service.commands.add_player(game, "Elena", request_id="add-1").repeated
    with pytest.raises(RequestIdReused):
        service.commands.add_player(game, "Fabio", request_id="add-1")
    assert "Fabio" not in service.reads.load(game).players


def test_the_database_holds_one_row_per_game_player_and_request_id(services) -> None:
    service = services()
    game = equinomic(service)
    row = {"game_id": game, "channel": "api", "raw": "{}", "status": "received",
           "request_id": "r-1", "received_at": datetime.now(UTC)}
    with service.commands.store.engine.begin() as connection:
        connection.execute(insert(inbound), [{**row, "player": "Anna"},
                                             {**row, "player": "Carla"},
                                             {**row, "player": ""}])
    with pytest.raises(IntegrityError), service.commands.store.engine.begin() as connection:
        connection.execute(insert(inbound), {**row, "player": "Anna"})


def race(writers: list[Service], game: str, callers: list[tuple[str, str]], proposal: int,
         request_id: str) -> list[Any]:
    """Each writer votes as its caller says, all at the same moment: outcomes or errors."""
    start = threading.Barrier(len(callers))
    results: list[Any] = [None] * len(callers)

    def send(index: int, player: str, choice: str) -> None:
        start.wait(30)
        try:
            results[index] = writers[index].commands.perform(
                game, player, "vote", {"proposal": proposal, "choice": choice},
                request_id=request_id)
        except Exception as error:  # noqa: BLE001 - checked by the caller
            results[index] = error
    threads = [threading.Thread(target=send, args=(i, *caller))
               for i, caller in enumerate(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_one_players_request_id_is_decided_once_under_concurrency(services) -> None:
    """Four writers (services on one database, like processes) send at the same moment,
    round after round, under one request id: Voter0's vote twice alike, Voter0's other
    vote and Voter1's vote. Per player one decision; the callers who sent the command
    that was kept get its outcome, the one who sent another is refused."""
    first = services()
    game = f"rid-{uuid.uuid4().hex[:8]}"
    first.commands.create_game("agora", game_id=game, start=START,
                               players=["Officer", "Voter0", "Voter1"],
                               offices={"Assessor": "Officer", "Promotor": "Officer"})
    for number in (9001, 9002):
        for action, args in (("submit", {"title": "P", "text": "Be kind.", "ai": "1.0",
                                         "number": number, "changes": [ENACT]}),
                             ("distribute", {"proposal": number, "quorum": 1})):
            assert first.commands.perform(game, "Officer", action, args).accepted
    callers = [("Voter0", "FOR"), ("Voter0", "FOR"), ("Voter0", "AGAINST"),
               ("Voter1", "FOR")]
    writers = [first] + [services() for _ in callers[1:]]
    for writer in writers:
        writer.reads.load(game)  # warm: they race on the write path, not on the first read
    rounds = 8
    for n in range(rounds):
        request_id = f"r-{n}"
        results = race(writers, game, callers, 9001 + n % 2, request_id)
        rows = {r["player"]: r for r in first.commands.store.inbound(game)
                if r["request_id"] == request_id}
        assert sorted(rows) == ["Voter0", "Voter1"]
        assert all(row["status"] == "accepted" for row in rows.values())
        kept = rows["Voter0"]["command"]["args"]["choice"]
        for (player, choice), result in zip(callers, results, strict=True):
            if player == "Voter0" and choice != kept:
                assert isinstance(result, RequestIdReused), result
                continue
            assert isinstance(result, Outcome), result
            assert result.accepted, result.message
            assert [e["seq"] for e in result.events] == rows[player]["outcome"]["seqs"]
        alike = [r for (p, c), r in zip(callers, results, strict=True)
                 if p == "Voter0" and c == kept]
        assert sum(not r.repeated for r in alike) == 1  # decided by one of them only
    log = first.reads.log(game)
    votes = [(e["actor"], e["payload"]["choice"]) for e in log if e["type"] == "vote_cast"]
    assert len(votes) == 2 * rounds  # one per player and request id, none twice
    assert first.reads.load(game).to_json() == first.reads.replay(game).to_json()

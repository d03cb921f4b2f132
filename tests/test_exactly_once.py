"""Every received command is decided exactly once: request ids, recovery, commit listeners,
and the errors and schema checks around them. Real SQLite files and a real PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, func, select

from scriba.service import Service, open_service
from scriba.service.errors import GameExists, InvalidInput, ServiceError, UnknownGame
from scriba.store import migrate
from scriba.store.database import head_revision
from scriba.store.eventstore import EventStore

START = "2026-03-01T10:00:00Z"
ENACT = {"enact": {"title": "T", "text": "A harmless rule."}}


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scriba.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def svc(db_url, make_service):
    service = make_service(db_url)  # rule code in-process: these tests are about the store
    yield service
    service.close()


def new_game(service: Service, name: str) -> str:
    import uuid

    game = f"{name}-{uuid.uuid4().hex[:6]}"
    service.commands.create_game("equinomic", game_id=game, start=START,
                                 players=["Anna", "Bruno", "Carla"])
    return game


def test_the_same_request_id_returns_the_first_outcome_and_records_nothing(svc):
    game = new_game(svc, "rid")
    first = svc.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]},
                                 request_id="form-1")
    assert first.accepted and not first.repeated and first.request_id == "form-1"
    log, rows = svc.reads.log(game), svc.commands.store.inbound(game)
    again = svc.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]},
                                 request_id="form-1")
    assert again.repeated and again.accepted and again.inbound_id == first.inbound_id
    assert [e["seq"] for e in again.events] == [e["seq"] for e in first.events]
    assert again.events == svc.commands.store.events_by_seq(game, [e["seq"] for e in first.events])
    assert svc.reads.log(game) == log and svc.commands.store.inbound(game) == rows
    # A refusal is an outcome too: repeated, it is the same refusal, not a second one.
    refused = svc.commands.perform(game, "Zoe", "propose", {"changes": [ENACT]},
                                   request_id="form-2")
    repeat = svc.commands.perform(game, "Zoe", "propose", {"changes": [ENACT]}, request_id="form-2")
    assert not refused.accepted and not repeat.accepted and repeat.repeated
    assert repeat.message == refused.message
    assert sum(e["type"] == "command_refused" for e in svc.reads.log(game)) == 1
    # Ids are per game (and per player, see test_request_ids.py): another game's form-1
    # is a new command.
    other = new_game(svc, "rid2")
    fresh = svc.commands.perform(other, "Anna", "propose", {"label": "p1", "changes": [ENACT]},
                                 request_id="form-1")
    assert fresh.accepted and not fresh.repeated
    assert svc.reads.replay(game).to_json() == svc.reads.load(game).to_json()
    for bad in ("", "x" * 201, 7):
        with pytest.raises(InvalidInput):
            svc.commands.perform(game, "Anna", "vote", {"proposal": "p1", "choice": "favorevole"},
                                 request_id=bad)


def test_a_request_kept_but_never_decided_is_decided_once_by_its_retry(svc, db_url):
    game = new_game(svc, "inflight")
    # What an input kept and never decided looks like (an earlier version's queue).
    command = {"op": "perform", "actor": "Anna", "action": "propose",
               "args": {"label": "p1", "changes": [ENACT]}, "at": None}
    inbound_id = svc.commands.store.receive("api", "raw", game, "mail-7", command)
    other = open_service(db_url)  # the retry reaches another process
    try:
        outcome = other.commands.perform(game, "Anna", "propose",
                                         {"label": "p1", "changes": [ENACT]}, request_id="mail-7")
        assert outcome.accepted and outcome.inbound_id == inbound_id and not outcome.repeated
        assert svc.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]},
                                    request_id="mail-7").repeated
        assert svc.commands.recover() == []
    finally:
        other.close()
    proposals = [e for e in svc.reads.log(game) if e["type"] == "proposal_submitted"]
    assert len(proposals) == 1
    assert [r["status"] for r in svc.commands.store.inbound(game)] == ["accepted"]


def test_a_request_another_player_left_undecided_is_not_a_retry_of_mine(svc, db_url):
    game = new_game(svc, "inflight-other")
    svc.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]})
    # Carla's writer was killed between keeping her vote and deciding it.
    carla = {"op": "perform", "actor": "Carla", "action": "vote",
             "args": {"proposal": "p1", "choice": "favorevole"}, "at": None}
    kept = svc.commands.store.receive("web", "Carla votes", game, "vote-1", carla)
    other = open_service(db_url)  # Bruno's writer, another process, with the same request id
    try:
        bruno = other.commands.perform(game, "Bruno", "vote", {"proposal": "p1",
                                                               "choice": "contrario"},
                              request_id="vote-1")
    finally:
        other.close()
    assert not bruno.repeated and bruno.inbound_id != kept
    assert bruno.events[0]["actor"] == "Bruno"
    svc.commands.recover()  # Carla's: nobody but the recovery decides another player's input
    votes = {p: v["choice"] for p, v in svc.reads.load(game).proposals["1"]["votes"].items()}
    assert votes == {"Carla": "for", "Bruno": "against"}
    assert sorted((r["player"], r["status"]) for r in svc.commands.store.inbound(game)
                  if r["request_id"] == "vote-1") == [("Bruno", "accepted"),
                                                      ("Carla", "accepted")]


def test_recover_decides_what_a_crash_left_undecided_in_order(svc, db_url):
    game = new_game(svc, "recover")
    svc.commands.store.receive("mail", "propose p1", game, None, {
        "op": "perform", "actor": "Anna", "action": "propose",
        "args": {"label": "p1", "changes": [ENACT]}, "at": None})
    svc.commands.store.receive("mail", "vote p1", game, None, {  # needs p1: decided after it
        "op": "perform", "actor": "Bruno", "action": "vote",
        "args": {"proposal": "p1", "choice": "favorevole"}, "at": None})
    svc.commands.store.receive("mail", "raw text only, no command", game)  # left to its interface
    svc.commands.store.receive("api", "x", "no-such-game", None, {
        "op": "perform", "actor": "Anna", "action": "propose", "args": {}, "at": None})
    restarted = open_service(db_url)
    try:
        outcomes = restarted.commands.recover()
        mine = [o for o in outcomes if o.inbound_id in
                {r["id"] for r in restarted.commands.store.inbound(game)}]
        assert [o.accepted for o in mine] == [True, True]
        assert [p["label"] for p in restarted.reads.load(game).proposals.values()] == ["p1"]
        statuses = {r["raw"]: r["status"] for r in restarted.commands.store.inbound(game)}
        assert statuses["propose p1"] == statuses["vote p1"] == "accepted"
        assert statuses["raw text only, no command"] == "received"
        assert restarted.commands.store.inbound("no-such-game")[0]["status"] == "refused"
        assert [o for o in restarted.commands.recover() if o.inbound_id in
                {r["id"] for r in restarted.commands.store.inbound(game)}] == []
        assert restarted.reads.replay(game).to_json() == restarted.reads.load(game).to_json()
    finally:
        restarted.close()


def outbox_table(service: Service) -> Table:
    table = Table("test_outbox", MetaData(), Column("id", Integer, primary_key=True),
                  Column("game_id", String(64)), Column("seq", Integer))
    table.create(service.commands.store.engine, checkfirst=True)
    return table


def test_a_commit_listener_writes_in_the_commands_transaction(svc):
    game = new_game(svc, "listen")
    outbox = outbox_table(svc)
    seen = []

    def listener(connection, game_id, events, outcome):
        seen.append(outcome)
        connection.execute(outbox.insert(), [{"game_id": game_id, "seq": e["seq"]}
                                              for e in events])
    svc.commands.add_commit_listener(listener)
    outcome = svc.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]})
    assert outcome.accepted and seen == [outcome]
    with svc.commands.store.engine.connect() as connection:
        rows = connection.execute(select(outbox.c.seq).where(outbox.c.game_id == game))
        assert [r[0] for r in rows] == [e["seq"] for e in outcome.events]


def test_a_failing_listener_rolls_the_command_back_and_records_a_refusal(svc):
    game = new_game(svc, "listen-fail")
    outbox = outbox_table(svc)
    before = svc.reads.load(game).to_json()

    def listener(connection, game_id, events, outcome):
        connection.execute(outbox.insert().values(game_id=game_id, seq=0))
        raise RuntimeError("the outbox is full")
    svc.commands.add_commit_listener(listener)
    outcome = svc.commands.perform(game, "Anna", "propose", {"label": "p1", "changes": [ENACT]},
                                   request_id="r1")
    assert not outcome.accepted and "outbox is full" in outcome.message
    log = svc.reads.log(game)
    assert log[-1]["type"] == "command_refused"
    assert log[-1]["payload"]["reason"] == "internal_error"
    assert not any(e["type"] == "proposal_submitted" for e in log)
    assert svc.commands.store.inbound(game)[-1]["status"] == "refused"
    with svc.commands.store.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(outbox)
                                  .where(outbox.c.game_id == game)).scalar() == 0
    fresh = open_service(svc.commands.store.url)
    try:
        assert fresh.reads.load(game).to_json() == fresh.reads.replay(game).to_json()
        assert fresh.reads.load(game).proposals == {}
        assert fresh.reads.load(game).seq == len(log)
    finally:
        fresh.close()
    assert before != svc.reads.load(game).to_json()  # only seq/time moved: the refusal is logged


def test_games_that_exist_or_do_not(svc):
    game = new_game(svc, "dup")
    with pytest.raises(GameExists):
        svc.commands.create_game("equinomic", game_id=game, start=START, players=["Anna"])
    rows = len(svc.commands.store.inbound())
    with pytest.raises(UnknownGame):
        svc.commands.perform("nope", "Anna", "propose", {"changes": [ENACT]})
    with pytest.raises(UnknownGame):
        svc.reads.load("nope")
    with pytest.raises(UnknownGame):
        svc.commands.advance("nope", by=60)
    assert len(svc.commands.store.inbound()) == rows  # nothing kept for a game that is not there


def test_an_old_schema_is_refused_until_migrated(tmp_path):
    from alembic import command

    from scriba.store.database import _alembic_config, make_engine

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    engine.dispose()
    with pytest.raises(ServiceError, match="scriba db upgrade"):
        EventStore(url)
    assert migrate(url) == head_revision()
    EventStore(url).close()
    # A fresh file just works, and the head read without Alembic is Alembic's head.
    fresh = EventStore(f"sqlite:///{tmp_path / 'fresh.db'}")
    fresh.close()
    from alembic.script import ScriptDirectory

    assert head_revision() == ScriptDirectory.from_config(config).get_current_head()

"""A host's costs follow its active games: the deadline loop reads only the games the
database names as due, the games' listing reads one row per game kept by its commits, and
an idle game's state is let go. Real SQLite files; a second service stands for the server
process that starts after the games were made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriba.rulesets import load_ruleset

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'index.db'}"


def clock_game(service, game_id: str, alarm_after: int | None) -> None:
    service.commands.create_game(load_ruleset("clockwork", root=FIXTURES), game_id=game_id,
                                 players=["Ann", "Ben"], clock="real")
    if alarm_after is not None:
        outcome = service.commands.perform(game_id, "Ann", "set_alarm",
                                           {"label": "a", "after": alarm_after})
        assert outcome.accepted, outcome.message


def test_the_deadline_loop_reads_only_the_games_that_are_due(url, make_service) -> None:
    maker = make_service(url)
    clock_game(maker, "due", alarm_after=0)
    clock_game(maker, "later", alarm_after=3600)
    clock_game(maker, "quiet", alarm_after=None)
    maker.close()
    server = make_service(url)
    try:
        assert set(server.commands.tick_due()) == {"due"}
        assert set(server.commands._states) == {"due"}  # nobody else was read
        rung = server.reads.load("due").vars["rung"]
        assert [r.split("@")[0] for r in rung] == ["a"]
        assert server.commands.tick_due() == {}  # fired once
        rows = {g["id"]: g for g in server.commands.store.games()}
        bell = min(t["at"] for t in server.reads.load("due").timers.values())
        assert rows["due"]["due_at"] == bell  # the next one: the day's bell
        timers = server.reads.load("later").timers.values()
        assert rows["later"]["due_at"] == min(t["at"] for t in timers)
    finally:
        server.close()


def test_the_listing_follows_each_commit_and_fills_in_old_games(url, make_service) -> None:
    service = make_service(url)
    try:
        service.commands.create_game("equinomic", game_id="eq", name="Venerdì",
                                     start="2026-03-01T10:00:00Z",
                                     players=["Anna", "Bruno", "Carla"])
        [row] = service.reads.games()
        assert (row["name"], row["ruleset"], row["players"], row["ended"]) == \
            ("Venerdì", "equinomic", 3, False)
        assert row["period"] == service.reads.status("eq")["period"]
        service.commands.add_player("eq", "Dora")
        [row] = service.reads.games()
        assert row["players"] == 4 and row["events"] == service.reads.load("eq").seq
        # A game copied in by hand (as an old database's are) has no line until the
        # service starts: then it gets one.
        events = json.loads(json.dumps(service.reads.log("eq")).replace('"eq"', '"copy"'))
        service.commands.store.create_game("copy", "Copia", "equinomic", events)
    finally:
        service.close()
    restarted = make_service(url)
    try:
        restarted.commands.recover()
        lines = {row["id"]: row for row in restarted.reads.games()}
        assert lines["copy"]["players"] == 4 and lines["copy"]["language"] == "it"
    finally:
        restarted.close()


def test_a_page_of_the_listing_is_read_in_order_by_an_index(url, make_service) -> None:
    """The listing's page is read in the games' order from an index: SQLite neither reads
    every game's row nor sorts them for a page (what a host with many games would pay)."""
    from sqlalchemy import event

    service = make_service(url)
    engine = service.commands.store.engine
    asked: list[tuple[str, object]] = []

    def keep(_conn, _cursor, statement, parameters, _context, _many) -> None:
        if "FROM games" in statement and "ORDER BY" in statement:
            asked.append((statement, parameters))
    try:
        for name in ("uno", "due", "tre"):
            clock_game(service, name, alarm_after=None)
        event.listen(engine, "before_cursor_execute", keep)
        page = service.reads.games(limit=2, offset=1)
        event.remove(engine, "before_cursor_execute", keep)
        assert [row["id"] for row in page] == ["due", "tre"]
        [(statement, parameters)] = asked
        with engine.connect() as connection:
            plan = " | ".join(str(row[-1]) for row in connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN " + statement, parameters))
        assert "ix_games_made" in plan, plan
        assert "TEMP B-TREE" not in plan, plan
    finally:
        service.close()


def test_an_idle_games_state_is_let_go_and_read_again(url, make_service) -> None:
    service = make_service(url)
    try:
        clock_game(service, "idle", alarm_after=3600)
        assert service.commands.evict_idle(idle=3600) == 0  # just used: kept
        assert service.commands.evict_idle(idle=0) == 1
        assert "idle" not in service.commands._states
        outcome = service.commands.perform("idle", "Ben", "set_alarm",
                                           {"label": "b", "after": 60})
        assert outcome.accepted, outcome.message
        assert service.reads.load("idle").to_json() == service.reads.replay("idle").to_json()
    finally:
        service.close()

"""The migrations make exactly the tables ``scriba.store.schema`` describes (the command
path's statements are built from it), on SQLite and on a real PostgreSQL; a new database,
made from those descriptions at once, is the same as one the migrations made; and the
games' index (0006) is filled in for games that existed before it."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, inspect, select, text

from scriba.store import migrate
from scriba.store.database import _alembic_config, _described_metadata, make_engine
from scriba.store.schema import events, games, metadata


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'schema.db'}"
    return str(request.getfixturevalue("fresh_postgres_url"))


def _upgrade(url: str, revision: str) -> None:
    engine = make_engine(url)
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
    engine.dispose()


def _reflected(url: str) -> dict[str, object]:
    """What the database says of each table: columns, keys, indexes, constraints."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            seen = inspect(connection)
            return {table: {
                # in any order: a migration adds its columns last
                "columns": sorted((c["name"], str(c["type"]), c["nullable"], c.get("default"))
                                  for c in seen.get_columns(table)),
                "primary key": seen.get_pk_constraint(table)["constrained_columns"],
                "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                                  for i in seen.get_indexes(table)),
                "unique": sorted((u["name"] or "", tuple(u["column_names"]))
                                 for u in seen.get_unique_constraints(table)),
                "foreign keys": sorted((tuple(f["constrained_columns"]), f["referred_table"],
                                        tuple(f["referred_columns"]))
                                       for f in seen.get_foreign_keys(table)),
            } for table in sorted(seen.get_table_names())}
    finally:
        engine.dispose()


def _emptied(url: str) -> None:
    engine = make_engine(url)
    with engine.begin() as connection:
        _described_metadata().drop_all(connection)
        connection.execute(text("DROP TABLE alembic_version"))
    engine.dispose()


def test_a_new_database_is_made_as_the_migrations_would_make_it(empty_url: str) -> None:
    _upgrade(empty_url, "head")
    migrated = _reflected(empty_url)
    _emptied(empty_url)
    assert migrate(empty_url)  # an empty database: made from the code's tables, stamped
    made = _reflected(empty_url)
    assert "alembic_version" in made and "accounts" in made and "events" in made
    assert made == migrated


def test_the_migrations_make_the_schema_the_code_uses(empty_url: str) -> None:
    _upgrade(empty_url, "head")  # every migration, not the shortcut for a new database
    engine = make_engine(empty_url)
    try:
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), metadata)
    finally:
        engine.dispose()
    # Types compare loosely across dialects; what matters is tables, columns and indexes.
    loose = ("modify_type", "modify_default")
    assert [d for d in differences
            if not (isinstance(d, list) and all(change[0] in loose for change in d))] == []


def test_the_games_index_counts_the_events_of_games_made_before_it(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    _upgrade(url, "0005")
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO games (id, name, ruleset, created_at) VALUES ('g', 'G', 'suber', "
            "'2026-01-01 00:00:00'), ('empty', 'E', 'suber', '2026-01-01 00:00:00')")
        for seq in (1, 2, 3):
            connection.execute(insert(events).values(
                game_id="g", seq=seq, type="note", time="2026-01-01T00:00:00Z", actor=None,
                payload={}))
    engine.dispose()
    migrate(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        rows = dict(connection.execute(select(games.c.id, games.c.last_seq)).all())
    engine.dispose()
    assert rows == {"g": 3, "empty": 0}

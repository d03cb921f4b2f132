"""``scriba backup`` / ``restore`` underneath: a copy of a live SQLite database is a
consistent one (a game's log in the copy is a whole prefix of the live one, however busy
the game was), a restore puts it back (the same store reads it at once), and a wrong file changes
nothing. Real SQLite files, a real writer thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from scriba.store import migrate
from scriba.store.backup import BackupError, backup, restore
from scriba.store.database import head_revision
from scriba.store.eventstore import EventStore

T = "2026-01-01T00:00:00Z"


def event(seq: int) -> dict:
    return {"seq": seq, "type": "note" if seq > 1 else "game_created", "time": T,
            "actor": None, "payload": {"text": "x" * 500, "n": seq}}


def url_of(path: Path) -> str:
    return f"sqlite:///{path}"


@pytest.fixture
def live(tmp_path: Path) -> str:
    url = url_of(tmp_path / "live.db")
    migrate(url)
    return url


def test_a_backup_taken_while_a_game_is_written_is_consistent(live: str, tmp_path: Path) -> None:
    store = EventStore(live)
    store.create_game("g", "G", "suber", [event(1)])
    stop = threading.Event()
    written = [1]

    def write() -> None:
        while not stop.is_set():
            seq = written[-1] + 1
            store.append("g", [event(seq)])
            written.append(seq)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        while written[-1] < 300:  # enough pages that the copy takes several steps
            stop.wait(0.01)
        seen: list[tuple[int, int]] = []
        copy = backup(live, tmp_path / "copy.db", progress=lambda d, t: seen.append((d, t)))
    finally:
        stop.set()
        writer.join(30)
    assert seen and seen[-1][0] == seen[-1][1]  # progress told, ending at all pages
    copied = EventStore(url_of(copy))
    events = copied.events("g")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events == store.events("g")[:len(events)]
    [row] = copied.games()
    assert row["events"] == len(events)  # the game's row agrees with its log
    copied.close()
    store.close()


def test_a_restore_brings_the_copy_back(live: str, tmp_path: Path) -> None:
    store = EventStore(live)
    store.create_game("g", "G", "suber", [event(1)])
    copy = backup(live, tmp_path / "copy.db")
    store.append("g", [event(2), event(3)])  # written after the backup: undone by the restore
    assert restore(live, copy) == head_revision()
    assert [e["seq"] for e in store.events("g")] == [1]  # the same store sees it at once
    store.close()


def test_a_wrong_or_damaged_file_changes_nothing(live: str, tmp_path: Path) -> None:
    store = EventStore(live)
    store.create_game("g", "G", "suber", [event(1)])
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    with pytest.raises(BackupError, match="not a SQLite database|not a Scriba database"):
        restore(live, garbage)
    stranger = tmp_path / "stranger.db"
    import sqlite3
    with sqlite3.connect(stranger) as other:
        other.execute("CREATE TABLE t (x)")
    with pytest.raises(BackupError, match="not a Scriba database"):
        restore(live, stranger)
    with pytest.raises(BackupError, match="no database"):
        restore(live, tmp_path / "missing.db")
    assert [e["seq"] for e in store.events("g")] == [1]
    store.close()


def test_a_backup_never_overwrites_and_names_other_databases_tools(live: str,
                                                                   tmp_path: Path) -> None:
    existing = tmp_path / "exists.db"
    existing.write_bytes(b"keep me")
    with pytest.raises(BackupError, match="exists already"):
        backup(live, existing)
    assert existing.read_bytes() == b"keep me"
    with pytest.raises(BackupError, match="pg_dump"):
        backup("postgresql://scriba@localhost/scriba", tmp_path / "pg.db")
    with pytest.raises(BackupError, match="in-memory"):
        backup("sqlite://", tmp_path / "mem.db")

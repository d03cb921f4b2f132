"""Snapshots are written off the command path, when their game is quiet, and all of them
by the time the service closes."""

from __future__ import annotations

import time

from scriba.service import Service, snapshots

START = "2026-01-01T00:00:00Z"


def _game(service: Service) -> str:
    game = service.commands.create_game("equinomic", game_id="s", start=START,
                                        players=["Anna", "Bruno", "Carla"]).game_id
    author = service.reads.load(game).vars["turn"]
    assert service.commands.perform(game, author, "propose", {"changes": [
        {"enact": {"title": "Cortesia", "text": "Si saluta."}}]}).accepted
    # Every command records at least one event: three cross a multiple of 3, whatever the
    # number of events the game was created with.
    for voter in ("Anna", "Bruno"):
        service.commands.perform(game, voter, "vote", {"proposal": 1, "choice": "favorevole"})
    return game


def test_a_snapshot_waits_for_a_quiet_moment(tmp_path, make_service, monkeypatch) -> None:
    monkeypatch.setattr(snapshots, "QUIET_S", 2.0)
    service = make_service(f"sqlite:///{tmp_path / 'g.db'}", snapshot_every=3)
    try:
        game = _game(service)  # more than 3 events: a snapshot is due
        assert service.commands.store.latest_snapshot(game) is None  # the game was just played
        deadline = time.monotonic() + 30
        while service.commands.store.latest_snapshot(game) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        snapshot = service.commands.store.latest_snapshot(game)
        assert snapshot is not None and snapshot[0] == service.reads.load(game).seq
    finally:
        service.close()


def test_closing_writes_the_snapshots_still_due(tmp_path, make_service, monkeypatch) -> None:
    monkeypatch.setattr(snapshots, "QUIET_S", 60.0)
    url = f"sqlite:///{tmp_path / 'g.db'}"
    service = make_service(url, snapshot_every=3)
    game = _game(service)
    seq = service.reads.load(game).seq
    service.close()
    reader = make_service(url)
    try:
        assert reader.commands.store.latest_snapshot(game)[0] == seq
        assert reader.reads.load(game).to_json() == reader.reads.replay(game).to_json()
    finally:
        reader.close()

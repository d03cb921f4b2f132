"""Reading a log back: payloads decoded in batches come back exactly as appended."""

from __future__ import annotations

import pytest

from scriba.service import open_service


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scriba.db'}"
    return request.getfixturevalue("postgres_url")


def test_a_log_longer_than_a_decode_batch_reads_back_as_written(db_url, request):
    service = open_service(db_url)
    game = f"long-{request.node.callspec.id}"
    service.commands.create_game("equinomic", game_id=game, start="2026-01-01T00:00:00Z",
                                 players=["Anna", "Bruno"])
    first = service.commands.store.count_events(game) + 1
    written = [{"seq": first + i, "type": "notice", "time": "2026-01-02T00:00:00Z",
                "actor": None if i % 2 else "Anna",
                "payload": {"text": f"Nota {i}: perché «sì» — 🎲", "n": i,
                            "nested": {"list": [i, None, True, 1.5], "empty": {}}}}
               for i in range(5000)]
    service.commands.store.append(game, written)
    read = service.commands.store.events(game)
    assert read[first - 1:] == written
    assert service.commands.store.events(game, after=first + 4094, upto=first + 4097) == \
        written[4095:4098]
    assert service.reads.replay(game).to_json() == service.reads.load(game).to_json()
    service.close()

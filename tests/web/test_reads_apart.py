"""Reads apart from writes (issue 18): a read never holds a vote back, reads see the last
committed state held still, and the chronicle of a long game comes in pages."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import httpx
from serving import Server

from scriba.bench.sizes import build_agora_game
from scriba.service import open_service

START = "2026-03-01T10:00:00Z"
ENACT = {"enact": {"title": "T", "text": "A harmless rule."}}


def _game(service) -> str:
    service.commands.create_game("equinomic", game_id="eq", start=START,
                                 players=["Anna", "Bruno", "Carla"])
    service.commands.perform("eq", "Anna", "propose", {"label": "p1", "changes": [ENACT]})
    return "eq"


def test_a_held_read_does_not_hold_a_vote_back_and_sees_no_change(service) -> None:
    game = _game(service)
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def heavy_read() -> None:
        with service.reads.reading(game) as state:  # the game's read lock, held
            seen["before"] = (state.seq, dict(state.proposals["1"]["votes"]))
            inside.set()
            done.wait(30)
            # A read of the same game inside it sees the same state, not the vote.
            seen["inner"] = service.reads.proposal(game, "p1")["votes"]
            seen["after"] = (state.seq, dict(state.proposals["1"]["votes"]))

    reader = threading.Thread(target=heavy_read)
    reader.start()
    try:
        assert inside.wait(30)
        started = time.monotonic()
        outcome = service.commands.perform(game, "Bruno", "vote",
                                           {"proposal": "p1", "choice": "for"})
        assert outcome.accepted and time.monotonic() - started < 5  # not behind the read
        assert service.reads.describe_outcome(game, outcome)  # the reply, read meanwhile
    finally:
        done.set()
        reader.join(30)
    assert seen["before"] == seen["after"] and seen["inner"] == {}
    # The next read sees the last committed state: the vote.
    assert service.reads.proposal(game, "p1")["votes"] == {"Bruno": "for"}
    assert service.reads.load(game).seq == service.commands.load(game).seq


def test_reads_keep_their_own_state_and_let_idle_ones_go(service) -> None:
    game = _game(service)
    assert service.reads.load(game) is not service.commands.load(game)
    open_ones = service.reads.proposals(game, status="open")
    assert [p["label"] for p in open_ones] == ["p1"]
    assert service.reads.proposals(game, status="adopted") == []
    assert service.reads._states.evict_idle(idle=0) == 1
    assert service.reads.status(game)["game"] == game  # read again from the store


def test_the_chronicle_of_a_long_game_comes_in_pages(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'long.db'}"
    service = open_service(db_url)
    try:
        build_agora_game(service, "long", 2000)
    finally:
        service.close()
    server = Server(db_url)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            first = client.get("/games/long/chronicle")
            assert first.status_code == 200 and len(first.content) < 300 * 1024
            seqs = [int(s) for s in re.findall(r'id="e(\d+)"', first.text)]
            assert len(seqs) == 100 and seqs == sorted(seqs, reverse=True)  # newest first
            earlier = re.search(r'rel="next" href="([^"]+)"', first.text)
            assert earlier and 'rel="prev"' not in first.text
            second = client.get(earlier.group(1).replace("&amp;", "&"))
            older = [int(s) for s in re.findall(r'id="e(\d+)"', second.text)]
            assert second.status_code == 200 and len(older) == 100
            assert max(older) < min(seqs)
            later = re.search(r'rel="prev" href="([^"]+)"', second.text)
            assert later
            back = client.get(later.group(1).replace("&amp;", "&"))
            assert [int(s) for s in re.findall(r'id="e(\d+)"', back.text)] == seqs
            listed = client.get("/games/long/proposals")
            rows = re.findall(r"<tr><th scope=\"row\">", listed.text)
            assert len(rows) == 100 and len(listed.content) < 300 * 1024
            more = re.search(r'rel="next" href="([^"]+)"', listed.text)
            assert more and client.get(more.group(1)).status_code == 200
            feed = client.get("/games/long/feed.atom")
            assert feed.status_code == 200 and feed.text.count("<entry>") == 50
    finally:
        server.stop()

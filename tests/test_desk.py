"""The holder's desk (SQLite on a file): a writer that finds a game held hands its command
to the holder, which decides it in its own commit and answers; an answer lost is found
again by request id (its player's own), never decided twice; strangers at the desk are
turned away.

Two services on one file stand for two processes (each its own cache, connections and
locks); the holder is held inside its own decision so that the others find it busy."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from scriba.service.errors import RequestIdReused
from scriba.service.service import Outcome, Service

START = "2026-03-01T10:00:00Z"
PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]


def new_game(service: Service) -> tuple[str, int, list[str]]:
    """An EquiNomic game with a proposal open: its id, the proposal, who may vote."""
    game = f"eq-{uuid.uuid4().hex[:6]}"
    service.create_game("equinomic", game_id=game, start=START, players=list(PLAYERS))
    author = service.load(game).vars["turn"]
    outcome = service.perform(game, author, "propose", {"changes": [
        {"enact": {"title": "Regola", "text": "Testo."}}]})
    assert outcome.accepted, outcome.message
    return game, outcome.events[0]["payload"]["number"], [p for p in PLAYERS if p != author]


class Held:
    """A service whose next decision waits until released: a writer holding the game."""

    def __init__(self, service: Service) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        original = service.engine.handle

        def handle(*args: Any, **kwargs: Any) -> Any:
            if not self.entered.is_set():
                self.entered.set()
                self.release.wait(60)
            return original(*args, **kwargs)
        service.engine.handle = handle  # type: ignore[method-assign]


class Holding:
    """A game whose lock holder is held inside deciding the first voter's vote."""

    def __init__(self, holder: Service) -> None:
        self.holder = holder
        self.game, self.number, self.voters = new_game(holder)
        held = Held(holder)
        self.release = held.release
        self.thread, self.result = in_thread(vote(holder, self.game, self.voters[0],
                                                  self.number))
        held.entered.wait(30)
        name = holder.store.desk_name(self.game)
        assert name is not None
        self.desk = name

    def let_go(self) -> Outcome:
        self.release.set()
        self.thread.join(30)
        return self.result["outcome"]


def in_thread(call: Callable[[], Outcome]) -> tuple[threading.Thread, dict[str, Any]]:
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["outcome"] = call()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            result["error"] = error
    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def waiting_at_desk(service: Service, game: str) -> int:
    """Connections made to the game's desk and not taken yet (Linux's socket table)."""
    name = service.store.desk_name(game)
    assert name is not None
    path = "@" + name[1:].decode()
    with open("/proc/net/unix") as table:
        lines = [line.split() for line in table.read().splitlines()[1:]]
    return sum(1 for fields in lines if fields[-1] == path and fields[3] != "00010000")


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.005)


def _others_may_run(path: str) -> bool:
    """Whether a user other than the owner may execute ``path`` (every folder above it
    searchable, the file executable by others)."""
    path = os.path.realpath(path)
    folders = [os.path.dirname(path)]
    while folders[-1] != os.path.dirname(folders[-1]):
        folders.append(os.path.dirname(folders[-1]))
    return bool(os.stat(path).st_mode & 0o001) and all(
        os.stat(folder).st_mode & 0o001 for folder in folders)


def vote(service: Service, game: str, voter: str, number: int,
         request_id: str | None = None) -> Callable[[], Outcome]:
    return lambda: service.perform(game, voter, "vote",
                                   {"proposal": number, "choice": "favorevole"},
                                   request_id=request_id)


def votes_by(service: Service, game: str) -> list[str]:
    return [e["actor"] for e in service.log(game) if e["type"] == "vote_cast"]


def test_a_command_handed_to_the_holder_is_decided_in_its_commit(services) -> None:
    holding = Holding(services())
    holder, game, number, voters = (holding.holder, holding.game, holding.number,
                                    holding.voters)
    waiter = services()
    second, second_result = in_thread(vote(waiter, game, voters[1], number))
    until(lambda: waiting_at_desk(holder, game) == 1, "the second vote at the desk")
    mine = holding.let_go()
    second.join(30)
    theirs = second_result["outcome"]
    assert mine.accepted and theirs.accepted, (mine.message, theirs.message)
    assert [e["actor"] for e in theirs.events] == [voters[1]]
    assert theirs.request_id is None and not theirs.repeated
    # decided by the holder, right after its own command, and recorded as the waiter's
    assert votes_by(holder, game) == [voters[0], voters[1]]
    assert theirs.events[0]["seq"] == mine.events[-1]["seq"] + 1
    row = next(r for r in holder.store.inbound(game) if r["id"] == theirs.inbound_id)
    assert row["status"] == "accepted" and row["request_id"].startswith("desk:")
    # the waiter's state is read when asked for, and is the game's
    assert theirs.state is not None and theirs.state.seq == holder.load(game).seq
    assert waiter.load(game).to_json() == holder.replay(game).to_json()


def test_a_holder_that_fails_leaves_its_waiters_to_try_again_once(services) -> None:
    holder, waiter = services(), services()
    game, number, voters = new_game(holder)
    waiter.load(game)
    held = Held(holder)
    failures = []

    def fail_once(connection: Any, game_id: str, events: Any, outcome: Any) -> None:
        if not failures:
            failures.append(game_id)
            raise RuntimeError("the disk is full")
    holder.add_commit_listener(fail_once)
    first, first_result = in_thread(vote(holder, game, voters[0], number, "h-1"))
    held.entered.wait(30)
    second, second_result = in_thread(vote(waiter, game, voters[1], number, "w-1"))
    until(lambda: waiting_at_desk(holder, game) == 1, "the second vote at the desk")
    held.release.set()
    first.join(30)
    second.join(30)
    assert failures  # the holder's first commit failed, with the waiter's vote in it
    theirs = second_result["outcome"]
    assert theirs.accepted and not theirs.repeated, theirs.message
    assert votes_by(holder, game).count(voters[1]) == 1
    rows = [r for r in holder.store.inbound(game) if r["request_id"] == "w-1"]
    assert [r["status"] for r in rows] == ["accepted"]
    assert holder.load(game).to_json() == holder.replay(game).to_json()


def test_one_request_handed_over_twice_is_decided_once(services) -> None:
    holder, one, other = services(), services(), services()
    game, number, voters = new_game(holder)
    one.load(game)
    other.load(game)
    held = Held(holder)
    first, _ = in_thread(vote(holder, game, voters[0], number))
    held.entered.wait(30)
    # the same request sent twice (a client that retried), by two writers
    threads = [in_thread(vote(service, game, voters[1], number, "twice"))
               for service in (one, other)]
    until(lambda: waiting_at_desk(holder, game) == 2, "both at the desk")
    held.release.set()
    first.join(30)
    outcomes = []
    for thread, result in threads:
        thread.join(30)
        outcomes.append(result["outcome"])
    assert votes_by(holder, game).count(voters[1]) == 1
    assert sorted(o.repeated for o in outcomes) == [False, True]
    assert all(o.accepted and o.events == outcomes[0].events for o in outcomes)
    assert [r["status"] for r in holder.store.inbound(game)
            if r["request_id"] == "twice"] == ["accepted"]


def test_at_the_desk_a_request_id_is_its_players_own(services) -> None:
    holder = services()
    game, number, voters = new_game(holder)
    first = holder.perform(game, voters[1], "vote", {"proposal": number, "choice": "favorevole"},
                           request_id="d-1")
    assert first.accepted, first.message
    waiters = [services() for _ in range(2)]
    for waiter in waiters:
        waiter.load(game)
    held = Held(holder)
    own, _ = in_thread(vote(holder, game, voters[0], number))
    held.entered.wait(30)
    # At the holder's desk, under that request id: another player's vote, and the same
    # player's other vote.
    sent = [in_thread(lambda service=service, player=player, choice=choice: service.perform(
                game, player, "vote", {"proposal": number, "choice": choice},
                request_id="d-1"))
            for service, (player, choice) in zip(waiters, [
                (voters[2], "favorevole"), (voters[1], "contrario")], strict=True)]
    until(lambda: waiting_at_desk(holder, game) == 2, "both at the desk")
    held.release.set()
    own.join(30)
    for thread, _ in sent:
        thread.join(30)
    theirs, other = (result for _, result in sent)
    assert theirs["outcome"].accepted and not theirs["outcome"].repeated
    assert theirs["outcome"].events[0]["actor"] == voters[2]  # then the turn ends
    assert isinstance(other.get("error"), RequestIdReused), other
    assert votes_by(holder, game) == [voters[1], voters[0], voters[2]]
    again = vote(waiters[1], game, voters[1], number, "d-1")()
    assert again.repeated and again.events == first.events
    assert sorted((r["player"], r["status"]) for r in holder.store.inbound(game)
                  if r["request_id"] == "d-1") == [(voters[1], "accepted"),
                                                   (voters[2], "accepted")]


def test_strangers_at_the_desk_are_turned_away(services) -> None:
    holding = Holding(services())
    strangers = []
    for junk in (b"\xff\xfe not json\n", b"[1, 2]\n", json.dumps(
            {"command": {"op": "perform"}, "channel": "api"}).encode() + b"\n"):
        stranger = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stranger.connect(holding.desk)
        stranger.sendall(junk)
        strangers.append(stranger)
    assert holding.let_go().accepted
    for stranger in strangers:  # no answer: closed
        stranger.settimeout(10)
        with contextlib.suppress(ConnectionResetError):  # closed before reading it all
            assert stranger.recv(100) == b""
        stranger.close()
    assert votes_by(holding.holder, holding.game) == [holding.voters[0]]


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="needs root to run a process as another user")
def test_another_user_cannot_hand_over_a_command(services) -> None:
    holding = Holding(services())
    holder, game, voters = holding.holder, holding.game, holding.voters
    command = {"command": {"op": "perform", "actor": voters[1], "action": "vote",
                           "args": {"proposal": holding.number, "choice": "favorevole"},
                           "at": None},
               "channel": "api", "raw": "{}", "request_id": "nobody-1", "fresh": True}
    script = ("import socket, sys\n"
              "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
              f"s.connect({holding.desk!r})\n"
              f"s.sendall({(json.dumps(command) + chr(10)).encode()!r})\n"
              "s.settimeout(30)\n"
              "try:\n    print(repr(s.recv(1000)))\n"
              "except ConnectionResetError:\n    print(repr(b''))\n")
    # a Python the other user may run: the interpreter itself, not a venv under /root
    python = next((p for p in (os.path.realpath(sys.executable), "/usr/bin/python3")
                   if os.path.exists(p) and _others_may_run(p)), None)
    if python is None:
        pytest.skip("no Python interpreter another user may run")
    stranger = subprocess.Popen([python, "-I", "-c", script], stdout=subprocess.PIPE,
                                cwd="/", user=65534, group=65534, text=True)
    until(lambda: waiting_at_desk(holder, game) == 1, "the stranger at the desk")
    holding.let_go()
    out, _ = stranger.communicate(timeout=30)
    assert out.strip() == "b''"  # turned away without an answer
    assert votes_by(holder, game) == [voters[0]]

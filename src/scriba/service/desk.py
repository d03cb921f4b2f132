"""The holder's desk: writers waiting for a game hand their commands to its lock holder.

On SQLite (one machine), the process holding a game's lock opens a desk, a local socket
named after the database and the game. A writer that finds the game held connects to it
and sends its command; the holder decides the commands handed over with its own, in the
same commit, and answers each after that commit. The waiter then writes nothing, reads
nothing and folds nothing: it only waits for a line. Without a desk (PostgreSQL, another
machine, a holder that takes no commands), writers keep their input in the database and
wait their turn as before.

Exactly once: nothing handed over is kept before the holder's commit. A holder that
closes its desk, fails or dies before answering leaves its waiters with no answer; they
try again with the same request id (one is made up when the client gave none), so a
command that was committed after all is found and answered, never decided twice. The
holder looks a request id up as its player's own (game, player, id: the player the
command acts as) and answers ``{"reused": true}`` when that player sent it before with
another command.

The socket is in Linux's abstract namespace (nothing left on disk by a crash); only
processes of the same user may hand over a command (``SO_PEERCRED``): they could write
to the database file anyway.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any

# A waiter sends its command right after connecting; a connection that sends nothing
# usable this long is dropped (its writer tries again).
READ_TIMEOUT_S = 2.0
# How long a waiter waits for its answer: a holder decides up to a batch of commands,
# each within the rules' budget.
ANSWER_TIMEOUT_S = 600.0
MAX_LINE = 4 * 1024 * 1024  # a command as the service accepts it fits well inside
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


@dataclass
class Handed:
    """A command handed over: what the waiter sent, and its connection for the answer."""

    connection: socket.socket
    command: dict[str, Any]
    channel: str
    raw: str
    request_id: str
    fresh: bool  # a request id made up for this hand-over and never sent before

    def answer(self, answer: dict[str, Any]) -> None:
        try:
            self.connection.sendall(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
        except OSError:
            pass  # the waiter is gone: its command stands, a retry finds it by request id
        finally:
            self.connection.close()

    def drop(self) -> None:
        """No answer: the waiter tries again (nothing was committed for it)."""
        self.connection.close()


class Desk:
    """Opened by a game's lock holder (while it holds the lock), closed before it lets go."""

    def __init__(self, listener: socket.socket) -> None:
        self._listener: socket.socket | None = listener
        self.served = 0  # commands taken so far

    @classmethod
    def open(cls, name: bytes | None) -> Desk | None:
        if name is None:
            return None
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(name)
            listener.listen(128)
            listener.setblocking(False)
        except OSError:  # e.g. a holder of another network namespace: no desk, no harm
            listener.close()
            return None
        return cls(listener)

    def wait(self, seconds: float) -> bool:
        """Whether a command is handed over within ``seconds`` (or already waits)."""
        if self._listener is None:
            return False
        return bool(select.select([self._listener], [], [], seconds)[0])

    def gather(self, expected: int, pause: float, within: float) -> list[Handed]:
        """The commands handed over within ``pause`` (none: nobody came back), and once
        one is, the others up to ``expected`` that come within ``within`` more."""
        if not self.wait(pause):
            return []
        taken = self.take(max(expected, 1))
        deadline = time.monotonic() + within
        while len(taken) < expected and (left := deadline - time.monotonic()) > 0 \
                and self.wait(left):
            taken += self.take(expected - len(taken))
        return taken

    def take(self, limit: int) -> list[Handed]:
        """The commands handed over since the last look (at most ``limit``); those beyond
        stay in the backlog and are turned away when the desk closes."""
        handed: list[Handed] = []
        while self._listener is not None and len(handed) < limit:
            try:
                connection, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                break
            item = _receive(connection)
            if item is None:
                connection.close()
            else:
                handed.append(item)
        self.served += len(handed)
        return handed

    def close(self) -> None:
        """Stop taking commands: connections not taken are reset, their writers retry."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None


def _receive(connection: socket.socket) -> Handed | None:
    connection.setblocking(True)
    connection.settimeout(READ_TIMEOUT_S)
    try:
        pid, uid, gid = _CREDENTIALS.unpack(connection.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size))
        if uid != os.getuid():
            return None
        payload = json.loads(_read_line(connection))
    except (OSError, ValueError):
        return None
    if not (isinstance(payload, dict) and isinstance(payload.get("command"), dict)
            and isinstance(payload.get("channel"), str) and isinstance(payload.get("raw"), str)
            and isinstance(payload.get("request_id"), str)):
        return None
    connection.settimeout(None)
    return Handed(connection, payload["command"], payload["channel"], payload["raw"],
                  payload["request_id"], payload.get("fresh") is True)


def _read_line(connection: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            raise OSError("closed before the end of the line")
        end = chunk.find(b"\n")
        if end >= 0:
            chunks.append(chunk[:end])
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_LINE:
            raise ValueError("line too long")


def hand_over(name: bytes, command: dict[str, Any], channel: str, raw: str,
              request_id: str, fresh: bool) -> dict[str, Any] | None:
    """Hand a command to the game's lock holder and wait for its answer; None when there
    is no desk, or no answer came (then nothing was decided, or the request id finds it)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(ANSWER_TIMEOUT_S)
        connection.connect(name)
        connection.sendall(json.dumps({"command": command, "channel": channel, "raw": raw,
                                       "request_id": request_id, "fresh": fresh},
                                      ensure_ascii=False).encode() + b"\n")
        answer = json.loads(_read_line(connection))
    except (OSError, ValueError):
        return None
    finally:
        connection.close()
    return answer if isinstance(answer, dict) else None

"""A pool of persistent sandbox worker processes.

Rule code never runs in the server process. Each worker is a child process with an
address-space limit. A request that does not answer by its deadline kills its worker and
is answered with an error — not retried: the time is spent. So is a worker that killed
itself (its timer: a step of rule code overran its call's time) or ran out of memory
while running a rule's code: the answer names that rule (``running``, from the mark the
worker keeps at the start of its stderr file) so that the host stops only that rule. A
worker that dies for another reason (a crash) is replaced and the request retried once,
within what is left of the same deadline. A caller never waits behind another caller's
slow request: when no worker is idle a new one is started, up to ``max_size``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from scriba.kernel.limits import WORKER_MEMORY
from scriba.rulecode.cost import KILLED_TEXT, MEMORY_TEXT
from scriba.rulecode.guard import Guard, read_mark
from scriba.rulecode.viewparts import PartStore, ask_with_parts

# Makes a request, and the lines that follow it, for one worker from its store of parts.
Prepare = Callable[..., tuple[dict[str, Any], bytes]]

DEFAULT_MEMORY = WORKER_MEMORY
DEFAULT_WALL_CLOCK = 10.0
# Workers at most (started when every one is busy; beyond, a caller waits for one to be
# free). One per game deciding at once, as issue 18 asks, up to 16: a worker holds ~30 MB
# with a game's rules and parts (28-32 MB RSS measured), and on a 2-core server more
# processes than that only queue for the cores (python -m scriba.bench.games: 16 busy
# games, a worker each, 230-360 votes/s in all; 7-43 when workers were not kept).
DEFAULT_MAX_WORKERS = 16
# A worker beyond the pool's ``size`` is stopped once it has idled this long. A busy
# game's next command comes within seconds, and a worker started again costs ~0.15 s
# and compiling its game's rules again (0.1-0.3 s); an idle minute costs only memory.
IDLE_SECONDS = 60.0
# A game asked about less than this long ago is busy: while the pool may grow, a busy game
# does not take the idle worker of another busy one (a switch costs that game its parts
# and last view; a game voting steadily is back within tens of milliseconds, players in
# a discussion within seconds; a game asked about once a minute is not busy).
BUSY_SECONDS = 5.0
# The server never takes in more than this from rule code in one answer.
MAX_ANSWER_BYTES = 16 * 1024 * 1024
_PIPE_BYTES = 1024 * 1024  # Linux's default ceiling for an unprivileged process


class WorkerDied(Exception):
    def __init__(self, message: str, timed_out: bool = False, final: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.final = final or timed_out  # the rule's own doing: asking again would repeat it


class WorkerProcess:
    def __init__(self, memory_limit: int) -> None:
        env = {**os.environ, "SCRIBA_WORKER_MEMORY": str(memory_limit)}
        # stderr goes to a file so that the reason of a crash (a Rust out-of-memory abort
        # prints there) can be told to the players.
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in kill()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "scriba.rulecode.worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            env=env, bufsize=0,
        )
        self._buffer = b""
        self.parts: PartStore[None] = PartStore()  # what the worker keeps of game views
        self.game: str | None = None  # the game it served last (the pool's affinity)
        self.last_used = time.monotonic()
        assert self.process.stdin is not None and self.process.stdout is not None
        for stream in (self.process.stdin, self.process.stdout):
            # A view larger than the default 64 KiB pipe would block the write until the
            # worker has drained part of it: one more wake-up of each side per call.
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        self._selector = selectors.DefaultSelector()  # kept: one epoll per worker, not per call
        self._selector.register(self.process.stdout.fileno(), selectors.EVENT_READ)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, request: dict[str, Any], timeout: float,
            lines: bytes = b"") -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        line = json.dumps(request).encode() + b"\n"
        line += lines  # what follows the request (each ends with its newline)
        try:
            self.process.stdin.write(line)
        except (BrokenPipeError, OSError) as exc:
            raise WorkerDied(f"worker {self.pid} is gone ({exc})") from None
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise WorkerDied(f"wall-clock limit exceeded (no answer within {timeout:.3g} s; "
                                 "the rule's code was stopped)", timed_out=True)
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._death()
            self._buffer += chunk
            if len(self._buffer) > MAX_ANSWER_BYTES:
                raise WorkerDied(f"the rule's code returned more than "
                                 f"{MAX_ANSWER_BYTES // (1024 * 1024)} MiB of data")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def _death(self) -> WorkerDied:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        if self.process.returncode == -signal.SIGALRM:  # its own timer: see guard.Guard
            return WorkerDied(KILLED_TEXT, timed_out=True)
        self.stderr.seek(0)
        printed = self.stderr.read(65536).decode(errors="replace")
        if "memory allocation" in printed or "MemoryError" in printed:
            return WorkerDied(MEMORY_TEXT, final=self.running() is not None)
        return WorkerDied(f"worker {self.pid} died during the call "
                          f"(exit {self.process.returncode})")

    def running(self) -> list[str] | None:
        """The rule and hook the worker is running (or was, when it died), if any."""
        with contextlib.suppress(OSError, ValueError):
            return read_mark(os.pread(self.stderr.fileno(), Guard.MARK, 0))
        return None

    def kill(self) -> None:
        self._selector.close()
        if self.alive():
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            if stream is not None:
                stream.close()


class PoolStats(NamedTuple):
    """What the pool holds now and has done so far (for metrics)."""

    workers: int  # processes up (busy or idle; those starting included)
    idle: int
    spawns: int  # processes started since the pool was made
    respawns: int  # workers that died or were killed (each replaced when next needed)


class WorkerPool:
    """Workers chosen by game: a request names its game (``affinity``) and goes to the
    idle worker that served that game last, which holds the game's view parts and the
    last view it put together. A game with no idle worker of its own takes the idle one
    whose game was served longest ago, unless both games are busy (asked about within
    BUSY_SECONDS): then a worker is started for it, up to ``max_size`` (when all are
    busy, too; at the maximum a caller waits). So the pool grows to the number of games
    deciding at once, and interleaved busy games do not take each other's workers.
    Workers beyond ``size`` are stopped once idle for ``idle_seconds``, when the pool is
    next used (no thread of its own; :meth:`reap` does it on demand)."""

    def __init__(self, size: int = 2, memory_limit: int = DEFAULT_MEMORY,
                 wall_clock: float = DEFAULT_WALL_CLOCK,
                 max_size: int = DEFAULT_MAX_WORKERS,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.size = size  # workers kept however long they idle
        self.max_size = max(size, max_size, 1)  # workers at most, when all are busy
        self.memory_limit = memory_limit
        self.wall_clock = wall_clock
        self.idle_seconds = idle_seconds
        self._idle: list[WorkerProcess] = []
        self._all: list[WorkerProcess | _Starting] = []
        self._seen: dict[str, float] = {}  # game -> when last asked about, oldest first
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)  # a worker idle, or room to start one
        self.spawns = 0
        self.respawns = 0

    def stats(self) -> PoolStats:
        with self._lock:
            return PoolStats(len(self._all), len(self._idle), self.spawns, self.respawns)

    def _start(self, place: _Starting) -> WorkerProcess:
        """A new worker in the place reserved for it (under the lock, with the check for
        room: two callers never both start the last worker allowed)."""
        try:
            worker = WorkerProcess(self.memory_limit)
        except BaseException:
            with self._lock:
                self._all.remove(place)
                self._freed.notify_all()
            raise
        with self._lock:
            self._all[self._all.index(place)] = worker
        return worker

    def _acquire(self, affinity: str | None, timeout: float) -> WorkerProcess | None:
        deadline = time.monotonic() + timeout
        while True:
            stale: list[WorkerProcess] = []
            place = None
            with self._lock:
                busy = self._busy(affinity, time.monotonic())
                while True:
                    now = time.monotonic()
                    stale += self._stale(now)
                    worker = self._choose(affinity, now, busy)
                    if worker is None and len(self._all) < self.max_size:
                        self._all.append(place := _Starting())
                        self.spawns += 1
                    if worker is not None or place is not None:
                        break
                    if now >= deadline:
                        break
                    self._freed.wait(deadline - now)
            self._kill(stale)
            if place is not None:
                return self._start(place)
            if worker is None:
                return None
            if worker.alive():
                return worker
            self._discard(worker)  # died while idle: another is chosen or started
            with self._lock:
                self.respawns += 1

    def _choose(self, affinity: str | None, now: float, busy: bool) -> WorkerProcess | None:
        """The idle worker for a request about game ``affinity`` (under the lock), or
        None to start one: the game's own; else the one whose game was served longest
        ago (a new one has none) — unless the pool has fewer than ``size`` or both games
        are busy (``busy``: this one's) and the pool may grow: then one is started."""
        if not self._idle:
            return None
        own = [w for w in self._idle if affinity is not None and w.game == affinity]
        if own:
            worker = own[-1]  # the latest to serve it: its parts are the game's newest
        else:
            worker = min(self._idle, key=lambda w: (w.game is not None, w.last_used))
            if worker.game is not None and len(self._all) < self.max_size and (
                    len(self._all) < self.size  # kept anyway: never a waste to start
                    or busy and now - worker.last_used < BUSY_SECONDS):
                return None
        self._idle.remove(worker)
        return worker

    def _busy(self, affinity: str | None, now: float) -> bool:
        """Whether game ``affinity`` was asked about less than BUSY_SECONDS ago (under the
        lock; notes this request). A game asked about once in a while (a page, a timer)
        takes an idle worker rather than start one."""
        if affinity is None:
            return False
        last = self._seen.pop(affinity, None)
        self._seen[affinity] = now
        while self._seen:  # oldest first: only the games busy now are kept
            game, seen = next(iter(self._seen.items()))
            if now - seen < BUSY_SECONDS:
                break
            del self._seen[game]
        return last is not None and now - last < BUSY_SECONDS

    def _release(self, worker: WorkerProcess, affinity: str | None) -> None:
        with self._lock:
            worker.last_used = time.monotonic()
            if affinity is not None:  # a request about no game leaves the game's parts
                worker.game = affinity
            self._idle.append(worker)
            self._freed.notify_all()  # each waiter looks again: it may want this one
            stale = self._stale(worker.last_used)
        self._kill(stale)

    def _stale(self, now: float) -> list[WorkerProcess]:
        """Idle workers beyond ``size`` that have idled ``idle_seconds``, taken out of the
        pool (under the lock; the caller stops them outside it)."""
        stale: list[WorkerProcess] = []
        for worker in sorted(self._idle, key=lambda w: w.last_used):
            if len(self._all) - len(stale) <= self.size or \
                    now - worker.last_used < self.idle_seconds:
                break
            stale.append(worker)
        for worker in stale:
            self._idle.remove(worker)
            self._all.remove(worker)
        return stale

    def _kill(self, workers: list[WorkerProcess]) -> None:
        for worker in workers:
            worker.kill()
        if workers:
            with self._lock:
                self._freed.notify_all()  # room to start workers

    def reap(self) -> int:
        """Stop the workers that have idled too long now; how many."""
        with self._lock:
            stale = self._stale(time.monotonic())
        self._kill(stale)
        return len(stale)

    def _discard(self, worker: WorkerProcess) -> None:
        worker.kill()
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)
            if worker in self._idle:
                self._idle.remove(worker)
            self._freed.notify_all()  # room for a caller waiting to start one

    def request(self, payload: dict[str, Any], timeout: float | None = None,
                prepare: Prepare | None = None, affinity: str | None = None) -> dict[str, Any]:
        """Send one request and wait at most ``timeout`` seconds (the pool's wall clock by
        default) for its answer, all attempts included. ``prepare`` makes the request,
        and the lines that follow it, for the worker that takes it, from that worker's
        store of view parts (:mod:`scriba.rulecode.viewparts`). ``affinity`` names the
        game the request is about (its worker is preferred). A timeout is final; a
        crash is retried once on a fresh worker while time remains."""
        deadline = time.monotonic() + (self.wall_clock if timeout is None else timeout)
        last_error = ""
        for _attempt in range(2):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            worker = self._acquire(affinity, remaining)
            if worker is None:
                return {"died": "no sandbox worker became free in time (the server is busy)"}
            try:
                answer = _ask(worker, payload, deadline, prepare)
            except WorkerDied as died:
                last_error = str(died)
                running = worker.running()
                self._discard(worker)
                with self._lock:
                    self.respawns += 1
                if died.final:
                    return {"died": last_error, "timed_out": died.timed_out,
                            "running": running}
                continue
            except BaseException:
                # Not the worker's fault, but its state is unknown (a request half sent).
                self._discard(worker)
                raise
            self._release(worker, affinity)
            return answer
        return {"died": last_error or "wall-clock limit exceeded before the call could run",
                "timed_out": not last_error}

    def pids(self) -> list[int]:
        with self._lock:
            return [w.pid for w in self._all if isinstance(w, WorkerProcess) and w.alive()]

    def close(self) -> None:
        with self._lock:
            workers = [w for w in self._all if isinstance(w, WorkerProcess)]
        for worker in workers:
            self._discard(worker)


def _ask(worker: WorkerProcess, payload: dict[str, Any], deadline: float,
         prepare: Prepare | None) -> dict[str, Any]:
    if prepare is None:
        return worker.ask(payload, deadline - time.monotonic())
    return ask_with_parts(lambda request, lines: worker.ask(
        request, deadline - time.monotonic(), lines), worker.parts, payload, prepare)


class _Starting:
    """Holds a worker's place in the pool while its process starts."""

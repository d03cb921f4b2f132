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
import queue
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from scriba.kernel.limits import WORKER_MEMORY
from scriba.rulecode.cost import KILLED_TEXT, MEMORY_TEXT
from scriba.rulecode.viewparts import PartStore, ask_with_parts
from scriba.rulecode.worker import Guard, read_mark

# Makes a request, and the lines that follow it, for one worker from its store of parts.
Prepare = Callable[..., tuple[dict[str, Any], bytes]]

DEFAULT_MEMORY = WORKER_MEMORY
DEFAULT_WALL_CLOCK = 10.0
# Workers started when every one is busy; beyond this, a caller waits for one to be free.
DEFAULT_MAX_WORKERS = 16
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
        if self.process.returncode == -signal.SIGALRM:  # its own timer: see worker.Guard
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


class WorkerPool:
    def __init__(self, size: int = 2, memory_limit: int = DEFAULT_MEMORY,
                 wall_clock: float = DEFAULT_WALL_CLOCK,
                 max_size: int = DEFAULT_MAX_WORKERS) -> None:
        self.size = size  # workers kept when idle
        self.max_size = max(size, max_size)  # workers at most, when all are busy
        self.memory_limit = memory_limit
        self.wall_clock = wall_clock
        self._idle: queue.LifoQueue[WorkerProcess] = queue.LifoQueue()
        self._all: list[WorkerProcess] = []
        self._lock = threading.Lock()
        self.respawns = 0

    def _spawn(self) -> WorkerProcess:
        worker = WorkerProcess(self.memory_limit)
        with self._lock:
            self._all.append(worker)
        return worker

    def _acquire(self, timeout: float) -> WorkerProcess | None:
        try:
            worker = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                room = len(self._all) < self.max_size
                if room:  # reserve the place before starting the process, outside the lock
                    self._all.append(placeholder := _Starting())
            if room:
                try:
                    worker = WorkerProcess(self.memory_limit)
                finally:
                    with self._lock:
                        self._all.remove(placeholder)
                with self._lock:
                    self._all.append(worker)
            else:
                try:
                    worker = self._idle.get(timeout=max(timeout, 0.001))
                except queue.Empty:
                    return None
        if not worker.alive():
            self._discard(worker)
            self.respawns += 1
            worker = self._spawn()
        return worker

    def _release(self, worker: WorkerProcess) -> None:
        with self._lock:
            surplus = self._idle.qsize() >= self.size
        if surplus:  # started for a busy moment: not kept once the moment has passed
            self._discard(worker)
        else:
            self._idle.put(worker)

    def _discard(self, worker: WorkerProcess) -> None:
        worker.kill()
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)

    def request(self, payload: dict[str, Any], timeout: float | None = None,
                prepare: Prepare | None = None) -> dict[str, Any]:
        """Send one request and wait at most ``timeout`` seconds (the pool's wall clock by
        default) for its answer, all attempts included. ``prepare`` makes the request,
        and the lines that follow it, for the worker that takes it, from that worker's
        store of view parts (:mod:`scriba.rulecode.viewparts`). A timeout is final; a
        crash is retried once on a fresh worker while time remains."""
        deadline = time.monotonic() + (self.wall_clock if timeout is None else timeout)
        last_error = ""
        for _attempt in range(2):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            worker = self._acquire(remaining)
            if worker is None:
                return {"died": "no sandbox worker became free in time (the server is busy)"}
            try:
                answer = _ask(worker, payload, deadline, prepare)
            except WorkerDied as died:
                last_error = str(died)
                running = worker.running()
                self._discard(worker)
                self.respawns += 1
                if died.final:
                    return {"died": last_error, "timed_out": died.timed_out,
                            "running": running}
                continue
            self._release(worker)
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

"""A pool of persistent sandbox worker processes.

Rule code never runs in the server process. Each worker is a child process with an
address-space limit; a call that does not answer within the wall-clock limit, or whose
worker dies, kills that worker, starts a fresh one and retries the call once. If the
retry fails too the call is answered with an error, never half-applied.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import selectors
import subprocess
import sys
import tempfile
import time
from typing import Any

DEFAULT_MEMORY = 1024 * 1024 * 1024
DEFAULT_WALL_CLOCK = 10.0
# The server never takes in more than this from rule code in one answer.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class WorkerDied(Exception):
    pass


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
        assert self.process.stdout is not None
        self._selector = selectors.DefaultSelector()  # kept: one epoll per worker, not per call
        self._selector.register(self.process.stdout.fileno(), selectors.EVENT_READ)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
        except (BrokenPipeError, OSError) as exc:
            raise WorkerDied(f"worker {self.pid} is gone ({exc})") from None
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                raise WorkerDied(f"no answer within {timeout:g} s (wall-clock limit)")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerDied(self._death_reason())
            self._buffer += chunk
            if len(self._buffer) > MAX_ANSWER_BYTES:
                raise WorkerDied(f"the rule's code returned more than "
                                 f"{MAX_ANSWER_BYTES // (1024 * 1024)} MiB of data")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def _death_reason(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2)
        self.stderr.seek(0)
        printed = self.stderr.read(65536).decode(errors="replace")
        if "memory allocation" in printed or "MemoryError" in printed:
            return "memory limit exceeded (the rule's code allocated too much and was stopped)"
        return f"worker {self.pid} died during the call (exit {self.process.returncode})"

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
                 wall_clock: float = DEFAULT_WALL_CLOCK) -> None:
        self.size = size
        self.memory_limit = memory_limit
        self.wall_clock = wall_clock
        self._idle: queue.LifoQueue[WorkerProcess] = queue.LifoQueue()
        self._all: list[WorkerProcess] = []
        self.respawns = 0

    def _spawn(self) -> WorkerProcess:
        worker = WorkerProcess(self.memory_limit)
        self._all.append(worker)
        return worker

    def _acquire(self) -> WorkerProcess:
        try:
            worker = self._idle.get_nowait()
        except queue.Empty:
            live = [w for w in self._all if w.alive()]
            worker = self._spawn() if len(live) < self.size else self._idle.get()
        if not worker.alive():
            self._discard(worker)
            self.respawns += 1
            worker = self._spawn()
        return worker

    def _discard(self, worker: WorkerProcess) -> None:
        worker.kill()
        if worker in self._all:
            self._all.remove(worker)

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Send one request; retry once on a fresh worker if the first one dies."""
        last_error = ""
        for _attempt in range(2):
            worker = self._acquire()
            try:
                answer = worker.ask(payload, self.wall_clock)
            except WorkerDied as died:
                last_error = str(died)
                self._discard(worker)
                self.respawns += 1
                continue
            self._idle.put(worker)
            return answer
        return {"died": last_error}

    def pids(self) -> list[int]:
        return [w.pid for w in self._all if w.alive()]

    def close(self) -> None:
        for worker in list(self._all):
            self._discard(worker)

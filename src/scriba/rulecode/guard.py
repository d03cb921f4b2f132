"""What only a worker process can do around a frame of rule code (:class:`Guard`): say which
rule runs, at the start of its stderr file (:func:`read_mark`, read by the pool if the
process dies, so that only that rule is stopped); kill the process ``KILL_GRACE`` after the
frame's time is up (a step that cannot be interrupted: a huge allocation, a builtin on a
huge value); lower its address-space limit to what it uses plus ``MEMORY_PER_CALL``
(``MODULE_MEMORY`` for a rule's top-level code, whose values stay with the compiled module
in the cache)."""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import stat

from scriba.kernel.limits import KILL_GRACE, MEMORY_PER_CALL, MODULE_MEMORY
from scriba.rulecode.cost import Frame

# The frame's name for compiling a rule's code, and the rule proposing code stands for.
TOP_LEVEL = "(top level)"
PROPOSED = "(proposed)"


class Guard:
    """What only a worker process can do around a frame: say which rule runs (at the
    start of its stderr file, read by the pool if the process dies), kill the process when
    a step overruns its frame's time, and bound the memory a call may add."""

    MARK = 128  # bytes at the start of stderr kept for the mark; the rest is stderr's

    def __init__(self) -> None:
        self.marks = stat.S_ISREG(os.fstat(2).st_mode)
        if self.marks:  # the place of the mark, before anything else is written there
            os.write(2, b" " * (self.MARK - 1) + b"\n")
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # even if the parent ignored it
        self.hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        self._statm = os.open("/proc/self/statm", os.O_RDONLY)
        self._page = resource.getpagesize()
        self._marks: dict[tuple[str, str], bytes] = {}  # each frame's mark, made once
        self._blank = self._line("")

    def enter(self, frame: Frame, outermost: bool) -> None:
        if outermost:  # what a call, or a rule's top-level code, may add to the worker
            more = MODULE_MEMORY if frame.hook == TOP_LEVEL else MEMORY_PER_CALL
            self._limit_memory(self.address_space() + more)
        self.arm(frame)

    def arm(self, frame: Frame) -> None:
        """``frame`` is the one running (again): mark it, kill it past its time."""
        key = (frame.rule, frame.hook)
        line = self._marks.get(key)
        if line is None:
            if len(self._marks) > 4096:  # a long game's many rules: begin again
                self._marks.clear()
            line = self._marks[key] = self._line(json.dumps([frame.rule, frame.hook]))
        self._write_mark(line)
        seconds = max(frame.deadline - frame.resumed, 0) + KILL_GRACE
        # SIGALRM's default action ends the process; no limit (a bare request): no timer.
        signal.setitimer(signal.ITIMER_REAL, seconds if math.isfinite(seconds) else 0)

    def leave(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self._write_mark(self._blank)
        self._limit_memory(self.hard)

    def address_space(self) -> int:
        return int(os.pread(self._statm, 64, 0).split()[0]) * self._page

    def _limit_memory(self, limit: int) -> None:
        if self.hard != resource.RLIM_INFINITY:
            limit = min(limit, self.hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, self.hard))

    def _line(self, text: str) -> bytes:
        line = text.encode()
        if len(line) >= self.MARK:
            line = b""  # an unusually long rule id: the pool will not know the culprit
        return line.ljust(self.MARK - 1) + b"\n"

    def _write_mark(self, line: bytes) -> None:
        if self.marks:
            os.pwrite(2, line, 0)


def read_mark(stderr_head: bytes) -> list[str] | None:
    """The rule and hook a worker was running, from the start of its stderr file."""
    first = stderr_head[:Guard.MARK].split(b"\n", 1)[0].strip()
    try:
        mark = json.loads(first) if first else None
    except ValueError:
        return None
    return mark if isinstance(mark, list) and len(mark) == 2 else None

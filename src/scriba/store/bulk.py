"""Reading a whole log without the cyclic garbage collector stepping in.

Decoding and folding tens of thousands of events allocates hundreds of thousands of
containers; each allocation burst triggers collections, and in a process holding other
big games' states the full ones traverse all of it — more time than the read itself. The
objects made are plain trees freed by reference counting, so the collector is paused
for the bulk work and resumed after (nested and concurrent users counted).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_users = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    global _users, _was_enabled
    with _lock:
        if _users == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _was_enabled:
                gc.enable()

"""Bounded caches shared by threads: the one way to keep a value and drop the oldest."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(cache: OrderedDict[K, V], key: K, value: V, limit: int) -> V:
    """Store ``value`` under ``key`` and drop the oldest entries beyond ``limit``."""
    cache[key] = value
    while len(cache) > limit:
        try:  # another thread may be trimming too
            cache.popitem(last=False)
        except KeyError:
            break
    return value

"""The check every value a rule stores or a player sends passes: plain JSON, bounded.

A value nested 200 levels deep, a float NaN, a non-string key or 100 MB of text would
otherwise be stored in the log and then break every later reading of the game (the view
the rules receive, the export, the replay). Refused when made, it is never stored.
"""

from __future__ import annotations

import math
from typing import Any

from scriba.kernel.limits import MAX_VALUE_BYTES, MAX_VALUE_DEPTH

_MAX_INT = 2 ** 63


class BadValue(ValueError):
    """The value is not plain, bounded JSON data; the message says why."""


def check_value(value: Any, what: str, max_depth: int = MAX_VALUE_DEPTH,
                max_bytes: int = MAX_VALUE_BYTES) -> None:
    """Raise :class:`BadValue` unless ``value`` is JSON data within the limits."""
    size = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            raise BadValue(f"{what} is nested more than {max_depth} levels deep")
        if item is None or isinstance(item, bool):
            size += 5
        elif isinstance(item, int):
            if not -_MAX_INT <= item < _MAX_INT:
                raise BadValue(f"{what} holds an integer beyond 64 bits")
            size += 20
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise BadValue(f"{what} holds {item!r}, which is not a JSON number")
            size += 24
        elif isinstance(item, str):
            size += len(item) + 2
            _check_text(item, what)
        elif isinstance(item, list | tuple):
            size += 2 + len(item)
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, dict):
            size += 2 + 2 * len(item)
            for key, v in item.items():
                if not isinstance(key, str):
                    raise BadValue(f"{what} has a key {key!r} that is not a string")
                size += len(key) + 2
                _check_text(key, what)
                stack.append((v, depth + 1))
        else:
            raise BadValue(f"{what} holds a {type(item).__name__}, which is not JSON data")
        if size > max_bytes:
            raise BadValue(f"{what} is larger than {max_bytes // 1024} KiB")


def _check_text(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadValue(f"{what} holds text that is not valid Unicode") from None

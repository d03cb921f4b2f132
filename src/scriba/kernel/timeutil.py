"""Game time: ISO-8601 UTC strings that sort as they read, and durations like ``3d``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | datetime) -> datetime:
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    value = str(text).strip().replace("Z", "+00:00")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        value += "T00:00:00+00:00"
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def normalize(text: str | datetime) -> str:
    return iso(parse_time(text))


def to_ts(text: str) -> int:
    return int(parse_time(text).timestamp())


def from_ts(ts: int | float) -> str:
    return iso(datetime.fromtimestamp(ts, tz=UTC))


def parse_duration(text: str | int) -> int:
    """Seconds in ``90``, ``"45m"``, ``"3d"``, ``"1w 2d"``; raises ValueError otherwise."""
    if isinstance(text, int):
        return text
    parts = re.findall(r"(\d+)\s*([smhdw])", str(text).strip().lower())
    rest = re.sub(r"(\d+)\s*([smhdw])|\s", "", str(text).strip().lower())
    if not parts or rest:
        raise ValueError(f"not a duration: {text!r} (write e.g. 3d, 12h, 1w)")
    return sum(int(n) * _UNITS[u] for n, u in parts)


def add_seconds(text: str, seconds: int) -> str:
    return iso(parse_time(text) + timedelta(seconds=seconds))

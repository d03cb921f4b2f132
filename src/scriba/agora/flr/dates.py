"""Agora's printed dates ("27 Sep 1999") to and from ISO dates ("1999-09-27")."""

from __future__ import annotations

import datetime as dt
import re

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

# One printed date; the day may or may not be zero-padded depending on the document part.
DATE_PATTERN = r"\d{1,2} (?:" + "|".join(MONTHS) + r") \d{4}"
_DATE_RE = re.compile(r"(\d{1,2}) ([A-Z][a-z]{2}) (\d{4})")


def parse_date(text: str) -> str | None:
    """Return the ISO form of a printed date, or None if it is not a real calendar date."""
    match = _DATE_RE.fullmatch(text)
    if match is None or match.group(2) not in MONTHS:
        return None
    day, month, year = int(match.group(1)), MONTHS.index(match.group(2)) + 1, int(match.group(3))
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def render_date(iso: str, *, pad_day: bool = True) -> str:
    """Print an ISO date the Agora way; History lines pad the day, the header does not."""
    day = dt.date.fromisoformat(iso)
    day_text = f"{day.day:02d}" if pad_day else str(day.day)
    return f"{day_text} {MONTHS[day.month - 1]} {day.year}"

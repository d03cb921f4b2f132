"""Rule-history entries: parse one FLR `History:` line into a plain dict and render it back.

The dict is Scriba's general rule-history format (the kernel stores a rule's
history as a list of these), so it carries no Agora wording:

    {"change": "amend", "revision": 1,
     "cause": {"kind": "proposal", "proposal": "3915", "title": "General Cleanup",
               "tags": [], "authors": ["harvel"]},
     "date": "1999-09-27", "date_circa": False, "date_until": None,
     "detail": {}, "raw": "Amended(1) by P3915 'General Cleanup' (harvel), 27 Sep 1999"}

`date_until` is set when only a range is known ("between A and B"): `date` is
then the earliest day and `date_circa` is true. Lines that cannot be
structured become {"change": "unparsed", "raw": line}. All Agora phrasing lives
in the `render_*` functions below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scriba.agora.flr.dates import DATE_PATTERN, parse_date, render_date
from scriba.agora.flr.wrap import WIDTH, unwrap, wrap

HistoryEntry = dict[str, Any]

# Wrapped History lines continue with a three-space indent.
CONTINUATION = "   "

_DATE_SUFFIX = re.compile(
    rf", (?:around (?P<around>{DATE_PATTERN})"
    rf"|between (?P<start>{DATE_PATTERN}) and (?P<end>{DATE_PATTERN})"
    rf"|(?P<exact>{DATE_PATTERN}))$"
)
_INITIAL = re.compile(r"Initial (?P<mutability>\w+) rule (?P<number>\d+), Agora's birth")

# Where the change phrase may stop: before the cause, or at the end of the line.
_END = r"(?= by |$)"

# Change phrases, tried in order; each builds (change, revision, detail).
_HEADS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[str, int | None, dict]]]] = [
    (re.compile(r"Enacted" + _END), lambda m: ("enact", None, {})),
    (
        re.compile(r"Null-amended\((?P<rev>\d+)\)" + _END),
        lambda m: ("amend", int(m["rev"]), {"null": True}),
    ),
    (
        re.compile(r"Amended(?:\((?P<rev>\d+)\))?" + _END),
        lambda m: ("amend", _int_or_none(m["rev"]), {}),
    ),
    (
        re.compile(r"Infected and amended\((?P<rev>\d+)\)" + _END),
        lambda m: ("infect", int(m["rev"]), {"amended": True}),
    ),
    (re.compile(r"Infected" + _END), lambda m: ("infect", None, {})),
    (
        re.compile(
            r"Re-enacted\((?P<rev>\d+)\)(?: at Power=(?P<power>[\d.]+))?(?P<amended> and amended)?"
            + _END
        ),
        lambda m: ("reenact", int(m["rev"]), _reenact_detail(m)),
    ),
    (re.compile(r"Repealed" + _END), lambda m: ("repeal", None, {})),
    (re.compile(r"Renumbered" + _END), lambda m: ("renumber", None, {})),
    (
        re.compile(r"Retitled(?: from '(?P<old>.*?)')?(?: to '(?P<new>.*?)')?" + _END),
        lambda m: ("retitle", None, _retitle_detail(m)),
    ),
    (
        re.compile(r"Power changed from (?P<old>[\d.]+) to (?P<new>[\d.]+)" + _END),
        lambda m: ("power", None, {"from": m["old"], "to": m["new"]}),
    ),
    (
        re.compile(r"Mutated from MI=(?P<old>\w+) to MI=(?P<new>\w+)" + _END),
        lambda m: ("mutate", None, {"from": m["old"], "to": m["new"]}),
    ),
    (
        re.compile(r"Assigned to the (?P<to>.+?)" + _END),
        lambda m: ("assign", None, {"to": m["to"]}),
    ),
]

# Causes ("by ..."). The proposal pattern is lazy so that titles may contain
# quotes: a title ends at the last quote that is followed by tags, authors or the end.
_PROPOSAL = re.compile(
    r"P(?P<id>[^'\[(,]+?)(?: '(?P<title>.*?)')?(?: \[(?P<tags>[^\]]*)\])?"
    r"(?: \((?P<authors>[^()]*)\))?"
)
_RULE = re.compile(r"R(?P<rule>\d+)")
_ACT = re.compile(r"(?P<kind>cleaning|refiling)(?: \((?P<authors>[^()]*)\))?")
_DECREE = re.compile(r"decree given by (?P<authors>.+)")
_RATIFICATION = re.compile(r"(?P<document>\S+) (?:(?P<ddate>\d{4}-\d{2}-\d{2}) )?ratification")


def _int_or_none(text: str | None) -> int | None:
    return None if text is None else int(text)


def _names(text: str | None) -> list[str]:
    return [] if not text else text.split(", ")


def _reenact_detail(m: re.Match[str]) -> dict:
    detail: dict[str, Any] = {"amended": m["amended"] is not None}
    if m["power"] is not None:
        detail["power"] = m["power"]
    return detail


def _retitle_detail(m: re.Match[str]) -> dict:
    detail: dict[str, Any] = {}
    if m["old"] is not None:
        detail["from"] = m["old"]
    if m["new"] is not None:
        detail["to"] = m["new"]
    return detail


def unparsed(line: str) -> HistoryEntry:
    """The verbatim fallback for a line the parser cannot structure."""
    return {"change": "unparsed", "raw": line}


def parse_cause(text: str) -> dict[str, Any] | None:
    """Structure what follows "by"; None if the wording is unknown."""
    if m := _RULE.fullmatch(text):
        return {"kind": "rule", "rule": m["rule"], "authors": []}
    if m := _ACT.fullmatch(text):
        return {"kind": m["kind"], "authors": _names(m["authors"])}
    if m := _DECREE.fullmatch(text):
        return {"kind": "decree", "authors": _names(m["authors"])}
    if m := _RATIFICATION.fullmatch(text):
        return {
            "kind": "ratification",
            "document": m["document"],
            "document_date": m["ddate"],
            "authors": [],
        }
    if m := _PROPOSAL.fullmatch(text):
        return {
            "kind": "proposal",
            "proposal": m["id"],
            "title": m["title"],
            "tags": _names(m["tags"]),
            "authors": _names(m["authors"]),
        }
    return None


def _parse_dates(m: re.Match[str]) -> tuple[str | None, bool, str | None] | None:
    """(date, circa, until) from a date suffix; None if a printed date is not a real day."""
    if m["exact"]:
        day = parse_date(m["exact"])
        return None if day is None else (day, False, None)
    if m["around"]:
        day = parse_date(m["around"])
        return None if day is None else (day, True, None)
    start, end = parse_date(m["start"]), parse_date(m["end"])
    return None if start is None or end is None else (start, True, end)


def parse_history_line(line: str) -> HistoryEntry:
    """Structure one History entry; `line` may be wrapped over several physical lines."""
    flat = unwrap(line.split("\n"), CONTINUATION)
    entry: HistoryEntry = {
        "change": "",
        "revision": None,
        "cause": None,
        "date": None,
        "date_circa": False,
        "date_until": None,
        "detail": {},
        "raw": line,
    }
    if m := _INITIAL.fullmatch(flat):
        entry.update(
            change="initial", detail={"mutability": m["mutability"], "number": m["number"]}
        )
        return entry

    rest = flat
    if m := _DATE_SUFFIX.search(rest):
        dates = _parse_dates(m)
        if dates is None:
            return unparsed(line)
        entry["date"], entry["date_circa"], entry["date_until"] = dates
        rest = rest[: m.start()]

    for pattern, build in _HEADS:
        if m := pattern.match(rest):
            entry["change"], entry["revision"], entry["detail"] = build(m)
            rest = rest[m.end() :]
            break
    else:
        return unparsed(line)

    if rest:
        cause = parse_cause(rest.removeprefix(" by ")) if rest.startswith(" by ") else None
        if cause is None:
            return unparsed(line)
        entry["cause"] = cause
    return entry


# --- rendering: the only place that knows Agora's wording -------------------------------


def render_cause(cause: dict[str, Any]) -> str:
    kind = cause["kind"]
    authors = ", ".join(cause.get("authors") or [])
    if kind == "rule":
        return f"R{cause['rule']}"
    if kind == "decree":
        return f"decree given by {authors}"
    if kind == "ratification":
        when = f" {cause['document_date']}" if cause.get("document_date") else ""
        return f"{cause['document']}{when} ratification"
    if kind == "proposal":
        text = f"P{cause['proposal']}"
        if cause.get("title") is not None:
            text += f" '{cause['title']}'"
        if cause.get("tags"):
            text += f" [{', '.join(cause['tags'])}]"
    else:
        text = kind
    return f"{text} ({authors})" if authors else text


def _render_change(entry: HistoryEntry) -> str:
    change, rev, detail = entry["change"], entry.get("revision"), entry.get("detail") or {}
    numbered = "" if rev is None else f"({rev})"
    if change == "enact":
        return "Enacted"
    if change == "amend":
        return f"Null-amended{numbered}" if detail.get("null") else f"Amended{numbered}"
    if change == "infect":
        return f"Infected and amended{numbered}" if detail.get("amended") else "Infected"
    if change == "reenact":
        power = f" at Power={detail['power']}" if "power" in detail else ""
        amended = " and amended" if detail.get("amended") else ""
        return f"Re-enacted{numbered}{power}{amended}"
    if change == "repeal":
        return "Repealed"
    if change == "renumber":
        return "Renumbered"
    if change == "retitle":
        old = f" from '{detail['from']}'" if "from" in detail else ""
        new = f" to '{detail['to']}'" if "to" in detail else ""
        return f"Retitled{old}{new}"
    if change == "power":
        return f"Power changed from {detail['from']} to {detail['to']}"
    if change == "mutate":
        return f"Mutated from MI={detail['from']} to MI={detail['to']}"
    if change == "assign":
        return f"Assigned to the {detail['to']}"
    raise ValueError(f"no Agora wording for change {change!r}")


def _render_date(entry: HistoryEntry) -> str:
    if entry.get("date") is None:
        return ""
    day = render_date(entry["date"])
    if entry.get("date_until"):
        return f", between {day} and {render_date(entry['date_until'])}"
    return f", around {day}" if entry.get("date_circa") else f", {day}"


def render_history_flat(entry: HistoryEntry) -> str:
    """The entry as one unwrapped line of FLR text."""
    if entry["change"] == "unparsed":
        return unwrap(entry["raw"].split("\n"), CONTINUATION)
    if entry["change"] == "initial":
        detail = entry["detail"]
        return f"Initial {detail['mutability']} rule {detail['number']}, Agora's birth"
    cause = entry.get("cause")
    by = f" by {render_cause(cause)}" if cause else ""
    return _render_change(entry) + by + _render_date(entry)


def render_history_line(entry: HistoryEntry, *, width: int | None = WIDTH) -> str:
    """The entry as printed in the FLR, wrapped to `width` columns (None: one line)."""
    if entry["change"] == "unparsed":
        return entry["raw"]
    flat = render_history_flat(entry)
    if width is None:
        return flat
    return "\n".join(wrap(flat, indent=CONTINUATION, width=width))


# --- measuring ----------------------------------------------------------------------------


@dataclass
class HistoryCoverage:
    """How many History lines were structured, and how many of those render back exactly."""

    total: int = 0
    structured: int = 0
    unparsed: int = 0
    round_tripped: int = 0
    unparsed_lines: list[str] = field(default_factory=list)
    mismatches: list[tuple[str, str]] = field(default_factory=list)


def round_trips(line: str, entry: HistoryEntry) -> bool:
    """True if the structured fields alone (raw withheld) render back to `line`."""
    if entry["change"] == "unparsed":
        return False
    fields = {key: value for key, value in entry.items() if key != "raw"}
    return render_history_line(fields) == line


def history_coverage(lines: Iterable[str]) -> HistoryCoverage:
    """Parse every line and count structured, unparsed and byte-identical round trips."""
    coverage = HistoryCoverage()
    for line in lines:
        coverage.total += 1
        entry = parse_history_line(line)
        if entry["change"] == "unparsed":
            coverage.unparsed += 1
            coverage.unparsed_lines.append(line)
            continue
        coverage.structured += 1
        if round_trips(line, entry):
            coverage.round_tripped += 1
        else:
            coverage.mismatches.append((line, render_history_line(entry)))
    return coverage

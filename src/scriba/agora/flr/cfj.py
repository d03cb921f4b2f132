"""CFJ annotations under a rule: parse one FLR annotation into a plain dict and render it back.

    {"kind": "cfj",
     "cfjs": [{"id": "825", "called": "1995-11-07", "called_circa": False, "called_until": None}],
     "text": "Players must obey the Rules even if no Rule says so.",
     "raw": "CFJ 825 (called 07 Nov 1995): Players must obey ...\\n    Rule says so."}

A case id may be a range ("1911-1914"). Annotations the parser cannot read are
kept as {"kind": "unparsed", "raw": text}.
"""

from __future__ import annotations

import re
from typing import Any

from scriba.agora.flr.dates import DATE_PATTERN, parse_date, render_date
from scriba.agora.flr.wrap import WIDTH, unwrap, wrap

Annotation = dict[str, Any]

# Wrapped annotations continue with a four-space indent.
CONTINUATION = "    "

_CASE = re.compile(
    rf"CFJ (?P<id>\d+(?:-\d+)?)(?: \(called (?:around (?P<around>{DATE_PATTERN})"
    rf"|between (?P<start>{DATE_PATTERN}) and (?P<end>{DATE_PATTERN})"
    rf"|(?P<exact>{DATE_PATTERN}))\))?"
)


def _case(m: re.Match[str]) -> dict[str, Any] | None:
    """One cited case; None if a printed date is not a real day."""
    printed = m["exact"] or m["around"] or m["start"]
    called = parse_date(printed) if printed else None
    until = parse_date(m["end"]) if m["end"] else None
    if (printed and called is None) or (m["end"] and until is None):
        return None
    return {
        "id": m["id"],
        "called": called,
        "called_circa": bool(m["around"] or m["start"]),
        "called_until": until,
    }


def parse_annotation(block: str) -> Annotation:
    """Structure one annotation; `block` may be wrapped over several physical lines."""
    flat = unwrap(block.split("\n"), CONTINUATION)
    cases: list[dict[str, Any]] = []
    pos = 0
    while m := _CASE.match(flat, pos):
        case = _case(m)
        if case is None:
            break
        cases.append(case)
        pos = m.end()
        if flat.startswith(", ", pos):
            pos += 2
        elif flat.startswith(": ", pos):
            return {"kind": "cfj", "cfjs": cases, "text": flat[pos + 2 :], "raw": block}
        else:
            break
    return {"kind": "unparsed", "raw": block}


def _render_case(case: dict[str, Any]) -> str:
    if case.get("called") is None:
        return f"CFJ {case['id']}"
    day = render_date(case["called"])
    if case.get("called_until"):
        when = f"between {day} and {render_date(case['called_until'])}"
    else:
        when = f"around {day}" if case.get("called_circa") else day
    return f"CFJ {case['id']} (called {when})"


def render_annotation(annotation: Annotation, *, width: int | None = WIDTH) -> str:
    """The annotation as printed in the FLR, wrapped to `width` columns (None: one line)."""
    if annotation["kind"] == "unparsed":
        return annotation["raw"]
    flat = ", ".join(_render_case(c) for c in annotation["cfjs"]) + ": " + annotation["text"]
    if width is None:
        return flat
    return "\n".join(wrap(flat, indent=CONTINUATION, width=width))

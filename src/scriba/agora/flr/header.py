"""The header of an Agora ruleset (FLR or SLR): parse its paragraphs into fields and print them.

Parsed fields (all optional):
    online_at            the URL in "These rulesets are also online at ..."
    date                 ISO date of the ruleset (None if printed empty)
    last_ratification    free text after "Last SLR ratification:", kept verbatim
    rules_enacted        the rule count as stated (the renderer recomputes it)
    highest_rule         the highest rule id in the ruleset as stated (recomputed too)
    highest_proposal     "Highest ID'd Proposal Passed"
    highest_rule_enacted "Highest ID'd Rule Enacted"
    explains_format      True if the standard paragraph about rule headers is present
    notes                any other paragraphs, verbatim, printed after the known ones
"""

from __future__ import annotations

import re
from typing import Any

from scriba.agora.flr.dates import parse_date, render_date

TITLES = {
    "flr": ("THE FULL LOGICAL RULESET", "(PART OF THE RULEKEEPOR'S MONTHLY REPORT)"),
    "slr": ("THE SHORT LOGICAL RULESET", "(RULEKEEPOR'S WEEKLY REPORT)"),
}

FORMAT_EXPLANATION = (
    "The header of each rule is formatted as Rule NNNN/R (Power=P), where\n"
    "NNNN is the ID number of the rule, R is the revision of the rule, and P\n"
    "is the power of the rule. This header is then followed by the title of\n"
    "the rule."
)

_ONLINE = re.compile(r"These rulesets are also online at (?P<url>\S+)")
_DATE = re.compile(r"Date of this ruleset:(?: (?P<date>.+))?")
_RATIFIED = re.compile(r"Last SLR ratification: (?P<text>.+)")
_COUNT = re.compile(r"Number of rules currently enacted: (?P<n>\d+)")
_HIGHEST = re.compile(
    r"Highest ID'd rule in this ruleset: (?P<rule>\S+)\n"
    r"Highest ID'd Proposal Passed: (?P<proposal>\S+)\n"
    r"Highest ID'd Rule Enacted: (?P<enacted>\S+)"
)


def split_paragraphs(lines: list[str]) -> list[str]:
    """Blank-line separated paragraphs, each joined with newlines."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    return ["\n".join(p) for p in paragraphs if p]


def detect_kind(first_line: str) -> str | None:
    for kind, (title, _) in TITLES.items():
        if first_line == title:
            return kind
    return None


def _parse_paragraph(paragraph: str, header: dict[str, Any]) -> bool:
    """Fill header fields from one paragraph; False if the paragraph is not a known one."""
    if m := _ONLINE.fullmatch(paragraph):
        header["online_at"] = m["url"]
    elif (m := _DATE.fullmatch(paragraph)) and (m["date"] is None or parse_date(m["date"])):
        header["date"] = parse_date(m["date"]) if m["date"] else None
    elif m := _RATIFIED.fullmatch(paragraph):
        header["last_ratification"] = m["text"]
    elif m := _COUNT.fullmatch(paragraph):
        header["rules_enacted"] = int(m["n"])
    elif m := _HIGHEST.fullmatch(paragraph):
        header["highest_rule"] = m["rule"]
        header["highest_proposal"] = m["proposal"]
        header["highest_rule_enacted"] = m["enacted"]
    elif paragraph == FORMAT_EXPLANATION:
        header["explains_format"] = True
    else:
        return False
    return True


def parse_header(lines: list[str]) -> tuple[str, dict[str, Any]]:
    """(kind, fields) from the lines before the first separator."""
    paragraphs = split_paragraphs(lines)
    title_lines = paragraphs[0].split("\n") if paragraphs else [""]
    kind = detect_kind(title_lines[0])
    header: dict[str, Any] = {"notes": []}
    if kind is None or tuple(title_lines) != TITLES[kind]:
        kind = kind or "flr"
        header["notes"].append(paragraphs[0])
    for paragraph in paragraphs[1:]:
        if not _parse_paragraph(paragraph, header):
            header["notes"].append(paragraph)
    return kind, header


def render_header(
    header: dict[str, Any], kind: str, *, rule_count: int, highest_rule: str
) -> list[str]:
    """The header lines; the rule count and highest id come from the rules themselves."""
    paragraphs = ["\n".join(TITLES[kind])]
    if "online_at" in header:
        paragraphs.append(f"These rulesets are also online at {header['online_at']}")
    date = header.get("date")
    paragraphs.append(
        f"Date of this ruleset: {render_date(date, pad_day=False)}"
        if date
        else "Date of this ruleset:"
    )
    if "last_ratification" in header:
        paragraphs.append(f"Last SLR ratification: {header['last_ratification']}")
    paragraphs.append(f"Number of rules currently enacted: {rule_count}")
    paragraphs.append(
        f"Highest ID'd rule in this ruleset: {highest_rule}\n"
        f"Highest ID'd Proposal Passed: {header.get('highest_proposal', '')}\n"
        f"Highest ID'd Rule Enacted: {header.get('highest_rule_enacted', '')}"
    )
    if header.get("explains_format"):
        paragraphs.append(FORMAT_EXPLANATION)
    paragraphs.extend(header.get("notes", []))
    return "\n\n".join(paragraphs).split("\n")

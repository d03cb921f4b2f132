"""The Assessor's records: one JSON file per resolution announcement (named `*.txt`).

Each file holds the proposals it resolves (number, title, author, coauthors, text,
proposal and decision adoption index), the quorum, and per resolution every ballot
(FOR, AGAINST, PRESENT, endorsements already resolved), the voting strengths that
differ from the default (`strengths`, with the final value) and the recorded result
and strength totals.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS = ("ADOPTED", "REJECTED", "FAILED_QUORUM")
# Proposal 8606 records neither author nor title (a proposal created by its own text);
# someone must submit it in a replay: this stand-in.
UNKNOWN_AUTHOR = "(author unknown)"
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_ARCHIVE_MONTH = re.compile(r"/(\d{4})-([A-Z][a-z]+)/")


@dataclass(frozen=True)
class Proposal:
    number: int
    title: str
    author: str
    coauthors: tuple[str, ...]
    text: str
    proposal_ai: str
    decision_ai: str


@dataclass(frozen=True)
class Ballot:
    voter: str
    vote: str  # FOR, AGAINST or PRESENT


@dataclass(frozen=True)
class Resolution:
    proposal: int
    result: str
    strength_for: int
    strength_against: int
    ballots: tuple[Ballot, ...]
    strengths: dict[str, int]  # person -> final voting strength, where recorded

    @property
    def met_quorum(self) -> bool:
        return self.result != "FAILED_QUORUM"


@dataclass
class AssessorFile:
    name: str
    quorum: int
    month: str | None  # "2021-10" from the archive address, when there is one
    proposals: dict[int, Proposal]
    resolutions: list[Resolution] = field(default_factory=list)

    @property
    def first_proposal(self) -> int:
        return min(self.proposals)


def _proposal(raw: dict[str, Any]) -> Proposal:
    return Proposal(
        number=int(raw["number"]),
        title=raw.get("title") or "",
        author=raw.get("author") or UNKNOWN_AUTHOR,
        coauthors=tuple(raw.get("coauthors") or ()),
        text=raw.get("text") or "",
        proposal_ai=str(raw["proposal_ai"]),
        decision_ai=str(raw["decision_ai"]),
    )


def _resolution(raw: dict[str, Any]) -> Resolution:
    body = raw["resolution"]
    if body["result"] not in RESULTS:
        raise ValueError(f"unknown result {body['result']!r} for proposal {raw['proposal']}")
    return Resolution(
        proposal=int(raw["proposal"]),
        result=body["result"],
        strength_for=int(body["strength_for"]),
        strength_against=int(body["strength_against"]),
        ballots=tuple(Ballot(v["voter"], v["vote"]) for v in body.get("votes") or ()),
        strengths={s["person"]: int(s["final"]) for s in raw.get("strengths") or ()},
    )


def _month(metadata: dict[str, Any]) -> str | None:
    for url in metadata.get("urls") or ():
        if (m := _ARCHIVE_MONTH.search(url)) and m[2] in _MONTHS:
            return f"{m[1]}-{_MONTHS.index(m[2]) + 1:02d}"
    return None


def load_file(path: Path) -> AssessorFile:
    data = json.loads(path.read_text(encoding="utf-8"))
    proposals = {p.number: p for p in map(_proposal, data["proposals"])}
    record = AssessorFile(
        name=path.stem,
        quorum=int(data["quorum"]),
        month=_month(data.get("metadata") or {}),
        proposals=proposals,
        resolutions=[_resolution(r) for r in data["resolutions"]],
    )
    missing = [r.proposal for r in record.resolutions if r.proposal not in proposals]
    if missing:
        raise ValueError(f"{path.name}: resolutions of unknown proposals {missing}")
    return record


def _order(record: AssessorFile) -> tuple[int, str]:
    # "8188-8195" before its re-resolution "8188A-8195A".
    return record.first_proposal, record.name


def load_directory(directory: Path) -> list[AssessorFile]:
    """Every file of the directory, in the order the decisions were made."""
    records = [load_file(p) for p in sorted(directory.glob("*.txt"))]
    records.sort(key=_order)
    previous: str | None = None
    for record in records:  # a file without an archive address: its predecessor's month
        record.month = record.month or previous
        previous = record.month
    return records

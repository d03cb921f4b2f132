"""Agora's rule numbering at a past date, from the Rulekeepor's records (rules_data/).

Rule 2141 numbers a new rule after the highest ever assigned. A game replaying a batch
of 2021 starts with only the rules that have code; to give a rule it enacts the number
Agora would have, it needs the highest rule number enacted by then, which the
per-rule YAML records give (the date of each rule's first enactment).
"""

from __future__ import annotations

from pathlib import Path

from scriba.research.agora.crosscheck import load_yaml


def enactments(rules_data: Path) -> list[tuple[str, int]]:
    """(ISO date, rule number) of each rule's first enactment, where the record has one."""
    found = []
    for path in sorted((rules_data / "rules").glob("*")):
        if not path.name.isdigit():
            continue
        # BaseLoader: every scalar a string (one record has the impossible date 2023-05-32).
        record = load_yaml(path) or {}
        for entry in record.get("history") or []:
            change = entry.get("change") or {}
            if isinstance(change, dict) and change.get("type") in ("enactment", "initial"):
                date = _day(entry.get("date"))
                if date is not None:
                    found.append((date, int(path.name)))
                break
    return found


def _day(date: object) -> str | None:
    """An ISO day from a record's date: "2021-02-03", {around: ...} or {between: ...}."""
    if isinstance(date, dict):
        date = date.get("around") or date.get("between")
    if isinstance(date, str) and len(date) == 10 and date[4] == "-" and date[7] == "-":
        return date
    return None


def highest_before(enacted: list[tuple[str, int]], day: str) -> int | None:
    """The highest rule number enacted before `day` (ISO date); None if none is known."""
    numbers = [number for date, number in enacted if date < day]
    return max(numbers) if numbers else None

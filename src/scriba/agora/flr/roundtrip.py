"""The measure of an import: export the game's ruleset and compare it with the input.

Rule blocks and History lines are cut from both texts by the simple scans of
:mod:`scriba.agora.flr.measure`, not by the parser, and compared rule by rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scriba.agora.flr.measure import first_difference, history_lines, rule_blocks


@dataclass
class RoundTrip:
    rules_total: int = 0
    rules_identical: int = 0
    rules_different: list[str] = field(default_factory=list)
    history_total: int = 0
    history_identical: int = 0
    file_identical: bool = False
    first_difference: int | None = None  # 1-based line number


def compare(original: str, exported: str) -> RoundTrip:
    """How much of `original` comes back identical in `exported`."""
    result = RoundTrip(file_identical=original == exported,
                       first_difference=first_difference(original, exported))
    theirs = rule_blocks(exported)
    for rule_id, block in rule_blocks(original).items():
        result.rules_total += 1
        other = theirs.get(rule_id, "")
        if other == block:
            result.rules_identical += 1
        else:
            result.rules_different.append(rule_id)
        lines = history_lines(block)
        result.history_total += len(lines)
        result.history_identical += sum(a == b for a, b in zip(lines, history_lines(other),
                                                               strict=False))
    return result


def summary(result: RoundTrip) -> str:
    different = f" (different: {', '.join(result.rules_different)})" \
        if result.rules_different else ""
    where = "" if result.file_identical else \
        f" (first difference at line {result.first_difference})"
    return (f"rules byte-identical: {result.rules_identical}/{result.rules_total}{different}\n"
            f"History lines round-tripped: {result.history_identical}/{result.history_total}\n"
            f"whole file identical: {result.file_identical}{where}")

"""Round-trip measures: parse a published ruleset, render it again, count what comes back identical.

Renders are made from a copy of the ruleset with every `raw` field removed from
structured history entries and annotations, so nothing can be echoed back from
the input. The input is cut into rule blocks and History lines by a separate
simple scan (not by the parser) to compare against.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from scriba.agora.flr import (
    Ruleset,
    parse_flr,
    power_distribution,
    render_flr,
    render_rule,
    render_slr,
    table_of_contents,
)
from scriba.agora.flr import cfj as ann
from scriba.agora.flr import history as hist

# A rule block runs from its header line up to (not including) the next separator.
_RULE_BLOCK = re.compile(r"^Rule (\d+)/.*?(?=^-{72}$)", re.M | re.S)


@dataclass
class FlrMeasure:
    rules_total: int = 0
    rules_identical: int = 0
    rules_different: list[str] = field(default_factory=list)
    history_total: int = 0
    history_structured: int = 0
    history_unparsed: int = 0
    history_round_tripped: int = 0
    annotations_total: int = 0
    annotations_structured: int = 0
    annotations_round_tripped: int = 0
    file_identical: bool = False
    first_difference: int | None = None  # 1-based line number
    header_counts_consistent: bool = False  # stated rule count / highest id match the rules
    toc_consistent: bool = False
    power_distribution_consistent: bool = False


@dataclass
class SlrComparison:
    """A rendered SLR against a published one, rule by rule."""

    rules_total: int = 0  # rules in the published SLR
    rules_identical: int = 0
    only_in_published: list[str] = field(default_factory=list)
    only_in_rendered: list[str] = field(default_factory=list)
    newer_revision: list[str] = field(default_factory=list)  # published revision is higher
    same_revision_different: list[str] = field(default_factory=list)
    header_differences: list[str] = field(default_factory=list)  # header fields that differ
    file_identical: bool = False
    first_difference: int | None = None


def rule_blocks(text: str) -> dict[str, str]:
    """Each rule's printed block by id, cut from the text without the parser."""
    return {m.group(1): m.group(0) for m in _RULE_BLOCK.finditer(text)}


def history_lines(text: str) -> list[str]:
    """Every History entry as printed (continuation lines included), cut without the parser."""
    entries: list[str] = []
    inside = False
    for line in text.split("\n"):
        if line == "History:":
            inside = True
        elif line == "Annotations:":
            inside = False
        elif inside and line.startswith(hist.CONTINUATION) and entries:
            entries[-1] += "\n" + line
        elif inside and line:
            entries.append(line)
    return entries


def strip_raw(ruleset: Ruleset) -> Ruleset:
    """A deep copy without the `raw` text of anything that was structured."""
    stripped = copy.deepcopy(ruleset)
    for rule in stripped.rules.values():
        for item in rule["history"]:
            if item["change"] != "unparsed":
                item.pop("raw", None)
        for item in rule["annotations"]:
            if item["kind"] != "unparsed":
                item.pop("raw", None)
    return stripped


def first_difference(a: str, b: str) -> int | None:
    a_lines, b_lines = a.split("\n"), b.split("\n")
    for number, (x, y) in enumerate(zip(a_lines, b_lines, strict=False), start=1):
        if x != y:
            return number
    return None if len(a_lines) == len(b_lines) else min(len(a_lines), len(b_lines)) + 1


def _measure_annotations(ruleset: Ruleset, measure: FlrMeasure) -> None:
    for rule in ruleset.rules.values():
        for item in rule["annotations"]:
            measure.annotations_total += 1
            if item["kind"] == "unparsed":
                continue
            measure.annotations_structured += 1
            fields = {key: value for key, value in item.items() if key != "raw"}
            measure.annotations_round_tripped += ann.render_annotation(fields) == item["raw"]


def measure_flr(text: str, ruleset: Ruleset | None = None) -> FlrMeasure:
    """Parse (unless given), render and compare an FLR text."""
    ruleset = ruleset if ruleset is not None else parse_flr(text)
    stripped = strip_raw(ruleset)
    measure = FlrMeasure()

    original = rule_blocks(text)
    measure.rules_total = len(original)
    for rule_id, block in original.items():
        rule = stripped.rules.get(rule_id)
        if rule is not None and "\n".join(render_rule(rule)) + "\n" == block:
            measure.rules_identical += 1
        else:
            measure.rules_different.append(rule_id)

    coverage = hist.history_coverage(history_lines(text))
    measure.history_total = coverage.total
    measure.history_structured = coverage.structured
    measure.history_unparsed = coverage.unparsed
    measure.history_round_tripped = coverage.round_tripped
    _measure_annotations(ruleset, measure)

    rendered = render_flr(stripped)
    measure.file_identical = rendered == text
    measure.first_difference = first_difference(text, rendered)

    rules = ruleset.ordered_rules()
    highest = max((r["id"] for r in rules), key=int, default=None)
    measure.header_counts_consistent = (
        ruleset.header.get("rules_enacted") == len(rules)
        and ruleset.header.get("highest_rule") == highest
    )
    measure.toc_consistent = ruleset.toc == table_of_contents(ruleset)
    measure.power_distribution_consistent = ruleset.power_distribution == power_distribution(rules)
    return measure


def compare_slr(ruleset: Ruleset, published: str) -> SlrComparison:
    """Render `ruleset` as an SLR and compare it with a published SLR text."""
    stripped = strip_raw(ruleset)
    rendered = render_slr(stripped)
    result = SlrComparison(file_identical=rendered == published)
    result.first_difference = first_difference(published, rendered)

    published_rules = parse_flr(published)
    original = rule_blocks(published)
    result.rules_total = len(original)
    for rule_id, block in original.items():
        rule = stripped.rules.get(rule_id)
        if rule is None:
            result.only_in_published.append(rule_id)
        elif "\n".join(render_rule(rule, full=False)) + "\n" == block:
            result.rules_identical += 1
        elif (
            published_rules.rules[rule_id]["attributes"]["revision"]
            > (rule["attributes"]["revision"])
        ):
            result.newer_revision.append(rule_id)
        else:
            result.same_revision_different.append(rule_id)
    result.only_in_rendered = [r for r in stripped.rules if r not in original]

    for key in sorted(set(ruleset.header) | set(published_rules.header)):
        if ruleset.header.get(key) != published_rules.header.get(key):
            result.header_differences.append(key)
    return result

"""Agora's Full and Short Logical Rulesets: parse into kernel-format rules and print back.

Each rule becomes a dict in the kernel rule format:

    {"id": "101", "title": "The Game of Agora", "text": "...", "code": None,
     "attributes": {"power": "4", "category": "The Game of Agora", "revision": 17},
     "history": [history entries, see scriba.agora.flr.history],
     "annotations": [annotations, see scriba.agora.flr.cfj]}

The rule text is stored without its six-space indent (blank lines become empty
lines); power is kept as printed ("2.0" stays "2.0").
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from scriba.agora.flr import cfj as ann
from scriba.agora.flr import history as hist
from scriba.agora.flr.header import parse_header, render_header
from scriba.agora.flr.wrap import WIDTH, wrap

Rule = dict[str, Any]
Progress = Callable[[int, int], None]

CATEGORY_LINE = "=" * WIDTH
RULE_LINE = "-" * WIDTH
TEXT_INDENT = " " * 6
DESCRIPTION_INDENT = " " * 3
TOC_ITEM_INDENT = "   * "

_RULE_HEADER = re.compile(r"Rule (?P<id>\d+)/(?P<rev>\d+) \(Power=(?P<power>[^)]*)\)")
_TOC_ITEM = re.compile(r"   \* Rule +(?P<id>\d+): (?P<title>.*)")
_POWER_ITEM = re.compile(r"(?P<count>\d+) +with Power=(?P<power>\S+)")


class FlrFormatError(ValueError):
    """The text does not have the layout of an Agora logical ruleset."""


@dataclass
class Category:
    name: str
    description: str  # one unwrapped paragraph; "" if the category has none
    rule_ids: list[str] = field(default_factory=list)


@dataclass
class Ruleset:
    kind: str  # "flr" or "slr": which document the text was
    header: dict[str, Any]
    categories: list[Category]
    rules: dict[str, Rule]  # by id, in document order
    # As printed; the renderer recomputes both, these are kept to check them.
    toc: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    power_distribution: list[tuple[str, int]] = field(default_factory=list)

    def ordered_rules(self) -> list[Rule]:
        return [self.rules[rule_id] for c in self.categories for rule_id in c.rule_ids]


# --- parsing ------------------------------------------------------------------------------


def _group(lines: list[str], continuation: str) -> list[str]:
    """Join physical lines into entries: a line starting with `continuation` continues one."""
    entries: list[str] = []
    for line in lines:
        if entries and line.startswith(continuation):
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    return entries


def _strip_blank_edges(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start]:
        start += 1
    while end > start and not lines[end - 1]:
        end -= 1
    return lines[start:end]


def parse_rule(lines: list[str], category: str) -> Rule:
    """One rule from the lines between two rule separators."""
    m = _RULE_HEADER.fullmatch(lines[0]) if lines else None
    if m is None or len(lines) < 3 or lines[2] != "":
        raise FlrFormatError(f"not a rule header: {lines[:3]!r}")
    body = lines[3:]
    history_at = body.index("History:") if "History:" in body else None
    notes_at = body.index("Annotations:") if "Annotations:" in body else None
    text_end = history_at if history_at is not None else len(body)
    text_lines = body[:text_end]
    if text_lines and text_lines[-1] == "":
        text_lines = text_lines[:-1]  # the blank line closing the text block
    history: list[hist.HistoryEntry] = []
    annotations: list[ann.Annotation] = []
    if history_at is not None:
        stop = notes_at if notes_at is not None else len(body)
        entries = _strip_blank_edges(body[history_at + 1 : stop])
        history = [hist.parse_history_line(e) for e in _group(entries, hist.CONTINUATION)]
    if notes_at is not None:
        entries = _strip_blank_edges(body[notes_at + 1 :])
        annotations = [ann.parse_annotation(e) for e in _group(entries, ann.CONTINUATION)]
    return {
        "id": m["id"],
        "title": lines[1],
        "text": "\n".join(line.removeprefix(TEXT_INDENT) for line in text_lines),
        "code": None,
        "attributes": {"power": m["power"], "category": category, "revision": int(m["rev"])},
        "history": history,
        "annotations": annotations,
    }


def _split(lines: list[str], separator: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for line in lines:
        if line == separator:
            parts.append([])
        else:
            parts[-1].append(line)
    return parts


def _parse_preamble_sections(sections: list[list[str]], ruleset: Ruleset) -> None:
    """Table of Contents and Power Distribution, kept as printed for checking."""
    for section in sections:
        body = _strip_blank_edges(section)
        if not body:
            continue
        title, items = body[0], _strip_blank_edges(body[1:])
        if title == "Table of Contents:":
            for line in items:
                if (m := _TOC_ITEM.fullmatch(line)) and ruleset.toc:
                    ruleset.toc[-1][1].append((m["id"], m["title"]))
                else:
                    ruleset.toc.append((line, []))
        elif title == "Power Distribution:":
            for line in items:
                if m := _POWER_ITEM.fullmatch(line):
                    ruleset.power_distribution.append((m["power"], int(m["count"])))
        else:
            ruleset.header["notes"].append("\n".join(body))


def parse_flr(text: str, progress: Progress | None = None) -> Ruleset:
    """Parse an Agora FLR (or SLR) into a Ruleset; `progress(done, total)` is called per rule.

    Text without the layout of a ruleset is refused with :class:`FlrFormatError`, naming
    the line where the layout breaks."""
    lines = text.split("\n")
    if CATEGORY_LINE not in lines:
        raise FlrFormatError(f"line {len(lines)}: reached the end without a category "
                             f"separator (a line of {WIDTH} '='): not an Agora ruleset")
    first_category = lines.index(CATEGORY_LINE)
    preamble = _split(lines[:first_category], RULE_LINE)
    kind, header = parse_header(preamble[0])
    ruleset = Ruleset(kind=kind, header=header, categories=[], rules={})
    _parse_preamble_sections(preamble[1:], ruleset)

    # Split everything first so the progress callback knows the total.
    blocks: list[tuple[Category, list[list[str]]]] = []
    for block in _split(lines[first_category:], CATEGORY_LINE)[1:]:
        head, *rule_parts = _split(block, RULE_LINE)
        if not head:
            raise FlrFormatError("category separator without a category name")
        description = " ".join(line.removeprefix(DESCRIPTION_INDENT) for line in head[1:])
        parts = [p for p in rule_parts if _strip_blank_edges(p)]
        blocks.append((Category(head[0], description), parts))
    total = sum(len(parts) for _, parts in blocks)

    starts = _rule_starts(lines, first_category)
    done = 0
    for category, parts in blocks:
        ruleset.categories.append(category)
        for part in parts:
            try:
                rule = parse_rule(part, category.name)
            except FlrFormatError as error:
                line = starts[done] if done < len(starts) else first_category + 1
                raise FlrFormatError(f"line {line}: {error}") from None
            ruleset.rules[rule["id"]] = rule
            category.rule_ids.append(rule["id"])
            done += 1
            if progress is not None:
                progress(done, total)
    return ruleset


def _rule_starts(lines: list[str], first_category: int) -> list[int]:
    """The 1-based line number where each non-empty rule block after the first category
    starts, in the order parse_flr meets them."""
    starts: list[int] = []
    start: int | None = None
    in_head = True
    for index in range(first_category, len(lines) + 1):
        line = lines[index] if index < len(lines) else RULE_LINE
        if line in (CATEGORY_LINE, RULE_LINE) or index == len(lines):
            if start is not None:
                starts.append(start)
            start = None
            in_head = line == CATEGORY_LINE
            continue
        if not in_head and start is None and line.strip():
            start = index + 1
    return starts


# --- storing next to a game's rules --------------------------------------------------------
SETTINGS_KEY = "flr"  # the game's setting that keeps an imported FLR's header and categories


def ruleset_meta(ruleset: Ruleset) -> dict[str, Any]:
    """Everything but the rules, as plain JSON-able data to keep alongside a game's rules."""
    return {
        "kind": ruleset.kind,
        "header": copy.deepcopy(ruleset.header),
        "categories": [
            {"name": c.name, "description": c.description, "rule_ids": list(c.rule_ids)}
            for c in ruleset.categories
        ],
    }


def ruleset_from_parts(meta: dict[str, Any], rules: Iterable[Rule]) -> Ruleset:
    """Rebuild a renderable Ruleset from `ruleset_meta` output and a game's current rules.

    Rules keep the order recorded in `meta`; rules missing there go to the end of the
    category named in their attributes (a new category at the end if it is unknown), and
    recorded ids without a rule are dropped.
    """
    by_id = {rule["id"]: rule for rule in rules}
    categories = [
        Category(c["name"], c.get("description", ""), [i for i in c["rule_ids"] if i in by_id])
        for c in meta.get("categories", [])
    ]
    placed = {rule_id for c in categories for rule_id in c.rule_ids}
    by_name = {c.name: c for c in categories}
    for rule_id, rule in by_id.items():
        if rule_id in placed:
            continue
        name = rule.get("attributes", {}).get("category") or ""
        if name not in by_name:
            by_name[name] = Category(name, "")
            categories.append(by_name[name])
        by_name[name].rule_ids.append(rule_id)
    header = copy.deepcopy(meta.get("header", {"notes": []}))
    return Ruleset(meta.get("kind", "flr"), header, categories, by_id)


# --- rendering ----------------------------------------------------------------------------


def render_rule(rule: Rule, *, full: bool = True) -> list[str]:
    """A rule's lines, without the separators around it; `full` adds History and Annotations."""
    attributes = rule["attributes"]
    lines = [f"Rule {rule['id']}/{attributes['revision']} (Power={attributes['power']})"]
    lines += [rule["title"], ""]
    lines += [TEXT_INDENT + line for line in rule["text"].split("\n")]
    lines.append("")
    if full:
        lines += ["History:", ""]
        for entry in rule["history"]:
            lines += hist.render_history_line(entry).split("\n")
        lines += ["", "Annotations:"]
        for annotation in rule["annotations"]:
            lines += ann.render_annotation(annotation).split("\n")
        lines.append("")
    return lines


def _power_label(power: Decimal) -> str:
    """Powers are grouped by value and printed without trailing zeros ("2.0" counts as "2")."""
    return format(power.normalize(), "f")


def power_distribution(rules: list[Rule]) -> list[tuple[str, int]]:
    """(power, number of rules) in increasing order of power."""
    counts: dict[Decimal, int] = defaultdict(int)
    for rule in rules:
        counts[Decimal(rule["attributes"]["power"])] += 1
    return [(_power_label(power), counts[power]) for power in sorted(counts)]


def table_of_contents(ruleset: Ruleset) -> list[tuple[str, list[tuple[str, str]]]]:
    return [
        (c.name, [(rule_id, ruleset.rules[rule_id]["title"]) for rule_id in c.rule_ids])
        for c in ruleset.categories
    ]


def _render_preamble(ruleset: Ruleset, kind: str) -> list[str]:
    rules = ruleset.ordered_rules()
    highest = max((r["id"] for r in rules), key=int, default="")
    lines = render_header(ruleset.header, kind, rule_count=len(rules), highest_rule=highest)
    if kind == "slr":
        return lines + [""]
    lines += ["", RULE_LINE, "", "Table of Contents:", ""]
    for name, items in table_of_contents(ruleset):
        lines.append(name)
        lines += [f"{TOC_ITEM_INDENT}Rule {rule_id:>4}: {title}" for rule_id, title in items]
    lines += ["", "", RULE_LINE, "", "Power Distribution:", ""]
    distribution = power_distribution(rules)
    width = max((len(str(count)) for _, count in distribution), default=1)
    lines += [f"{count:<{width}} with Power={power}" for power, count in distribution]
    return lines + [""]


def _render(ruleset: Ruleset, kind: str) -> str:
    lines = _render_preamble(ruleset, kind)
    for category in ruleset.categories:
        lines += [CATEGORY_LINE, category.name]
        if category.description:
            lines += wrap(
                category.description, first_indent=DESCRIPTION_INDENT, indent=DESCRIPTION_INDENT
            )
        lines.append(RULE_LINE)
        for rule_id in category.rule_ids:
            lines += render_rule(ruleset.rules[rule_id], full=kind == "flr")
            lines.append(RULE_LINE)
    return "\n".join(lines) + "\n\n"


def render_flr(ruleset: Ruleset) -> str:
    """The Full Logical Ruleset text: header, contents, power statistics, rules with history."""
    return _render(ruleset, "flr")


def render_slr(ruleset: Ruleset) -> str:
    """The Short Logical Ruleset text: header and rules, without history or annotations."""
    return _render(ruleset, "slr")

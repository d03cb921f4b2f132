"""Cross-check a parsed FLR against Agora's per-rule YAML records (rules_data/).

The YAML is the Rulekeepor's source data and may be newer than the FLR; history
entries dated after the FLR are counted separately instead of as disagreements.
YAML is read with PyYAML's BaseLoader (every scalar a string): the records hold
at least one impossible date (2023-05-32) that the timestamp resolver rejects,
and strings keep powers as written ("2.0").
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from scriba.agora.flr import Ruleset
from scriba.agora.flr.history import HistoryEntry

# The YAML change type that corresponds to each structured history entry.
_YAML_TYPES = {
    "initial": "initial",
    "enact": "enactment",
    "amend": "amendment",
    "reenact": "reenactment",
    "repeal": "repeal",
    "power": "power-change",
    "retitle": "retitling",
    "mutate": "mutation",
    "renumber": "renumbering",
    "assign": "committee-assignment",
    "infect": "infection",
}


@dataclass
class CrosscheckResult:
    rules_checked: int = 0
    missing: list[str] = field(default_factory=list)  # FLR rules without a usable YAML record
    ids_agree: int = 0
    titles_agree: int = 0
    powers_agree: int = 0  # same numeric value
    powers_printed_agree: int = 0  # same digits as printed
    histories_agree: int = 0  # same change types in the same order
    entries_flr: int = 0  # History entries of the checked rules
    entries_paired: int = 0  # FLR entries aligned with a YAML entry
    entry_types_agree: int = 0
    entry_dates_agree: int = 0
    entry_causes_agree: int = 0
    entries_undated: int = 0  # paired, the YAML has a date but the FLR prints none
    entries_flr_only: int = 0
    entries_yaml_only: int = 0  # not counting YAML entries dated after the FLR
    yaml_later_entries: int = 0  # YAML entries dated after the FLR
    categories_agree: int = 0  # same name and same rules in the same order
    categories_total: int = 0
    mismatches: list[str] = field(default_factory=list)
    quirks: list[str] = field(default_factory=list)
    # Survey of every YAML record, enacted or not.
    records_total: int = 0
    records_empty: list[str] = field(default_factory=list)  # no record (e.g. commented out)
    invalid_dates: list[str] = field(default_factory=list)  # "rule: date" not on the calendar


# The C loader is the same BaseLoader, only faster; fall back when libyaml is absent.
_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def load_yaml(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)


def yaml_change_type(entry: HistoryEntry) -> str:
    """The YAML `change.type` that an entry corresponds to."""
    change, detail = entry["change"], entry.get("detail") or {}
    if change == "amend" and detail.get("null"):
        return "null-amendment"
    if change == "infect" and detail.get("amended"):
        return "infection-amendment"
    return _YAML_TYPES.get(change, change)


def _cause_key(cause: dict[str, Any] | None) -> tuple[str, str] | None:
    if cause is None:
        return None
    kind = cause["kind"]
    if kind == "proposal":
        return kind, cause["proposal"]
    if kind == "rule":
        return kind, cause["rule"]
    if kind == "ratification":
        when = f" {cause['document_date']}" if cause.get("document_date") else ""
        return kind, cause["document"] + when
    return kind, ", ".join(cause.get("authors") or [])


def _yaml_agent_key(agent: Any) -> tuple[str, str] | None:
    if not isinstance(agent, dict) or not agent:
        return None
    kind, value = next(iter(agent.items()))
    if isinstance(value, dict):
        value = value.get("by") or value.get("document") or ""
    return kind, str(value)


def _same_power(a: str, b: str) -> bool:
    try:
        return Decimal(a) == Decimal(b)
    except InvalidOperation:
        return False


def yaml_date(value: Any) -> tuple[str | None, bool, str | None]:
    """(date, circa, until) from a YAML date: "D", {around: D}, {between: D, and: D}, "unknown"."""
    if isinstance(value, dict):
        if "around" in value:
            return str(value["around"]), True, None
        return str(value.get("between")), True, str(value.get("and"))
    if value in (None, "", "unknown"):
        return None, False, None
    return str(value), False, None


def _entry_key(entry: HistoryEntry) -> tuple[Any, ...]:
    dates = (entry.get("date"), entry.get("date_circa", False), entry.get("date_until"))
    return yaml_change_type(entry), dates, _cause_key(entry.get("cause"))


def _record_key(record: dict[str, Any]) -> tuple[Any, ...]:
    change = record.get("change") or {}
    agent = _yaml_agent_key(record.get("agent"))
    return str(change.get("type")), yaml_date(record.get("date")), agent


def _compare_pair(
    rule_id: str, index: int, flr: tuple, yml: tuple, result: CrosscheckResult
) -> None:
    """Count which of change type, date and cause agree for one aligned pair of entries."""
    result.entries_paired += 1
    (flr_type, flr_date, flr_cause), (yml_type, yml_date, yml_cause) = flr, yml
    where = f"rule {rule_id} entry {index + 1}"
    if flr_type == yml_type:
        result.entry_types_agree += 1
    else:
        result.mismatches.append(f"{where}: change type {flr_type} != YAML {yml_type}")
    if flr_date[0] is None and yml_date[0] is not None:
        result.entries_undated += 1  # the FLR prints no date here (e.g. the initial rules)
    elif flr_date == yml_date:
        result.entry_dates_agree += 1
    else:
        result.mismatches.append(f"{where}: date {flr_date} != YAML {yml_date}")
    if flr_cause == yml_cause:
        result.entry_causes_agree += 1
    else:
        result.mismatches.append(f"{where}: cause {flr_cause} != YAML {yml_cause}")


def _check_history(
    rule_id: str,
    flr: list[HistoryEntry],
    records: list[dict],
    cutoff: str | None,
    result: CrosscheckResult,
) -> None:
    def is_current(record: dict) -> bool:
        start = yaml_date(record.get("date"))[0]
        return cutoff is None or start is None or start <= cutoff

    current = [r for r in records if is_current(r)]
    result.yaml_later_entries += len(records) - len(current)
    result.entries_flr += len(flr)
    for index, record in enumerate(current):
        if "proposal" in record and "agent" not in record:
            result.quirks.append(
                f"rule {rule_id} YAML entry {index + 1}: `proposal: {record['proposal']}` "
                "outside `agent`"
            )
    flr_keys = [_entry_key(e) for e in flr]
    yaml_keys = [_record_key(r) for r in current]
    if [k[0] for k in flr_keys] == [k[0] for k in yaml_keys]:
        result.histories_agree += 1
    # Align on whole entries so that one missing entry does not shift every later pair.
    matcher = difflib.SequenceMatcher(None, flr_keys, yaml_keys, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            for offset in range(i2 - i1):
                _compare_pair(
                    rule_id, i1 + offset, flr_keys[i1 + offset], yaml_keys[j1 + offset], result
                )
            continue
        for i in range(i1, i2):
            result.entries_flr_only += 1
            result.mismatches.append(f"rule {rule_id} entry {i + 1}: only in FLR: {flr_keys[i]}")
        for j in range(j1, j2):
            result.entries_yaml_only += 1
            result.mismatches.append(
                f"rule {rule_id} YAML entry {j + 1}: only in YAML: {yaml_keys[j]}"
            )


def _check_rule(
    rule: dict[str, Any], record: Any, cutoff: str | None, result: CrosscheckResult
) -> None:
    rule_id = rule["id"]
    result.ids_agree += str(record.get("id")) == rule_id
    if record.get("name") == rule["title"]:
        result.titles_agree += 1
    else:
        result.mismatches.append(
            f"rule {rule_id}: title {rule['title']!r} != {record.get('name')!r}"
        )
    power, yaml_power = rule["attributes"]["power"], str(record.get("power"))
    result.powers_printed_agree += power == yaml_power
    if _same_power(power, yaml_power):
        result.powers_agree += 1
    else:
        result.mismatches.append(f"rule {rule_id}: power {power} != YAML {yaml_power}")
    _check_history(rule_id, rule["history"], record.get("history") or [], cutoff, result)


def _check_categories(ruleset: Ruleset, index: Any, result: CrosscheckResult) -> None:
    yaml_categories = [(str(c.get("name")), [str(r) for r in c.get("rules") or []]) for c in index]
    flr_categories = [(c.name, c.rule_ids) for c in ruleset.categories]
    result.categories_total = len(flr_categories)
    for (name, ids), (yaml_name, yaml_ids) in zip(flr_categories, yaml_categories, strict=False):
        if name == yaml_name and ids == yaml_ids:
            result.categories_agree += 1
        else:
            result.mismatches.append(
                f"category {name!r}: rules {ids} != YAML {yaml_name!r} {yaml_ids}"
            )
    if len(flr_categories) != len(yaml_categories):
        result.mismatches.append(
            f"{len(flr_categories)} categories in the FLR, {len(yaml_categories)} in the YAML index"
        )


def _valid_iso(text: str | None) -> bool:
    try:
        dt.date.fromisoformat(text or "")
    except ValueError:
        return False
    return True


def survey_records(rules_data: Path, result: CrosscheckResult) -> None:
    """Count all YAML records and note empty ones and dates that are not real days."""
    for path in sorted((rules_data / "rules").iterdir(), key=lambda p: p.name):
        result.records_total += 1
        record = load_yaml(path)
        if not isinstance(record, dict):
            result.records_empty.append(path.name)
            continue
        for entry in record.get("history") or []:
            start, _, until = yaml_date(entry.get("date"))
            for day in (start, until):
                if day is not None and not _valid_iso(day):
                    result.invalid_dates.append(f"{path.name}: {day}")


def crosscheck(ruleset: Ruleset, rules_data: Path) -> CrosscheckResult:
    """Compare every FLR rule with rules_data/rules/<id> and the categories with config/index."""
    result = CrosscheckResult()
    cutoff = ruleset.header.get("date")
    for rule in ruleset.ordered_rules():
        result.rules_checked += 1
        path = rules_data / "rules" / rule["id"]
        try:
            record = load_yaml(path) if path.exists() else None
        except yaml.YAMLError as error:
            result.missing.append(f"{rule['id']}: unreadable YAML ({error.__class__.__name__})")
            continue
        if not isinstance(record, dict):
            state = "no file" if not path.exists() else "file has no record (commented out)"
            result.missing.append(f"{rule['id']}: {state}")
            continue
        _check_rule(rule, record, cutoff, result)
    index_path = rules_data / "config" / "index"
    if index_path.exists():
        _check_categories(ruleset, load_yaml(index_path) or [], result)
    survey_records(rules_data, result)
    return result

"""The rules' own history, read from the log: every change of every rule with the rule as
it stood after it, a rule's revisions followed back through its renumberings, what number
a rule has now, and the rules changed between two states."""

from __future__ import annotations

import copy
from typing import Any

from scriba.kernel import changes as rule_changes
from scriba.kernel.events import Event
from scriba.kernel.state import natural_key


def rule_records(events: list[Event]) -> list[dict[str, Any]]:
    """One record per change of any rule, with the rule as it stood after that change."""
    rules: dict[str, dict[str, Any]] = {}
    records: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "game_created":
            for rule in event["payload"].get("rules") or []:
                rid = str(rule["id"])
                rules[rid] = {"id": rid, "title": rule.get("title", ""),
                              "text": rule.get("text", ""), "code": rule.get("code") or None,
                              "attributes": dict(rule.get("attributes") or {}),
                              "history": list(rule.get("history") or [{"change": "initial"}]),
                              "in_force": rule.get("in_force", True)}
                records.append(_record(rules[rid], event, "initial", {"kind": "initial"}))
        elif event["type"] == "rule_changed":
            change = event["payload"]["change"]
            cause = event["payload"].get("cause") or {}
            try:
                rid = rule_changes.apply_change(rules, copy.deepcopy(change), cause,
                                                event["time"])
            except Exception:  # noqa: BLE001 - the fold accepted it; never fail a read
                continue
            record = _record(rules[rid], event, change["type"], cause)
            if change["type"] == "renumber":
                record["from"] = str(change["rule"])
            records.append(record)
    return records


def _record(rule: dict[str, Any], event: Event, change: str,
            cause: dict[str, Any]) -> dict[str, Any]:
    return {"id": rule["id"], "revision": rule_changes.revision(rule), "seq": event["seq"],
            "time": event["time"], "change": change,
            "cause": {"kind": cause.get("kind"), "proposal": cause.get("proposal"),
                      "label": cause.get("label"), "author": cause.get("author"),
                      "rule": cause.get("rule")},
            "title": rule["title"], "text": rule["text"], "code": rule["code"],
            "attributes": dict(rule["attributes"]), "in_force": rule["in_force"]}


def renumberings(events: list[Event]) -> list[tuple[int, str, str]]:
    """Every renumbering in the log: ``(seq, from, to)``, in order."""
    out = []
    for event in events:
        change = (event.get("payload") or {}).get("change") if event["type"] == "rule_changed" \
            else None
        if isinstance(change, dict) and change.get("type") == "renumber":
            out.append((event["seq"], str(change.get("rule")), str(change.get("to"))))
    return out


def number_now(renumbered: list[tuple[int, str, str]], rule_id: str, seq: int) -> str:
    """The number the rule that was ``rule_id`` at event ``seq`` has now (renumbered at
    that event or after, as often as it was)."""
    current = str(rule_id)
    for at, old, new in renumbered:
        if at >= seq and old == current:
            current = new
    return current


def rule_revisions(events: list[Event], rule_id: str) -> list[dict[str, Any]]:
    """Each change of the rule now numbered ``rule_id``, oldest first, following it
    back through its renumberings (a renumbering's record has ``from``: the old number).
    ``revision`` counts the text's revisions from 0 (as first written); pages show it
    from 1."""
    current = rule_id
    lineage: list[dict[str, Any]] = []
    for record in reversed(rule_records(events)):
        if record["id"] != current:
            continue
        lineage.append(record)
        if record["change"] == "renumber":
            current = record["from"]
    lineage.reverse()
    # "revised": this change made a new revision of the text (the first one, an amendment,
    # a re-enactment); a renumbering, a new title or attribute keeps the revision it had.
    return [{**record, "revised": i == 0 or record["revision"] != lineage[i - 1]["revision"]}
            for i, record in enumerate(lineage)]


def compare_rules(before: dict[str, dict[str, Any]],
                  after: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rules enacted, repealed or changed from ``before`` to ``after`` (rule id →
    the rule as the reads show it), in natural order, with old and new text."""
    out = []
    for rule_id in sorted(set(before) | set(after), key=natural_key):
        old, new = before.get(rule_id), after.get(rule_id)
        was = bool(old and old["in_force"])
        is_ = bool(new and new["in_force"])
        if not was and not is_:
            continue
        if not was:
            change = "enacted"
        elif not is_:
            change = "repealed"
        elif any(old[k] != new[k] for k in ("title", "text", "code", "attributes")):
            change = "changed"
        else:
            continue
        out.append({
            "id": rule_id, "change": change,
            "title": (new or old or {}).get("title", ""),
            "old_title": old["title"] if was and old else None,
            "old_text": old["text"] if was and old else None,
            "new_text": new["text"] if is_ and new else None,
            "old_code": old["code"] if was and old else None,
            "new_code": new["code"] if is_ and new else None,
            "old_attributes": old["attributes"] if was and old else None,
            "new_attributes": new["attributes"] if is_ and new else None,
            "old_revision": old["revision"] if was and old else None,
            "new_revision": new["revision"] if is_ and new else None,
        })
    return out

"""Rule changes: the ways a proposal (or an officer's decree) can change the ruleset.

A change is a plain dict ``{"type": TYPE, "rule": ID, ...}``. Scenario files and
interfaces write the short form ``{TYPE: {...}}``; :func:`normalize_change` accepts both.
Each applied change is appended to the rule's history with its cause and date; a rule's
revision is derived from that history, never stored by hand.
"""

from __future__ import annotations

import re
from typing import Any

from scriba.kernel.errors import Refused

CHANGE_TYPES = (
    "enact",
    "repeal",
    "amend",
    "amend_paragraph",
    "transmute",
    "set_attribute",
    "retitle",
    "renumber",
    "reenact",
)
# The change types that make a new revision of the rule's text.
REVISING = {"amend", "amend_paragraph", "reenact"}
_NEEDS_EXISTING = set(CHANGE_TYPES) - {"enact", "reenact"}


def normalize_change(raw: Any) -> dict[str, Any]:
    """Return the change as ``{"type": ..., ...}`` or refuse with a clear reason."""
    if not isinstance(raw, dict):
        raise Refused("change_malformed", change=repr(raw))
    if "type" in raw:
        change = dict(raw)
    elif len(raw) == 1:
        (kind, body), = raw.items()
        if not isinstance(body, dict):
            raise Refused("change_malformed", change=repr(raw))
        change = {"type": kind, **body}
    else:
        raise Refused("change_malformed", change=repr(raw))
    if change["type"] not in CHANGE_TYPES:
        raise Refused("change_unknown_type", type=change["type"], known=", ".join(CHANGE_TYPES))
    if "rule" in change and change["rule"] is not None:
        change["rule"] = str(change["rule"])
    if change["type"] in _NEEDS_EXISTING and not change.get("rule"):
        raise Refused("change_needs_rule", type=change["type"])
    if change["type"] == "enact" and not (change.get("text") or change.get("code")):
        raise Refused("change_enact_empty")
    for key in ("text", "title", "code"):
        if change.get(key) is not None and not isinstance(change[key], str):
            raise Refused("change_malformed", change=repr(raw))
    if change["type"] == "amend_paragraph" and "paragraph" not in change:
        raise Refused("change_needs_paragraph")
    if change["type"] == "amend_paragraph" and change.get("add") and not change.get("text"):
        raise Refused("change_malformed", change=repr(raw))
    if change["type"] == "renumber" and not change.get("to"):
        raise Refused("change_needs_target")
    return change


def check_change_applies(rules: dict[str, dict[str, Any]], change: dict[str, Any]) -> None:
    """Refuse a change that names a rule that is not there (or is, for enact/reenact)."""
    kind = change["type"]
    rule = rules.get(change.get("rule") or "")
    if kind in _NEEDS_EXISTING and (rule is None or not rule["in_force"]):
        raise Refused("change_rule_missing", rule=change["rule"], type=kind)
    if kind == "reenact" and (rule is None or rule["in_force"]):
        raise Refused("change_reenact_in_force", rule=change.get("rule"))
    if kind == "enact" and change.get("rule") and rule is not None and rule["in_force"]:
        raise Refused("change_rule_exists", rule=change["rule"])
    if kind == "renumber":
        target = rules.get(str(change["to"]))
        if target is not None and target["in_force"]:
            raise Refused("change_rule_exists", rule=change["to"])
    if kind == "amend_paragraph" and change.get("text") is not None and not change.get("add"):
        assert rule is not None
        paragraph_index(rule["text"], change["paragraph"])
    if kind == "amend_paragraph" and change.get("text") is None:
        assert rule is not None
        paragraph_index(rule["text"], change["paragraph"])


def codes_in(change: dict[str, Any]) -> list[str]:
    code = change.get("code")
    return [code] if isinstance(code, str) and code.strip() else []


# --- paragraphs (commi) -------------------------------------------------------------

def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()] if text else []


def paragraph_label(paragraph: str) -> str | None:
    """The label a paragraph starts with: "a)", "(b)", "c." or "(1)" → "a", "b", "c", "1"."""
    match = re.match(r"\s*\(?([a-zA-Z]|\d{1,2})[).]\s", paragraph)
    return match.group(1).lower() if match else None


def paragraph_index(text: str, ref: Any) -> int:
    """Index of the paragraph named by a 1-based number or by its label."""
    parts = paragraphs(text)
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit() and len(parts) >= int(ref)
                                and not any(paragraph_label(p) == ref for p in parts)):
        index = int(ref) - 1
        if 0 <= index < len(parts):
            return index
    else:
        for index, part in enumerate(parts):
            if paragraph_label(part) == str(ref).strip("()").lower():
                return index
    raise Refused("change_paragraph_missing", paragraph=str(ref))


def _amend_paragraph(text: str, change: dict[str, Any]) -> str:
    parts = paragraphs(text)
    new_text = change.get("text")
    if change.get("add"):
        after = change.get("after", change["paragraph"])
        position = len(parts) if after in (None, "end") else paragraph_index(text, after) + 1
        parts.insert(position, new_text)
    elif new_text is None:
        del parts[paragraph_index(text, change["paragraph"])]
    else:
        parts[paragraph_index(text, change["paragraph"])] = new_text
    return "\n\n".join(parts)


# --- applying -----------------------------------------------------------------------

def apply_change(
    rules: dict[str, dict[str, Any]],
    change: dict[str, Any],
    cause: dict[str, Any],
    at: str,
) -> str:
    """Apply one change to ``rules`` in place and record it in the history.

    Returns the id of the rule changed (a renumbered rule's new id).
    """
    check_change_applies(rules, change)
    kind = change["type"]
    entry: dict[str, Any] = {"change": kind, "date": at[:10], "at": at, "cause": dict(cause)}
    rule_id = str(change.get("rule") or "")
    if kind == "enact":
        previous = rules.get(rule_id)
        rules[rule_id] = {
            "id": rule_id,
            "title": change.get("title") or "",
            "text": change.get("text") or "",
            "code": change.get("code") or None,
            "attributes": dict(change.get("attributes") or {}),
            "history": (previous or {}).get("history", []) + [entry],
            "in_force": True,
        }
        return rule_id
    rule = rules[rule_id]
    if kind == "repeal":
        rule["in_force"] = False
    elif kind in ("amend", "reenact"):
        if kind == "reenact":
            rule["in_force"] = True
        for key in ("text", "title"):
            if change.get(key) is not None:
                rule[key] = change[key]
        if "code" in change and (kind == "amend" or change["code"] is not None):
            rule["code"] = change["code"] or None
        entry["detail"] = {k: True for k in ("text", "code", "title") if k in change}
    elif kind == "amend_paragraph":
        rule["text"] = _amend_paragraph(rule["text"], change)
        entry["detail"] = {"paragraph": change["paragraph"],
                           "operation": "add" if change.get("add") else
                           ("delete" if change.get("text") is None else "replace")}
        if "code" in change:  # the comma's mechanics change with it, in the same amendment
            rule["code"] = change["code"] or None
            entry["detail"]["code"] = True
    elif kind in ("transmute", "set_attribute"):
        updates = _attribute_updates(change)
        entry["detail"] = {"from": {k: rule["attributes"].get(k) for k in updates}, "to": updates}
        rule["attributes"].update(updates)
    elif kind == "retitle":
        entry["detail"] = {"from": rule["title"], "to": change.get("title", "")}
        rule["title"] = change.get("title", "")
    elif kind == "renumber":
        new_id = str(change["to"])
        entry["detail"] = {"from": rule_id, "to": new_id}
        del rules[rule_id]
        rule["id"] = new_id
        rules[new_id] = rule
        rule_id = new_id
    rule["history"].append(entry)
    return rule_id


def _attribute_updates(change: dict[str, Any]) -> dict[str, Any]:
    if change["type"] == "set_attribute":
        return {str(change["name"]): change.get("value")}
    return {k: v for k, v in change.items() if k not in ("type", "rule")}


def revision(rule: dict[str, Any]) -> int:
    return sum(1 for entry in rule["history"] if entry["change"] in REVISING)

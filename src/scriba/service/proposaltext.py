"""A proposal told in full, as the seeds' officers sent it to every player before the
vote: its number, title and author, what the rules say about it (the proposal data its
ruleset declares worth telling), its text, and each change — a new rule's text, an
amendment's new text with a unified diff against the rule in force, a repeal naming the
rule — with the code of a change as an attachment (``rule-<n>.star``, plain text).

The sentences are English here, in the reader's language from the ``mail`` catalog.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from scriba.service.letters import mail_text
from scriba.service.words import Words, change_phrase

# Quotation marks as each language writes them (a title in a subject or a heading).
QUOTES = {"it": ("\u00ab", "\u00bb"), "de": ("\u201e", "\u201c"), "en": ("\u201c", "\u201d")}


def quoted(text: str, language: str) -> str:
    left, right = QUOTES.get(language, QUOTES["en"])
    return f"{left}{text}{right}"


def proposal_heading(number: Any, title: str | None, language: str) -> str:
    """``Proposta 3 «Cortesia»``: how a letter's subject or heading names a proposal."""
    head = mail_text("Proposal {number}", language).format(number=number)
    return f"{head} {quoted(title, language)}" if title else head


def _attachment_name(change: dict[str, Any], number: Any, index: int) -> str:
    """``rule-<n>.star``: the rule the code is for, or for a rule not numbered yet the
    proposal and the change's place in it; only letters, digits, dots and dashes."""
    rule = change.get("rule")
    name = f"rule-{rule}.star" if rule not in (None, "") else f"rule-p{number}-{index}.star"
    return re.sub(r"[^A-Za-z0-9.\-]", "-", name)[:80]


def _diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name,
                                     lineterm=""))


def proposal_in_full(proposal: dict[str, Any], rules: dict[str, Any], words: Words,
                     replaced: dict[str, Any] | None = None
                     ) -> tuple[str, list[dict[str, str]]]:
    """The proposal as a block of text for a letter, and its code as attachments
    (``{"filename", "content"}``). ``rules``: the rules in force (id → rule), for the
    diffs and the titles of the rules a change names; ``replaced``: the proposal this
    one replaces (a revision), whose text it is compared with."""
    language = words.language
    number = proposal.get("number")
    lines = [proposal_heading(number, proposal.get("title"), language) + " "
             + mail_text("by {author}", language).format(author=proposal.get("author"))]
    lines += words.data_told(proposal.get("data") or {})
    changes = [c for c in proposal.get("changes") or [] if isinstance(c, dict)]
    text = str(proposal.get("text") or "").strip()
    if text and not (len(changes) == 1 and str(changes[0].get("text") or "").strip() == text):
        lines += ["", text]
    attachments: list[dict[str, str]] = []
    for index, change in enumerate(changes, start=1):
        lines += [""] + _change_lines(change, rules, words, number)
        code = change.get("code")
        if isinstance(code, str) and code.strip():
            name = _attachment_name(change, number, index)
            attachments.append({"filename": name, "content": code})
            lines.append(mail_text("Its code is attached: {file}.", language).format(file=name))
    if replaced is not None:
        lines += _revision_lines(replaced, proposal, language)
    return "\n".join(lines), attachments


def _change_lines(change: dict[str, Any], rules: dict[str, Any], words: Words,
                  number: Any) -> list[str]:
    language = words.language
    kind = change.get("type")
    rule_id = str(change.get("rule") or "")
    rule = rules.get(rule_id) if rule_id else None
    phrase = change_phrase(change, language)
    if rule is not None and rule.get("title") and kind != "enact":
        phrase += f" ({quoted(str(rule['title']), language)})"
    text = change.get("text")
    if not isinstance(text, str) or not text.strip():
        return [phrase[:1].upper() + phrase[1:] + "."]
    lines = [phrase[:1].upper() + phrase[1:] + ":", text.strip()]
    if kind == "amend" and rule is not None and isinstance(rule.get("text"), str):
        diff = _diff(rule["text"], text.strip(),
                     mail_text("rule {rule} in force", language).format(rule=rule_id),
                     mail_text("proposal {number}", language).format(number=number))
        if diff:
            lines += ["", mail_text("What changes against the rule in force:", language)]
            lines += diff
    return lines


def _revision_lines(old: dict[str, Any], new: dict[str, Any], language: str) -> list[str]:
    """A revised proposal: what changed against the one it replaces."""
    def whole(p: dict[str, Any]) -> str:
        parts = [str(p.get("title") or ""), str(p.get("text") or "")]
        parts += [str(c.get("text") or "") for c in p.get("changes") or []
                  if isinstance(c, dict)]
        return "\n".join(part for part in parts if part)
    diff = _diff(whole(old), whole(new),
                 mail_text("proposal {number}", language).format(number=old.get("number")),
                 mail_text("proposal {number}", language).format(number=new.get("number")))
    head = mail_text("It replaces proposal {number}; what changed:", language).format(
        number=old.get("number"))
    return ["", head, *diff] if diff else []

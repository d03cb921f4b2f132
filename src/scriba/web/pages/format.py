"""Turning data into page parts: code highlighted, diffs as rows, values as short text.

Everything here returns either plain data (escaped later by Jinja2) or Markup built only
from escaped pieces: Pygments escapes the code it colours.
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml
from jinja2 import Environment, pass_context
from jinja2.runtime import Context
from markupsafe import Markup
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from scriba.service.words import show_value

_FORMATTER = HtmlFormatter(cssclass="code", wrapcode=True)
_LEXER = PythonLexer()  # Starlark is a dialect of Python: the same colours fit

# The vocabulary of outcomes the service uses; anything else is shown as it is.
KNOWN_STATUSES = ("open", "adopted", "rejected", "failed_quorum", "withdrawn", "failed",
                  "deferred", "vetoed", "expired", "pending", "voting")


def highlight(code: str | None) -> Markup:
    if not code:
        return Markup("")
    return Markup(pygments_highlight(code, _LEXER, _FORMATTER))


def highlight_css() -> str:
    return _FORMATTER.get_style_defs(".code")


def diff_rows(old: str | None, new: str | None, context: int = 3) -> list[dict[str, Any]]:
    """Line diff as rows ``{kind: same|del|ins|gap, old, new, text}``; unchanged runs longer
    than ``context`` lines on each side of a change collapse into one ``gap`` row."""
    before = (old or "").splitlines()
    after = (new or "").splitlines()
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for group in matcher.get_grouped_opcodes(context) if before != after else []:
        if rows:
            rows.append({"kind": "gap", "old": None, "new": None, "text": ""})
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [{"kind": "same", "old": i + 1, "new": j + 1, "text": before[i]}
                         for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
                continue
            rows += [{"kind": "del", "old": i + 1, "new": None, "text": before[i]}
                     for i in range(i1, i2)]
            rows += [{"kind": "ins", "old": None, "new": j + 1, "text": after[j]}
                     for j in range(j1, j2)]
    return rows


def short(value: Any, limit: int = 120, language: str = "en") -> str:
    """A value of the game's state in one line, as a reader writes it (never JSON)."""
    text = value if isinstance(value, str) else show_value(value, language)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_yaml(value: Any) -> str:
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False, width=90).strip()


def change_kind(change: Any) -> tuple[str, dict[str, Any]]:
    """``{type: enact, ...}`` (as stored) or ``{enact: {...}}`` (as written) →
    ``("enact", {...})``; anything else → ``("?", {})``."""
    if isinstance(change, dict) and isinstance(change.get("type"), str):
        return change["type"], {k: v for k, v in change.items() if k != "type"}
    if isinstance(change, dict) and len(change) == 1:
        kind, body = next(iter(change.items()))
        return str(kind), body if isinstance(body, dict) else {"value": body}
    return "?", {}


def proposal_ref(proposal: dict[str, Any]) -> str:
    """What a proposal's address uses: its label when that fits in one path segment,
    else its number (both are accepted by the proposal page)."""
    label = str(proposal.get("label") or "")
    if label and label not in (".", "..") and not any(c in label for c in "/\\?#%"):
        return label
    return str(proposal.get("number", label))


@pass_context
def _short_in_language(context: Context, value: Any, limit: int = 120) -> str:
    """``|short``: in the page's language (yes/no, the keys of a mapping)."""
    return short(value, limit, str(context.get("lang") or "en"))


def blocks(message: str) -> list[tuple[str, str]]:
    """``|blocks``: a message's sentences ("p") and its blocks indented by four spaces
    ("pre", unindented: a code line with a caret under it), in order."""
    out: list[tuple[str, str]] = []
    for line in str(message).split("\n"):
        kind, text = ("pre", line[4:]) if line.startswith("    ") else ("p", line)
        if kind == "pre" and out and out[-1][0] == "pre":
            out[-1] = ("pre", out[-1][1] + "\n" + text)
        elif text.strip() or kind == "pre":
            out.append((kind, text))
    return out


def install(env: Environment) -> None:
    env.filters["blocks"] = blocks
    env.globals["proposal_ref"] = proposal_ref
    env.filters["highlight"] = highlight
    env.filters["short"] = _short_in_language
    env.filters["as_yaml"] = as_yaml
    env.globals["diff_rows"] = diff_rows
    env.globals["change_kind"] = change_kind
    env.globals["KNOWN_STATUSES"] = KNOWN_STATUSES

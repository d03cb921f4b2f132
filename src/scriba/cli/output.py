"""Safe terminal output: player text is shown, never interpreted.

Names, titles and texts come from players. Rich would read ``[/red]`` in them as markup
(and crash on an unmatched tag), and a terminal would obey ANSI escapes; so every piece
of player text goes through :func:`safe` (one line) or :func:`safe_block` (a text with
line breaks) before it is put into a markup string. Control and format characters are
shown as ``\\x1b`` / ``\\u200b`` instead of being sent to the terminal.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from rich.markup import escape

# Titles and values longer than this are shortened in listings (the whole text is in
# `--full` output and in the JSON): a megabyte title must not make a listing crawl.
SHORT = 200


def visible(text: Any, keep: str = "") -> str:
    """``text`` with every control or format character (Cc, Cf, line/paragraph
    separators) written as an escape, except those in ``keep``."""
    text = str(text)
    if text.isprintable() and not keep:
        return text
    out = []
    for char in text:
        # A no-break space (Zs) is a space to a reader, not "\xa0"
        if char in keep or unicodedata.category(char) == "Zs" or (
                char.isprintable() and unicodedata.category(char) not in ("Cf", "Zl", "Zp")):
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
                       if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def safe(text: Any, limit: int | None = SHORT) -> str:
    """One line of player text, ready to be put into Rich markup."""
    shown = visible(text)
    if limit is not None and len(shown) > limit:
        shown = shown[:limit] + "…"
    return escape(shown)


def safe_block(text: Any) -> str:
    """A multi-line player text (a rule's text), ready for Rich markup."""
    return escape(visible(text, keep="\n\t"))


@lru_cache(maxsize=1)
def console() -> Any:
    from rich.console import Console

    return Console(highlight=False)


@lru_cache(maxsize=1)
def errors() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def say(markup: str = "", **options: Any) -> None:
    """Print a line of markup whose player text was made safe; long lines are left to
    the terminal to wrap (ids are never cut at the window's width)."""
    console().print(markup, soft_wrap=True, **options)


def fail(message: Any) -> None:
    """One clear line on standard error."""
    errors().print(f"[red]{safe(message, limit=2000)}[/red]", soft_wrap=True)


def precedent_lines(precedents: list[dict[str, Any]]) -> list[str]:
    """A line of markup per judgment interpreting a rule (service.reads.precedents):
    case, date, word, question, the revision it read and whether the rule changed since."""
    lines = []
    for item in precedents:
        word = f" {safe(item['judgment'])}" if item["judgment"] else ""
        # revisions counted from 1, as `rules` and the pages count them
        revision = "" if item["revision"] is None else f", revision {item['revision'] + 1}"
        since = ", rule changed since" if item["changed_since"] else ""
        earlier = "" if item["current"] else f" (superseded: {safe(item['superseded'])})"
        lines.append(f"precedent: case {safe(item['label'])}, {safe(item['date'] or '?')}"
                     f"{word}{earlier}{revision}{since}: {safe(item['question'])}")
    return lines

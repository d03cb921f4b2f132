"""Greedy word wrapping as Agora's ruleset generator does it (72 columns)."""

from __future__ import annotations

WIDTH = 72


def wrap(text: str, *, first_indent: str = "", indent: str = "", width: int = WIDTH) -> list[str]:
    """Pack words greedily into lines of at most `width` characters.

    Words are split on single spaces only, so runs of spaces inside the text
    survive (they appear as empty words); a break consumes exactly one space.
    """
    words = text.split(" ")
    lines: list[str] = []
    current = first_indent + words[0]
    for word in words[1:]:
        if len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = indent + word
    lines.append(current)
    return lines


def unwrap(lines: list[str], indent: str) -> str:
    """Join a wrapped block back into one line, dropping the continuation indent."""
    parts = [lines[0]]
    for line in lines[1:]:
        parts.append(line.removeprefix(indent))
    return " ".join(parts)

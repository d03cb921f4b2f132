"""What a letter's lines become (:class:`Command`, :class:`Unclear`, :class:`Preference`),
and a parameter's value as written (numbers, booleans and lists as YAML reads them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

_MAX_VALUE = 20000
_KEY_LINE = re.compile(r"^([^\W\d][\w' .-]{0,40}?)\s*:\s*(.*)$")
_INLINE_PAIR = re.compile(r"([^\W\d][\w-]{0,40})=(\"[^\"]*\"|'[^']*'|\S+)")
_REF = re.compile(r"#?[A-Za-z]{0,3}\d{1,9}")


@dataclass
class Command:
    line: int
    text: str
    action: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Unclear:
    """A line not understood: ``why`` is ``choice`` (a vote word the game does not use),
    ``values`` (more values than the action takes), ``vote`` (no proposal or no vote
    word) or ``line``; ``action`` the action it comes closest to, if any."""

    line: int
    text: str
    why: str = "line"
    action: str | None = None


@dataclass
class Preference:
    line: int
    text: str
    mode: str


Item = Command | Unclear | Preference


def _attr(info: Any, name: str, default: Any = None) -> Any:
    if isinstance(info, dict):
        return info.get(name, default)
    return getattr(info, name, default)


def _value(text: str) -> Any:
    """A parameter's value: numbers, booleans and lists as YAML reads them, else text."""
    text = text.strip()[:_MAX_VALUE]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if re.fullmatch(r"-?\d{1,12}", text):
        return int(text)
    if text[:1] in "[{":
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return text
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text

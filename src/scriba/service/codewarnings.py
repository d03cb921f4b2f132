"""Mistakes in rule code that compile but cannot be meant — a hook that builds effects and
returns nothing, a part of ``game`` that does not exist, a name ``std`` does not have —
told by the check beside the dry run, never a refusal; in the words and the shape of
:mod:`scriba.service.codeerrors`."""

from __future__ import annotations

import re

from scriba.service.codeerrors import (
    GAME_KEYS,
    _effect_names,
    _nearest,
    _say,
    _std_names,
    caret_block,
)

_DEF = re.compile(r"^def\s+(\w+)\s*\(", re.M)
_EFFECT_CALL = re.compile(r"\bstd\.(\w+)\s*\(|[\"']effect[\"']\s*:")


def warnings(code: str, language: str) -> list[str]:
    """Mistakes that compile: a hook that builds effects and returns nothing, a part of
    ``game`` that does not exist, a name ``std`` does not have."""
    out: list[str] = []
    lines = code.splitlines()
    effects = set(_effect_names())
    for match in _DEF.finditer(code):
        name = match.group(1)
        start = code.count("\n", 0, match.start())
        body = _body(lines, start)
        builds = any(m.group(1) in effects or m.group(1) is None
                     for text in body for m in _EFFECT_CALL.finditer(text))
        returns = any(re.match(r"\s*return\s+\S", text) for text in body)
        if name.startswith("on_") and builds and not returns:
            out.append(_located(language, start + 1, lines[start], ("no_return", {"name": name}),
                                (("fix_return", {}),), match.start(1) - match.start() + 1,
                                len(name)))
    std_names = set(_std_names())
    for number, text in enumerate(lines, 1):
        if text.lstrip().startswith("#"):
            continue
        for m in re.finditer(r"\bgame\s*\[\s*[\"'](\w+)[\"']\s*\]", text):
            if m.group(1) not in GAME_KEYS:
                guess = _nearest(m.group(1), GAME_KEYS)
                fixes = (("did_you_mean", {"name": f'game["{guess}"]'}),) if guess else ()
                out.append(_located(language, number, text, ("unknown_game_key",
                                                             {"key": m.group(1)}), fixes,
                                    m.start() + 1, len(m.group(0))))
        for m in re.finditer(r"\bstd\.(\w+)", text):
            if m.group(1) not in std_names:
                guess = _nearest(m.group(1), sorted(std_names))
                fixes = (("did_you_mean", {"name": f"std.{guess}"}),) if guess else ()
                out.append(_located(language, number, text, ("unknown_std",
                                                             {"name": m.group(1)}), fixes,
                                    m.start() + 1, len(m.group(0))))
    return out


def _body(lines: list[str], start: int) -> list[str]:
    """The lines of the function defined at ``start``: those indented below it."""
    body = []
    for text in lines[start + 1:]:
        if text.strip() and not text[:1].isspace():
            break
        body.append(text)
    return body


def _located(language: str, line: int, source: str, wrong: tuple[str, dict[str, object]],
             fixes: tuple[tuple[str, dict[str, object]], ...], column: int = 1,
             width: int = 1) -> str:
    return "\n".join([_say(language, "where_line", {"line": line}) + " "
                      + _say(language, *wrong), *caret_block(line, column, source, width),
                      *(_say(language, key, values) for key, values in fixes)])

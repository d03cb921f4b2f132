"""A letter's lines for the game's court, read in the ruleset's words:

- a case opened by the ruleset's action of kind "case": ``CFJ: Is a hat a rule?``,
  ``giudizio: …``, ``Klage: …`` or the action's own label — the rest of the line is the
  question (the next line, when the line ends at its words), ``key: value`` lines below it
  give the action's other parameters (``regola: 212``);
- a judgment by the action of kind "judge": ``Giudica 3 VERO perché …`` / ``judge case 3
  TRUE because …`` — the case's number, the judgment (one of the ruleset's words, or the
  meaning it has, "true"), then the reasons.
"""

from __future__ import annotations

import re
from typing import Any

from scriba.mail.vocabulary import fold

# Words between an action's label and a case's number ("judge case 3"), and before reasons.
_CASE_NOUNS = {"case", "caso", "fall", "cfj", "n", "nr", "no", "il", "den"}
_BECAUSE = ("because", "perche", "poiche", "weil", "since")
_NUMBER = re.compile(r"#?(\d{1,9})[.,:]?$")
_MAX = 20000


def _attr(info: Any, name: str) -> Any:
    return info.get(name) if isinstance(info, dict) else getattr(info, name, None)


def court_kind(name: str, grammar: Any) -> str | None:
    """``case`` or ``judge`` when the action ``name`` is the court's, else None."""
    kind = _attr(grammar.actions.get(name), "kind")
    return kind if kind in ("case", "judge") else None


def case_args(lines: list[str], i: int, rest: str, name: str, grammar: Any
              ) -> tuple[dict[str, Any], int]:
    """The arguments of a case opened on line ``i``, and the line after its block."""
    args: dict[str, Any] = {}
    question = rest.strip()
    i += 1
    if not question and i < len(lines) and lines[i].strip():
        question = lines[i].strip()
        i += 1
    if question:
        args["question"] = question[:_MAX]
    while i < len(lines) and lines[i].strip():
        keyed = grammar.key(name, lines[i])
        if keyed is None:
            break
        args[keyed[0]] = keyed[1].strip()[:_MAX]
        i += 1
    return args, i


def judge_args(lines: list[str], i: int, rest: str, name: str, grammar: Any
               ) -> tuple[dict[str, Any] | None, int]:
    """The arguments of a judgment written on line ``i`` (None: no case number or no
    judgment the ruleset knows), and the line after its block."""
    words = rest.split()
    k = 0
    while k < len(words) and fold(words[k]).strip(".:#") in _CASE_NOUNS:
        k += 1
    number = _NUMBER.match(words[k]) if k < len(words) else None
    if number is None:
        return None, i + 1
    k += 1
    judgment = _judgment(words[k] if k < len(words) else "", grammar.actions.get(name))
    if judgment is None:
        return None, i + 1
    reasons = words[k + 1:]
    while reasons and fold(reasons[0]).strip(",:;—-") in (*_BECAUSE, ""):
        reasons = reasons[1:]
    args: dict[str, Any] = {"case": int(number.group(1)), "judgment": judgment}
    if reasons:
        args["reasons"] = " ".join(reasons)[:_MAX]
    i += 1
    while i < len(lines) and lines[i].strip():
        keyed = grammar.key(name, lines[i])
        if keyed is None:
            break
        value = keyed[1].strip()[:_MAX]
        args[keyed[0]] = [r for r in re.split(r"[,\s]+", value) if r] \
            if keyed[0] == "rules" else value
        i += 1
    return args, i


def _judgment(word: str, action: Any) -> str | None:
    """The ruleset's judgment word a letter wrote: the word itself (any case), or its
    meaning ("true" for "VERO"); any word when the ruleset lists none."""
    word = word.strip(".,;:!—-")
    if not word:
        return None
    choices = {str(k): str(v) for k, v in (_attr(action, "choices") or {}).items()}
    if not choices:
        return word
    folded = fold(word)
    for name in choices:
        if fold(name) == folded:
            return name
    for name, meaning in choices.items():
        if fold(meaning) == folded:
            return name
    return None

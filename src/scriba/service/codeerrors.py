"""Errors of rule code told to its author: the line, the line shown with a caret under the
column, what is wrong and what is expected, in the author's language, and — where a common
mistake explains it — the mistake and its fix.

The compiler (starlark-rust) and the sandbox answer in English, in a developer's words
("Parse error: unexpected new line here, expected one of "->" or ":""); :func:`explain`
reads their message and its place and tells it again. The text has the shape every channel
shows: sentences, then the line with its caret as a block indented by four spaces (a page
shows it preformatted, a letter as it is), then the fix. Sentences are English here and
translated from the ``scriba`` catalog; what is quoted from the code stays as written.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from scriba.service import catalogs, contracterrors

# What the sentences say, by case; {name}s are filled from the code or the message.
SENTENCES: dict[str, str] = {
    "where": "Line {line}, column {column}:",
    "where_line": "Line {line}:",
    # what is wrong
    "python_word": "`{word}` is Python, but rule code is Starlark, which has no `{word}`.",
    "tabs": "This line is indented with a tab.",
    "missing_colon": "A colon `:` is missing at the end of the line.",
    "compare_equals": "`=` gives a name a value; it cannot be a condition.",
    "unclosed": "The line ends, but a bracket opened before is not closed "
                "(expected: {expected}).",
    "indentation": "This line is indented differently from the lines of its block.",
    "unexpected": "Starlark did not expect {found} here (expected: {expected}).",
    "set_literal": "Starlark has no sets, so `{{a, b}}` cannot be written.",
    "fstring": "Between the braces of an f-string only a plain name may go, not "
               "`{expression}`.",
    "top_level": "`{word}` cannot be used outside a function.",
    "unfinished_string": "A text in quotes is not closed.",
    "unknown_name": "There is no `{name}` here.",
    "unknown_hook_event": "`{name}` is not a function the engine calls: there is no event "
                          "`{event}` to react to.",
    "unknown_hook": "`{name}` is not a function the engine calls.",
    "unknown_std": "`std` has no `{name}`.",
    "unknown_attribute": "A {kind} has no `{name}`.",
    "unknown_game_key": "The game has no part called `{key}`.",
    "unknown_key": "The key `{key}` is not there.",
    "unknown_effect": "There is no effect `{name}`.",
    "no_reason": "The code cannot be used, and no reason was given.",
    "rule_failed": "The rule stopped itself: “{message}”.",
    "no_return": "The function `{name}` builds effects but never returns them, so they "
                 "are lost.",
    # what to do
    "did_you_mean": "Did you mean `{name}`?",
    "fix_while": "Repeat over a list or a range instead: "
                 "`for player in game[\"active_players\"]:` or `for i in range(10):`.",
    "fix_class": "Keep data in a dict such as `{{\"name\": \"Anna\", \"score\": 0}}` and write "
                 "functions that take it.",
    "fix_import": "Nothing can be imported: `std` (the helpers), `game` and the event are "
                  "already there.",
    "fix_try": "Nothing is raised to be caught: check first (`if key in d:`) or write "
               "`d.get(key, default)`.",
    "fix_is": "Compare with `==` (`x == None`) or `!=`.",
    "fix_global": "A function cannot change a name outside it: keep what must last in a "
                  "game variable (`std.set_var`) and return it as an effect.",
    "fix_other_word": "Write it with `def`, `if`, `for` and `return`, which Starlark has.",
    "fix_tabs": "Indent with spaces only: four for each level.",
    "fix_colon": "A line that opens a block (`def`, `if`, `elif`, `else`, `for`) ends "
                 "with `:`, and the block's lines below it are indented.",
    "fix_equals": "To compare, write `==`: `if x == 1:`.",
    "fix_unclosed": "Close every `(`, `[` and `{{` with its `)`, `]` or `}}`, on this line "
                    "or a line below it.",
    "fix_indentation": "Lines of one block start at the same column; a block starts only "
                       "after a line ending with `:`.",
    "fix_set": "Use a list `[a, b]` (and `if x in items:`), or a dict.",
    "fix_fstring": "Give the value a name on the line before (`who = event[\"actor\"]`, "
                   "then `f\"{{who}}\"`), or join texts with `+`.",
    "fix_top_level": "At the top of a rule's code only functions (`def`) and plain names "
                     "(`LIMIT = 3`) are written: put loops and conditions inside a function.",
    "fix_string": "End the text with the same quote it starts with, on the same line.",
    "fix_hook": "A helper function's name starts with `_` (`_{name}`); the functions the "
                "engine calls are listed in the guide for rule authors.",
    "fix_key": "Write `d.get(\"{key}\")` to allow for a missing key (it gives None).",
    "fix_return": "End it with `return` and the list of effects: `return [...]`.",
}

SENTENCES.update(contracterrors.SENTENCES)
# Python's words that Starlark reserves or lacks, and the fix each one has.
_PYTHON_WORDS = {
    "while": "fix_while", "class": "fix_class", "import": "fix_import", "from": "fix_import",
    "try": "fix_try", "except": "fix_try", "finally": "fix_try", "raise": "fix_try",
    "is": "fix_is", "global": "fix_global", "nonlocal": "fix_global",
}
# Python built-ins Starlark lacks, and what to write instead (a sentence of its own).
_MISSING_BUILTINS = {
    "set": "fix_set",
    "sum": "fix_sum",
    "isinstance": "fix_isinstance",
    "map": "fix_map",
    "filter": "fix_map",
    "print": "fix_print",
}
SENTENCES.update({
    "fix_sum": "Add in a loop: `total = 0`, then `for x in items: total += x`.",
    "fix_isinstance": "Compare `type(x)` with a name: `type(x) == \"int\"`.",
    "fix_map": "Write a list comprehension: `[f(x) for x in items if x]`.",
    "fix_print": "Rule code prints nothing: to tell the players something, return "
                 "`std.notice(\"\", \"your words\")`; to see what a rule does, press "
                 "Check and read its dry run.",
})
# The parts of ``game`` (rulecode/api.py); a misspelt one gets the nearest.
GAME_KEYS = ("now", "now_ts", "seq", "random", "settings", "vars", "players",
             "player_order", "active_players", "offices", "rules", "repealed_rules",
             "proposals", "timers", "assets", "winners", "ended", "this_rule", "game_id",
             "ruleset")

_ERROR_LINE = re.compile(r"^error: (?:Parse error: )?(.*)$", re.M)
_PLACE = re.compile(r"-->\s*\S+?:(\d+):(\d+)")
_SHOWN = 6  # tokens of an "expected one of" list shown; the place says more


@dataclass
class Told:
    """What is said: the place, what is wrong, the fix (sentence ids and their values)."""

    line: int | None = None
    column: int | None = None
    wrong: tuple[str, dict[str, object]] = ("other", {})
    fixes: tuple[tuple[str, dict[str, object]], ...] = ()
    mark_width: int = 1


def _say(language: str, key: str, values: dict[str, object]) -> str:
    if key == "other":  # a message no case explains: as the sandbox or the kernel says it
        return str(values.get("message", ""))
    template = catalogs.lookup("scriba", language, SENTENCES[key])
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        return template


def _nearest(name: str, candidates: list[str] | tuple[str, ...]) -> str | None:
    found = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _expected(text: str) -> str:
    """The compiler's "one of" list, as code: `)`, `,` (cut after a few)."""
    tokens = [f"`{t}`" for t in re.findall(r'"((?:[^"\\]|\\.)*)"', text)
              if t not in ("\\n", "DEDENT")]
    return ", ".join(tokens[:_SHOWN]) + (", …" if len(tokens) > _SHOWN else "")


def read(error: str, code: str | None = None) -> Told:
    """The compiler's or the sandbox's message, read: where, what, which fix."""
    found = _ERROR_LINE.findall(error)
    message = (found[-1] if found else error.strip().splitlines()[0] if error.strip()
               else "").strip()
    place = _PLACE.search(error)
    told = Told()
    if place:
        told.line, told.column = int(place.group(1)), int(place.group(2))
        carets = re.search(rf"^\s*{told.line} \|.*\n\s*\| *(\^+)", error, re.M)
        if carets:  # as wide as the compiler marks it
            told.mark_width = len(carets.group(1))
    source = _line(code, told.line) if code else _shown_line(error, told.line)
    return _classify(told, message, code, source)


def _classify(told: Told, message: str, code: str | None, source: str) -> Told:
    keyword = re.match(r"cannot use reserved keyword `(\w+)`", message)
    if keyword:
        word = keyword.group(1)
        told.wrong = ("python_word", {"word": word})
        told.fixes = ((_PYTHON_WORDS.get(word, "fix_other_word"), {}),)
        told.mark_width = len(word)
    elif message.startswith("tabs are not allowed"):
        if code is not None:  # the compiler points at the line before the tab
            tabbed = next((n for n, text in enumerate(code.splitlines(), 1)
                           if "\t" in text[:len(text) - len(text.lstrip())]), None)
            if tabbed is not None:
                told.line, told.column = tabbed, 1
        told.wrong, told.fixes = ("tabs", {}), (("fix_tabs", {}),)
    elif m := re.match(r"unexpected (.+?) here, expected one of (.*)$", message):
        _unexpected(told, m.group(1), m.group(2), source)
    elif m := re.match(r"Not a valid identifier: `(.*)`", message):
        told.wrong, told.fixes = ("fstring", {"expression": m.group(1)}), (("fix_fstring", {}),)
    elif m := re.match(r"`(\w+)` cannot be used outside `def`", message):
        told.wrong, told.fixes = ("top_level", {"word": m.group(1)}), (("fix_top_level", {}),)
    elif message.startswith("unfinished string literal"):
        told.wrong, told.fixes = ("unfinished_string", {}), (("fix_string", {}),)
    elif m := re.match(r"Variable `(\w+)` not found(?:, did you mean `(\w+)`\?)?", message):
        name = m.group(1)
        told.wrong = ("unknown_name", {"name": name})
        if name in _MISSING_BUILTINS:
            told.fixes = ((_MISSING_BUILTINS[name], {}),)
        elif m.group(2):
            told.fixes = (("did_you_mean", {"name": m.group(2)}),)
        told.mark_width = len(name)
    elif m := re.match(r"(\w+): there is no event type '(\w+)' to react to"
                       r"(?: \(did you mean (\w+)\?\))?", message):
        _hook(told, code, m.group(1), m.group(3), event=m.group(2))
    elif m := re.match(r"(\w+): not a hook the kernel calls \((?:did you mean (\w+)\? )?",
                       message):
        _hook(told, code, m.group(1), m.group(2))
    elif m := re.match(r"Object of type `(\w+)` has no attribute `(\w+)`"
                       r"(?:, did you mean `(\w+)`\?)?", message):
        kind, name, guess = m.groups()
        if kind == "struct" and re.search(rf"\bstd\.{re.escape(name)}\b", source or ""):
            told.wrong = ("unknown_std", {"name": name})
            guess = guess or _nearest(name, _std_names())
            guess = f"std.{guess}" if guess else None
        else:
            told.wrong = ("unknown_attribute", {"kind": kind, "name": name})
        if guess:
            told.fixes = (("did_you_mean", {"name": guess}),)
    elif m := re.match(r"Key `\"?(.*?)\"?` was not found", message):
        key = m.group(1)
        if re.search(rf"\bgame\s*\[\s*[\"']{re.escape(key)}[\"']", source or ""):
            told.wrong = ("unknown_game_key", {"key": key})
            guess = _nearest(key, GAME_KEYS)
            told.fixes = ((("did_you_mean", {"name": f'game["{guess}"]'}),) if guess else ())
        else:
            told.wrong, told.fixes = ("unknown_key", {"key": key}), (("fix_key", {"key": key}),)
    elif m := re.match(r"unknown effect '(\w+)'", message):
        told.wrong = ("unknown_effect", {"name": m.group(1)})
        guess = _nearest(m.group(1), _effect_names())
        told.fixes = ((("did_you_mean", {"name": guess}),) if guess else ())
    elif said := contracterrors.read(message):
        told.wrong, told.fixes = said
    elif m := re.match(r"fail: (.+)", message):  # the rule's own fail("…"): its words
        told.wrong = ("rule_failed", {"message": m.group(1).strip().rstrip(".")})
    else:
        message = re.sub(r"^StdError: ", "", message)
        told.wrong = ("other", {"message": message}) if message else ("no_reason", {})
    # A declaration or a hook named at the start: shown where it is defined.
    declared = re.match(r"(\w+)(?:\(\))?(?: must return| entry|:)", message)
    if declared and told.line is None and _def_line(code, declared.group(1)):
        told.line, told.column = _def_line(code, declared.group(1)), 5
        told.mark_width = len(declared.group(1))
    return told


def _unexpected(told: Told, found: str, expected: str, source: str) -> None:
    """A parse error: "unexpected <found> here, expected one of <tokens>"."""
    tokens = set(re.findall(r'"([^"]*)"', expected))
    stripped = source.strip()
    if found == "new line" and ":" in tokens and len(tokens) <= 2:
        told.wrong, told.fixes = ("missing_colon", {}), (("fix_colon", {}),)
    elif found == "symbol '='" and ":" in tokens and \
            re.match(r"(if|elif)\b", stripped):
        told.wrong, told.fixes = ("compare_equals", {}), (("fix_equals", {}),)
    elif found == "symbol ','" and tokens == {":"} and "{" in source:
        told.wrong, told.fixes = ("set_literal", {}), (("fix_set", {}),)
    elif found == "new line" and tokens & {")", "]", "}"}:
        closing = [t for t in ('","', '")"', '"]"', '"}"') if t[1:-1] in tokens]
        told.wrong = ("unclosed", {"expected": _expected(", ".join(closing))})
        told.fixes = (("fix_unclosed", {}),)
    elif "indentation" in found or found in ("dedent", "indent"):
        told.wrong, told.fixes = ("indentation", {}), (("fix_indentation", {}),)
    else:
        told.wrong = ("unexpected", {"found": found, "expected": _expected(expected)})


def _hook(told: Told, code: str | None, name: str, guess: str | None,
          event: str | None = None) -> None:
    told.wrong = ("unknown_hook_event", {"name": name, "event": event}) if event \
        else ("unknown_hook", {"name": name})
    told.fixes = (("did_you_mean", {"name": guess}),) if guess else ()
    if event is None:
        told.fixes += (("fix_hook", {"name": name}),)
    line = _def_line(code, name)
    if line is not None:
        told.line, told.column = line, 5
        told.mark_width = len(name)


def _std_names() -> list[str]:
    from scriba.rulecode.api import STD  # the contract's names, read when needed
    return sorted(STD)


def _effect_names() -> list[str]:
    from scriba.rulecode.api import EFFECTS
    return sorted(EFFECTS)


def _line(code: str | None, number: int | None) -> str:
    lines = (code or "").splitlines()
    return lines[number - 1] if number and 0 < number <= len(lines) else ""


def _shown_line(error: str, number: int | None) -> str:
    """The source line as the compiler's block quotes it ("3 |     while i < 3:")."""
    if number is None:
        return ""
    m = re.search(rf"^\s*{number} \| ?(.*)$", error, re.M)
    return m.group(1) if m else ""


def _def_line(code: str | None, name: str) -> int | None:
    for number, text in enumerate((code or "").splitlines(), 1):
        if re.match(rf"def\s+{re.escape(name)}\s*\(", text):
            return number
    return None


def caret_block(line: int, column: int, source: str, width: int = 1) -> list[str]:
    """The line and a caret under its column, indented by four spaces."""
    number = str(line)
    text = source.replace("\t", "    ")
    column = max(1, min(column, len(text) + 1))
    gutter = " " * len(number)
    return [f"    {number} | {text}".rstrip(),
            f"    {gutter} | {' ' * (column - 1)}{'^' * max(1, width)}"]


# The sandbox refuses every misspelt hook of a code at once, joined by "; ".
_HOOK_ERROR = re.compile(r"\w+: (?:there is no event type '\w+' to react to"
                         r"(?: \(did you mean \w+\?\))?|not a hook the kernel calls "
                         r"\((?:did you mean \w+\? )?)")


def explain(error: str, language: str, code: str | None = None) -> str:
    """The error told: where, what is wrong, the line with its caret, the fix; each
    misspelt hook of several on its own."""
    hooks = _HOOK_ERROR.findall(error)
    if len(hooks) > 1:
        return "\n\n".join(_explain_one(hook, language, code) for hook in hooks)
    return _explain_one(error, language, code)


def in_a_line(error: str, language: str) -> str:
    """The error told in one sentence (where, and what is wrong), for a sentence about it:
    an explanation's first line, ending as a sentence does."""
    lines = explain(error, language).strip().splitlines()
    line = lines[0].strip() if lines else ""
    return line if not line or line[-1] in ".!?…»”“\")" else line + "."


def _explain_one(error: str, language: str, code: str | None) -> str:
    told = read(error, code)
    source = _line(code, told.line) if code else _shown_line(error, told.line)
    lines = []
    wrong = _say(language, *told.wrong)
    if told.line is not None and told.column is not None:
        lines.append(_say(language, "where", {"line": told.line, "column": told.column})
                     + " " + wrong)
        if source:
            lines += caret_block(told.line, told.column, source, told.mark_width)
    else:
        lines.append(wrong)
    lines += [_say(language, key, values) for key, values in told.fixes]
    return "\n".join(lines)

"""Where a proposal's text ends in a letter: at an explicit end line (``fine``, ``ende``,
``end``, ``---``), at the next command, at the signature separator ``-- ``, or at a
sign-off ("Un saluto,", "Ciao", "Viele Grüße", "Best," and a short name line after it).
A sign-off under a proposal must never become part of a law.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scriba.mail.vocabulary import tokens

# Lines that end a proposal's text, folded ("Fine." → "fine", "ENDE" → "ende").
END_LINES = {"fine", "ende", "end", "fine proposta", "fine della proposta", "ende antrag",
             "ende des antrags", "ende vorschlag", "ende des vorschlags", "end of proposal"}
END_MARKS = {"---", "----", "***", "—", "–"}
# How letters are signed off in the three languages, folded.
SIGN_OFFS = {tuple(p.split()) for p in (
    "un saluto", "un caro saluto", "saluti", "cordiali saluti", "distinti saluti",
    "saluti cordiali", "ciao", "ciao a tutti", "a presto", "grazie", "grazie a tutti",
    "un abbraccio", "buona giornata", "buona serata", "alla prossima",
    "viele grusse", "grusse", "liebe grusse", "beste grusse", "herzliche grusse",
    "schone grusse", "freundliche grusse", "mit freundlichen grussen", "gruss", "lg",
    "vg", "mfg", "bis bald", "danke", "tschuss", "servus",
    "best", "best regards", "regards", "kind regards", "cheers", "thanks", "thank you",
    "yours", "sincerely", "all the best", "bye", "see you")}
_LONGEST = max(len(p) for p in SIGN_OFFS)
_FIRSTS = {p[0] for p in SIGN_OFFS}
NAME_WORDS = 4  # a name line under a sign-off: a few words ("Carla", "Bruno R.")
NAME_LINES = 2


def is_signature(line: str) -> bool:
    return line.rstrip("\n") in ("-- ", "--")


def is_end_line(line: str) -> bool:
    bare = line.strip()
    return bare in END_MARKS or (len(bare) < 40 and " ".join(tokens(bare)) in END_LINES
                                 and not bare.endswith(":"))


def is_sign_off(line: str) -> bool:
    """"Un saluto,", "Ciao Bruno", "Viele Grüße!": a sign-off phrase and at most a name."""
    words = tokens(line, _LONGEST + 4) if len(line) <= 80 else []
    if not words or words[0] not in _FIRSTS:
        return False
    for size in range(min(_LONGEST, len(words)), 0, -1):
        if tuple(words[:size]) in SIGN_OFFS:
            return len(words) - size <= 3 and not line.strip().endswith(":")
    return False


def _name_line(line: str) -> bool:
    bare = line.strip()
    return 0 < len(tokens(bare)) <= NAME_WORDS and len(bare) <= 40 and not bare.endswith(":")


def sign_off_at(lines: list[str], i: int, starts_command: Callable[[int], bool],
                author: str = "") -> bool:
    """Whether ``lines[i]`` signs the letter (or this part of it) off: a sign-off, then at
    most a couple of short name lines before the end or the next command; or the author's
    own name alone on the last line."""
    said = tokens(lines[i], NAME_WORDS + 1) if author else []
    if said and said == tokens(author)[:len(said)]:
        after = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
        return after is None or starts_command(after)
    if not is_sign_off(lines[i]):
        return False
    names = 0
    for j in range(i + 1, len(lines)):
        if not lines[j].strip():
            continue
        if starts_command(j):
            return True
        names += 1
        if names > NAME_LINES or not _name_line(lines[j]):
            return False
    return True


@dataclass
class Body:
    text: list[str]
    code: list[str] | None
    end: int  # the first line after the proposal (an end line is taken with it)


def body(lines: list[str], i: int, strong: Callable[[int], bool],
         weak: Callable[[int], bool], author: str = "") -> Body:
    """A proposal's text and fenced code from ``lines[i]`` to its boundary: ``strong``
    says a line is a command however it stands; ``weak``, one after a blank line."""
    text: list[str] = []
    code: list[str] | None = None
    fenced = False
    while i < len(lines):
        line = lines[i]
        bare = line.strip()
        if bare.startswith("```"):
            fenced, code = (False, code) if fenced else (True, [])
            i += 1
            continue
        if fenced:
            assert code is not None
            code.append(line)
            i += 1
            continue
        if is_signature(line):
            break
        if is_end_line(line):
            i += 1
            break
        if bare and strong(i):
            break
        if not bare and _next_is(lines, i + 1, weak):
            break
        if bare and sign_off_at(lines, i, lambda j: strong(j) or weak(j), author):
            break
        text.append(line.rstrip())
        i += 1
    return Body(text, code, i)


def _next_is(lines: list[str], i: int, weak: Callable[[int], bool]) -> bool:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i >= len(lines) or weak(i)

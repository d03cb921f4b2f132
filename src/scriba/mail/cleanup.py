"""What the writer wrote, without the letter they answered or their signature.

Dropped: ``>`` lines, everything from an attribution line on ("On … wrote:", "Il giorno …
ha scritto:", "Am … schrieb …:", which clients sometimes wrap over two lines) and from
the separators Outlook-style clients put above a forwarded or answered letter, and
everything after the signature mark ``-- ``. Fenced code blocks are kept as they are.
"""

from __future__ import annotations

import re

_ATTRIBUTION = re.compile(
    r"^(on\b.*\bwrote:|il giorno\b.*\bha scritto:|am\b.*\bschrieb\b.*:|"
    r"le\b.*\ba écrit ?:|el\b.*\bescribió:|.*\bscrisse:)\s*$", re.I)
_SEPARATOR = re.compile(
    r"^(-{2,}\s*(original message|messaggio originale|ursprüngliche nachricht|"
    r"forwarded message|messaggio inoltrato|weitergeleitete nachricht)\s*-{2,}|_{20,})\s*$",
    re.I)
_OUTLOOK_FROM = re.compile(r"^(from|da|von):\s.+", re.I)
_OUTLOOK_NEXT = re.compile(r"^(sent|date|inviato|data|gesendet|datum|to|a|an):\s", re.I)


def strip_quotes(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    fenced = False
    for i, line in enumerate(lines):
        bare = line.strip()
        if bare.startswith("```"):
            fenced = not fenced
            kept.append(line)
            continue
        if fenced:
            kept.append(line)
            continue
        if line.rstrip("\n") in ("-- ", "--") or line == "-- ":
            break
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if _ATTRIBUTION.match(bare) or (bare and _ATTRIBUTION.match(f"{bare} {following}")
                                        and not _ATTRIBUTION.match(following)
                                        and following.endswith(":")):
            break
        if _SEPARATOR.match(bare):
            break
        if _OUTLOOK_FROM.match(bare) and _OUTLOOK_NEXT.match(following):
            break
        if bare.startswith(">"):
            continue
        kept.append(line.rstrip())
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)

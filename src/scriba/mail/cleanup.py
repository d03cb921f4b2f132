"""What the writer wrote, without the letter they answered or their signature.

Dropped: ``>`` lines, everything from an attribution line on ("On … wrote:", "Il giorno …
ha scritto:", "Am … schrieb …:", which clients sometimes wrap over two lines) and from
the separators Outlook-style clients put above a forwarded or answered letter, and
everything after the signature mark ``-- ``. Fenced code blocks are kept as they are.
A forwarded letter (Gmail's, Outlook's, Thunderbird's separator, Apple Mail's "Begin
forwarded message:") is kept apart by :func:`split_forward`: the front acts on it only when
it holds the letter's only command.
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
_FORWARD = re.compile(
    r"^(-{2,}\s*(forwarded message|original message|messaggio inoltrato|"
    r"messaggio originale|weitergeleitete nachricht|ursprüngliche nachricht)\s*-{2,}|"
    r"begin forwarded message:|inizio messaggio inoltrato:|anfang der weitergeleiteten "
    r"nachricht:)\s*$", re.I)
_FORWARD_HEADER = re.compile(
    r"^(from|da|von|date|data|datum|sent|inviato|gesendet|subject|oggetto|betreff|to|a|an|"
    r"cc|reply-to):\s", re.I)
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


def split_forward(text: str) -> tuple[str, str | None]:
    """(what the writer wrote, the forwarded letter's own text or None). The forwarded
    letter starts after the first forward separator and its header lines; its quotes and
    signature are dropped as the writer's are."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fenced = False
    for i, line in enumerate(lines):
        bare = line.strip()
        if bare.startswith("```"):
            fenced = not fenced
        if fenced or bare.startswith(">"):
            continue
        if line in ("-- ", "--"):
            break  # a separator in the signature is the signature's
        if _FORWARD.match(bare):
            rest = lines[i + 1:]
            while rest and (not rest[0].strip() or _FORWARD_HEADER.match(rest[0].strip())):
                rest = rest[1:]
            return strip_quotes("\n".join(lines[:i])), strip_quotes("\n".join(rest))
    return strip_quotes(text), None

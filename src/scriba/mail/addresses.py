"""Which game a letter is for: Scriba's addresses ``scriba+GAME[.SECRET]@domain`` among
its recipients (the secret of a player's personal address names the player), and
``[GAME]`` tags in its subject."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from email.utils import getaddresses

from scriba.mail.letter import decode_header

_TAG = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\]")


def address_tail(address: str, domain: str | None = None) -> str | None:
    """``GAME[.SECRET]`` of ``scriba+GAME[.SECRET]@…`` ("" for ``scriba@…``), or None;
    with ``domain``, only for an address on it."""
    name, _, at = address.strip().lower().rpartition("@")
    local = os.environ.get("SCRIBA_MAIL_LOCAL", "scriba").lower()
    prefix, _, tail = name.partition("+")
    if prefix != local or (domain is not None and at != domain.lower().rstrip(".")):
        return None
    return tail


def game_ids(tail: str | None, games: set[str]) -> list[tuple[str, str | None]]:
    """``GAME`` or ``GAME.SECRET`` (a game id may itself hold dots)."""
    if not tail:
        return []
    lowered = {g.lower(): g for g in games}
    out: list[tuple[str, str | None]] = []
    if tail.lower() in lowered:
        out.append((lowered[tail.lower()], None))
    head, dot, secret = tail.rpartition(".")
    if dot and head.lower() in lowered:
        out.append((lowered[head.lower()], secret))
    # a secret wins over the bare game: it is the more specific address
    return sorted(out, key=lambda pair: pair[1] is None)


def tagged(subject: str, games: set[str]) -> list[str]:
    """The games named ``[GAME]`` in a subject."""
    lowered = {g.lower(): g for g in games}
    return [lowered[tag.lower()] for tag in _TAG.findall(subject) if tag.lower() in lowered]


def route(recipients: list[str], subject: str, games: set[str],
          owner: Callable[[str, str], str | None]) -> tuple[str | None, str | None]:
    """The game the letter was sent to (envelope, headers, subject tag) and, when one of
    its recipients is a player's personal address of it, that player (``owner(game,
    secret)``)."""
    found = [pair for address in recipients
             for pair in game_ids(address_tail(address), games)]
    for game, secret in found:
        player = owner(game, secret) if secret else None
        if player is not None:
            return game, player
    if found:
        return found[0][0], None
    named = tagged(subject, games)
    return (named[0] if named else None), None


def signed_games(headers: dict[str, str], games: set[str], domain: str) -> list[str]:
    """The games whose addresses (on ``domain``) a signature's To and Cc name, then the
    ``[GAME]`` of a signed subject sent to one of our addresses."""
    values = [headers.get(name, "") for name in ("to", "cc")]
    tails = [address_tail(address, domain) for _, address in getaddresses(values)]
    named = [game for tail in tails for game, _ in game_ids(tail, games)]
    if any(tail is not None for tail in tails) and "subject" in headers:
        named += tagged(decode_header(headers["subject"]), games)
    return list(dict.fromkeys(named))

"""The reader's own addresses on a game's mail: Reply just works, unsubscribing is one click.

Every message to a seated reader names their personal game address
(``scriba+GAME.SECRET@domain``, :meth:`.mailroom.Mailroom.secret`: random, per game and
player, never their name) as ``Reply-To`` and ``List-Post``; a letter to it from the
player's registered address is theirs without a DKIM signature (the intake checks the
From: a letter to another player's address is refused). ``List-Unsubscribe`` gives that
address with the subject ``unsubscribe`` and, when the server's public URL is known
(``SCRIBA_PUBLIC_URL``), an https link with ``List-Unsubscribe-Post`` (RFC 8058): a POST
to it without a session stops the mail of that seat, a GET shows a confirmation page.
The link's token is derived from the secret (it proves the seat), and tells nothing of it.
"""

from __future__ import annotations

import hashlib
import os

from scriba.service.letters import game_address

UNSUBSCRIBE_PATH = "/mail/unsubscribe"


def unsubscribe_token(secret: str) -> str:
    """The token of the seat's one-click unsubscribe link (not the secret itself: a link
    seen in a forwarded mail must not let its reader write as the player)."""
    return hashlib.sha256(f"unsubscribe\0{secret}".encode()).hexdigest()[:32]


def public_url() -> str | None:
    base = os.environ.get("SCRIBA_PUBLIC_URL", "").strip().rstrip("/")
    return base if base.startswith("https://") or base.startswith("http://") else None


def unsubscribe_url(game_id: str, secret: str) -> str | None:
    base = public_url()
    if base is None:
        return None
    return f"{base}{UNSUBSCRIBE_PATH}/{game_id}/{unsubscribe_token(secret)}"


def personal_headers(game_id: str, secret: str) -> dict[str, str]:
    """``Reply-To``, ``List-Post`` and ``List-Unsubscribe`` (+ ``-Post``) of one reader."""
    address = game_address(game_id, secret)
    mailto = f"<mailto:{address}?subject=unsubscribe>"
    headers = {"Reply-To": address, "List-Post": f"<mailto:{address}>",
               "List-Unsubscribe": mailto}
    url = unsubscribe_url(game_id, secret)
    if url is not None and url.startswith("https://"):  # RFC 8058 asks for https
        headers["List-Unsubscribe"] = f"<{url}>, {mailto}"
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    return headers

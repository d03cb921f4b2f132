"""Is the letter really from its From, to this game, written now? Its DKIM signature says.

dkimpy checks each ``DKIM-Signature`` (body hash, signed headers, the key published in
DNS under ``selector._domainkey.d``). One authenticates the letter when it verifies, its
``d=`` is the From's domain or a parent of it (DMARC's relaxed alignment), it signs the
whole body (no ``l=``) and its ``h=`` covers ``from``, ``to`` and ``date``: the game is
read from the signed To (and Cc, when signed), the age from the signed Date, so that a
signed letter cannot be sent on to another game or again months later. Not authenticated
either: a letter with two From, To, Cc, Date or Subject headers (DKIM signs the lowest
one, a reader sees the top one), or whose headers Python's email reads otherwise than
dkimpy (a lone CR ends a line for the one, not for the other). The DNS lookup is dkimpy's
``dnsfunc``, replaceable for tests and for a resolver of one's own.

The signature is also the letter's identity (:attr:`Signature.identity`): the same
signature again, whatever its Message-ID or envelope, is the same letter.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import parsedate_to_datetime
from typing import Any

import dkim
from dkim.util import parse_tag_value

# A signed letter is acted on only if its Date is at most DATE_WINDOW old and at most
# DATE_AHEAD in the future (the writer's clock may be a little fast).
DATE_WINDOW = timedelta(days=7)
DATE_AHEAD = timedelta(hours=2)

REQUIRED = ("from", "to", "date")  # what a signature must cover to authenticate
_READ = ("from", "to", "cc", "date", "subject")  # at most one each (RFC 5322 3.6)
_MAX_SIGNATURES = 5  # more is not a real letter
_LONE_CR = re.compile(rb"\r(?!\n)")


@dataclass(frozen=True)
class Signature:
    domain: str  # the signing domain (d=)
    identity: str  # SHA-256 of the signature's b= value, whitespace removed
    # the values of the signed From/To/Cc/Date/Subject, unfolded, by lower-case name
    headers: dict[str, str] = field(default_factory=dict)


def verified_signature(raw: bytes, from_domain: str,
                       dnsfunc: Callable[..., Any] | None = None) -> Signature | None:
    """The first signature that authenticates the letter for ``from_domain``, or None."""
    from_domain = from_domain.lower().rstrip(".")
    if not from_domain:
        return None
    try:
        headers, _body = dkim.rfc822_parse(raw)
    except Exception:  # noqa: BLE001 - unparseable headers carry no valid signature
        return None
    names = [name.decode("ascii", "replace").lower() for name, _ in headers]
    if any(_LONE_CR.search(value) for _, value in headers) or names != _as_read(raw):
        # the intake reads the letter with Python's email, which ends a line at a lone CR
        # where dkimpy does not: what is hidden from DKIM that way (a second From, commands
        # made to start the body early) must not ride on its signature
        return None
    values: dict[str, list[bytes]] = {}
    for name, (_, value) in zip(names, headers, strict=True):
        values.setdefault(name, []).append(value)
    if any(len(values.get(name, [])) > 1 for name in _READ):
        return None
    for index, value in enumerate(values.get("dkim-signature", [])[:_MAX_SIGNATURES]):
        signature = _verify(raw, index, value, from_domain, dnsfunc)
        if signature is not None:
            return Signature(signature[0], signature[1], {
                name: _unfold(values[name][0]) for name in _READ
                if name in signature[2] and values.get(name)})
    return None


def _verify(raw: bytes, index: int, value: bytes, from_domain: str,
            dnsfunc: Callable[..., Any] | None) -> tuple[str, str, set[str]] | None:
    """(domain, identity, signed header names) of signature ``index``, if it counts."""
    try:
        tags = parse_tag_value(value.replace(b"\r\n", b""))
        signed = {name.strip().lower().decode("ascii", "replace")
                  for name in tags.get(b"h", b"").split(b":")}
    except Exception:  # noqa: BLE001 - a malformed signature is no signature
        return None
    if b"l" in tags or not all(name in signed for name in REQUIRED):
        # l=: anyone could append commands below the signed bytes; without to/date
        # the letter could be sent to another game or again later
        return None
    try:
        checker = dkim.DKIM(raw, minkey=1024)
        ok = checker.verify(idx=index, dnsfunc=dnsfunc) if dnsfunc else \
            checker.verify(idx=index)
    except Exception:  # noqa: BLE001 - a broken signature is no signature
        return None
    if not ok or not checker.domain:
        return None
    domain = checker.domain.decode("ascii", "replace").lower().rstrip(".")
    if from_domain != domain and not from_domain.endswith("." + domain):
        return None
    b_value = re.sub(rb"\s+", b"", checker.signature_fields.get(b"b", b""))
    return domain, hashlib.sha256(b_value).hexdigest(), signed


def dated_within(date: str, now: datetime) -> bool:
    """Whether a letter's Date lies in [now - DATE_WINDOW, now + DATE_AHEAD]."""
    try:
        written = parsedate_to_datetime(date)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    if written.tzinfo is None:  # "-0000": UTC, the writer's own zone unknown
        written = written.replace(tzinfo=UTC)
    return now - DATE_WINDOW <= written <= now + DATE_AHEAD


def _as_read(raw: bytes) -> list[str]:
    """The header names as :func:`scriba.mail.letter.read_letter` sees them."""
    try:
        message = BytesHeaderParser(policy=compat32).parsebytes(raw)
        return [name.lower() for name in message]  # the header names, in order
    except Exception:  # noqa: BLE001 - unreadable: nothing to compare with
        return []


def _unfold(value: bytes) -> str:
    return " ".join(value.decode("utf-8", "replace").split())

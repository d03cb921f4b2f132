"""Is the letter really from its From? A DKIM signature of the From's domain says so.

dkimpy checks each ``DKIM-Signature`` (body hash, signed headers, the key published in
DNS under ``selector._domainkey.d``); one that verifies and whose ``d=`` is the From's
domain or a parent of it (DMARC's relaxed alignment) authenticates the letter. The DNS
lookup is dkimpy's ``dnsfunc``, replaceable for tests and for a resolver of one's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import dkim

_SIGNATURE = re.compile(rb"^dkim-signature:", re.I | re.M)


def dkim_domain(raw: bytes, from_domain: str,
                dnsfunc: Callable[..., Any] | None = None) -> str | None:
    """The signing domain that vouches for ``from_domain``, or None."""
    from_domain = from_domain.lower().rstrip(".")
    if not from_domain:
        return None
    head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0]
    count = len(_SIGNATURE.findall(head))
    for index in range(min(count, 5)):  # more signatures than that is not a real letter
        try:
            checker = dkim.DKIM(raw, minkey=1024)
            ok = checker.verify(idx=index, dnsfunc=dnsfunc) if dnsfunc else \
                checker.verify(idx=index)
        except Exception:  # noqa: BLE001 - a broken signature is no signature
            continue
        if not ok or not checker.domain:
            continue
        domain = checker.domain.decode("ascii", "replace").lower().rstrip(".")
        if from_domain == domain or from_domain.endswith("." + domain):
            return domain
    return None

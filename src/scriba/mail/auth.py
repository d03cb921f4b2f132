"""Is the letter really from its From? A DKIM signature of the From's domain says so.

dkimpy checks each ``DKIM-Signature`` (body hash, signed headers, the key published in
DNS under ``selector._domainkey.d``); one that verifies and whose ``d=`` is the From's
domain or a parent of it (DMARC's relaxed alignment) authenticates the letter. The DNS
lookup is dkimpy's ``dnsfunc``, replaceable for tests and for a resolver of one's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dkim
from dkim.util import parse_tag_value


def dkim_domain(raw: bytes, from_domain: str,
                dnsfunc: Callable[..., Any] | None = None) -> str | None:
    """The signing domain that vouches for ``from_domain``, or None."""
    from_domain = from_domain.lower().rstrip(".")
    if not from_domain:
        return None
    try:
        headers, _body = dkim.rfc822_parse(raw)
    except Exception:  # noqa: BLE001 - unparseable headers carry no valid signature
        return None
    signatures = [value for name, value in headers if name.lower() == b"dkim-signature"]
    for index, value in enumerate(signatures[:5]):  # more is not a real letter
        try:
            if b"l" in parse_tag_value(value):
                # a signature of the first l bytes lets anyone append commands below
                continue
        except Exception:  # noqa: BLE001
            continue
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

"""A person's details as they are kept: an e-mail address (NFC, trimmed, domain
lower-cased), a language Scriba speaks, a time zone, a way of receiving mail. Each is
checked here, refused with :class:`~scriba.service.errors.InvalidInput` naming the field."""

from __future__ import annotations

import re
import unicodedata
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scriba.service.errors import InvalidInput

LANGUAGES = ("en", "it", "de")
MAIL_MODES = ("auto", "each", "digest", "none")  # auto: each, or digest when busy (.busy)
EMAIL_MAX = 254  # characters in an e-mail address (RFC 5321's path)
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\-\u0080-\U0010ffff]{1,64}")
_LABEL = re.compile(r"(?!-)[a-z0-9\-\u0080-\U0010ffff]{1,63}(?<!-)")


def normalize_email(value: Any) -> str:
    """``Local@Domain`` as stored: NFC, trimmed, domain lower-cased; refused if malformed."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput("The e-mail address is not valid UTF-8 text.", "email") from None
    if not isinstance(value, str):
        raise InvalidInput("The e-mail address must be text.", "email")
    value = unicodedata.normalize("NFC", value.strip())
    if len(value) > EMAIL_MAX:
        raise InvalidInput(f"The e-mail address is too long (at most {EMAIL_MAX} "
                           "characters).", "email")
    local, sep, domain = value.rpartition("@")
    domain = domain.lower().rstrip(".")
    labels = domain.split(".")
    if (not sep or not _LOCAL.fullmatch(local) or local.startswith(".")
            or local.endswith(".") or ".." in local or len(labels) < 2
            or not all(_LABEL.fullmatch(label) for label in labels)
            or any(unicodedata.category(c)[0] in "CZ" for c in local + domain)):
        raise InvalidInput(f"'{value[:80]}' is not an e-mail address.", "email")
    return f"{local}@{domain}"


def check_language(value: Any) -> str:
    if value not in LANGUAGES:
        raise InvalidInput(f"Unknown language {str(value)[:20]!r} (known: "
                           f"{', '.join(LANGUAGES)}).", "language")
    return str(value)


def check_timezone(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > 64 or ".." in value \
            or value.startswith("/"):
        raise InvalidInput("Unknown time zone.", "timezone")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidInput(f"Unknown time zone {value[:64]!r} (write e.g. Europe/Rome).",
                           "timezone") from None
    return value

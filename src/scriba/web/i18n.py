"""The pages' own words in Italian, German and English (Babel domain ``web``).

The catalogs are the ``web.po`` files beside the service's ``scriba.po``, read by
:mod:`scriba.service.catalogs` like every other domain. Rule texts, names and everything the
rules themselves write are data in the game's language and are never translated here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel import Locale, UnknownLocaleError
from babel.dates import format_datetime, format_timedelta
from babel.support import NullTranslations

from scriba.service import catalogs

LANGUAGES: dict[str, str] = {"it": "Italiano", "de": "Deutsch", "en": "English"}
DEFAULT_LANGUAGE = "en"
LANGUAGE_COOKIE = "scriba_lang"
TIMEZONE_COOKIE = "scriba_tz"


def supported(language: str | None) -> str | None:
    """The language code if the pages speak it (``"de-CH"`` → ``"de"``), else None."""
    if not language:
        return None
    code = language.strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGUAGES else None


def translations(language: str) -> NullTranslations:
    return catalogs.translations("web", language)


def gettext_for(language: str) -> Any:
    """``_("Rules of %(game)s", game=name)``: translated, then filled with the values."""
    catalog = translations(language)

    def gettext(message: str, **values: Any) -> str:
        text = catalog.gettext(message)
        return text % values if values else text

    return gettext


def ngettext_for(language: str) -> Any:
    catalog = translations(language)

    def ngettext(singular: str, plural: str, count: int, **values: Any) -> str:
        return catalog.ngettext(singular, plural, count) % {"num": count, **values}

    return ngettext


def language_name(code: str | None, language: str) -> str:
    """A language's name in the reader's language ("en" read in Italian: "inglese")."""
    try:
        return str(Locale.parse(language).languages.get(str(code), code or ""))
    except (ValueError, TypeError, UnknownLocaleError):
        return code or ""


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name) if name else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def when(text: str | None, language: str, timezone: str | None, form: str = "medium") -> str:
    """A time of the log, in the reader's language and time zone."""
    moment = parse_iso(text)
    if moment is None:
        return text or ""
    return format_datetime(moment, form, tzinfo=zone(timezone), locale=language)


def countdown(deadline: str | None, now: str | datetime | None, language: str) -> str:
    """ "in 2 days" / "3 hours ago", measured from the game's own clock."""
    end = parse_iso(deadline)
    start = now if isinstance(now, datetime) else parse_iso(now) or datetime.now(UTC)
    if end is None:
        return ""
    delta: timedelta = end - start
    return format_timedelta(delta, add_direction=True, threshold=1.5, locale=language)

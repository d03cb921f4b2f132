"""Scriba's words in other languages: the Babel catalogs ``locale/<lang>/LC_MESSAGES/
<domain>.po`` — ``scriba`` (the service's sentences), ``web`` (the pages), ``mail`` (letters).

Each catalog is read once, on first use, and compiled in memory: no build step. This module
sits below every layer (it needs only Babel): the errors, the service and the interfaces
(through :mod:`scriba.service.catalogs`) read the same catalogs.
"""

from __future__ import annotations

import io
import os
import re
from functools import cache
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

# SCRIBA_LOCALE_DIR: another folder of catalogs, for the test that renders every page in a
# pseudo-locale (tests/web/test_page_words.py); players never reach it.
LOCALE_DIR = Path(os.environ.get("SCRIBA_LOCALE_DIR")
                  or Path(__file__).resolve().parent / "locale")
DOMAINS = ("scriba", "web", "mail")
# A language code, never a path: the language comes from readers and letters.
_LANGUAGE = re.compile(r"[a-z]{2,3}(?:[_-][A-Za-z0-9]{2,8})?")


@cache
def catalog(domain: str, language: str) -> Catalog | None:
    """The ``domain`` catalog of ``language``, or None where there is none."""
    if domain not in DOMAINS or not _LANGUAGE.fullmatch(language):
        return None
    path = LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        return read_po(handle, locale=language, domain=domain)


def lookup(domain: str, language: str, english: str) -> str:
    """``english`` in ``language`` from the ``domain`` catalog, or as it is."""
    found = catalog(domain, language)
    entry = found.get(english) if found is not None else None
    return str(entry.string) if entry is not None and entry.string else english


@cache
def translations(domain: str, language: str) -> NullTranslations:
    """The catalog as gettext translations (plural forms included)."""
    found = catalog(domain, language)
    if found is None:
        return NullTranslations()
    compiled = io.BytesIO()
    write_mo(compiled, found)
    compiled.seek(0)
    return Translations(compiled, domain=domain)

"""Scriba's words in other languages (:mod:`scriba.catalogs`, below every layer), under
the name the service and the interfaces use."""

from scriba.catalogs import DOMAINS, LOCALE_DIR, catalog, lookup, translations

__all__ = ["DOMAINS", "LOCALE_DIR", "catalog", "lookup", "translations"]

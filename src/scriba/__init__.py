"""Scriba: the Nomic officer as software."""

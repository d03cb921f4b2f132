"""The event store and its schema; :func:`migrate` creates or upgrades a database."""

from scriba.store.database import migrate

__all__ = ["migrate"]

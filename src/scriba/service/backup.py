"""Backups for the operator (``scriba backup``, ``scriba restore``): the store's, offered
to the interfaces here (they reach the store only through the service)."""

from scriba.store.backup import BackupError, Progress, backup, restore
from scriba.store.database import head_revision

__all__ = ["BackupError", "Progress", "backup", "head_revision", "restore"]

"""The ORM base for tables used off the command path (accounts, mail).

They share the Core tables' ``MetaData`` (:mod:`scriba.store.schema`), so Alembic and a
fresh database see one schema; the command path itself uses Core statements only.
"""

from __future__ import annotations

from sqlalchemy.orm import DeclarativeBase

from scriba.store.schema import metadata


class Base(DeclarativeBase):
    metadata = metadata

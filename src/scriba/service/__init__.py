"""The service layer: the one way into the games for every interface, in parts with one
job each (commands, reads, accounts, seats, outbox, mailroom), assembled by
:func:`open_service` (see :mod:`scriba.service.assembly`).

The names below are imported on first use, so that a lean part (the pipe's
:mod:`scriba.service.inbound`) can be imported without loading the whole service."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scriba.service.assembly import (
        Service,
        default_db_url,
        migrate_database,
        open_service,
    )
    from scriba.service.inputs import Outcome

__all__ = ["Outcome", "Service", "default_db_url", "migrate_database", "open_service"]


def __getattr__(name: str) -> Any:
    if name == "Outcome":
        from scriba.service.inputs import Outcome

        return Outcome
    if name in __all__:
        from scriba.service import assembly

        return getattr(assembly, name)
    raise AttributeError(f"module 'scriba.service' has no attribute {name!r}")

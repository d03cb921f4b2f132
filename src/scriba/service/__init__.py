"""The service layer: the one way into the games for every interface, in parts with one
job each (commands, reads, accounts, seats, outbox, mailroom), assembled by
:func:`open_service` (see :mod:`scriba.service.assembly`)."""

from scriba.service.assembly import Service, default_db_url, migrate_database, open_service
from scriba.service.inputs import Outcome

__all__ = ["Outcome", "Service", "default_db_url", "migrate_database", "open_service"]

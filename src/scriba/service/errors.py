"""What the service refuses: the errors of :mod:`scriba.errors`, under the name the
service and the interfaces use (interfaces import only ``scriba.service``)."""

from scriba.errors import (
    GameExists,
    InvalidInput,
    NotAllowed,
    NotFound,
    RequestIdReused,
    ServiceError,
    UnknownGame,
    told,
    with_sentence,
)

__all__ = ["GameExists", "InvalidInput", "NotAllowed", "NotFound", "RequestIdReused",
           "ServiceError", "UnknownGame", "told", "with_sentence"]

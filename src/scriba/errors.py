"""What the service refuses, as exceptions every interface can catch and show.

``str(error)`` is a sentence for people (in the game's or the reader's language where
the service knows it); interfaces print it as it is, never a traceback. A command the
rules refuse is not an exception: it is an :class:`~scriba.service.inputs.Outcome` with
``accepted=False``, recorded in the log.

They live below every layer, so that the store can raise them too (a missing game, a
schema to upgrade) without importing the service; the service and the interfaces name
them :mod:`scriba.service.errors`.
"""

from __future__ import annotations

from scriba.catalogs import lookup


class ServiceError(Exception):
    """Base of every refusal the service raises; the message is for people.

    Where the service knows the sentence (a ``scriba`` catalog entry and its values, set
    by :func:`with_sentence`), an interface tells it again in its reader's language
    (:func:`told`): a page read in Italian of a German game refuses in Italian."""

    template: str | None = None
    params: dict[str, object] = {}  # noqa: RUF012 - replaced, never changed in place


def with_sentence(error: ServiceError, template: str, **params: object) -> ServiceError:
    """``error``, able to be told again in another language (see :func:`told`)."""
    error.template, error.params = template, params
    return error


def told(error: Exception, language: str) -> str:
    """The refusal in ``language`` where its sentence is known, else as it was raised."""
    template = getattr(error, "template", None)
    if template:
        try:
            return lookup("scriba", language, template).format(**getattr(error, "params", {}))
        except (KeyError, IndexError, ValueError):
            pass
    return str(error)


class UnknownGame(ServiceError, LookupError):
    """No game has that id."""


class GameExists(ServiceError):
    """A game with that id already exists."""


class NotFound(ServiceError, LookupError):
    """No rule, proposal, player or account by that name in the game."""


class InvalidInput(ServiceError, ValueError):
    """Input refused before it reached the game: bad encoding, a name or text that breaks
    a limit, a malformed file. ``field`` names what was wrong, where that helps."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotAllowed(ServiceError, PermissionError):
    """The caller may not do this (no seat in the game, not its officer, bad token)."""


class RequestIdReused(ServiceError):
    """A player sent a request id again in a game with another command (another action or
    other arguments): refused, nothing kept; the first command and its outcome stand.
    (The same command again is no error: it gets the first outcome.)"""

    SENTENCE = ("You already sent this request with other contents: the first one stands "
                "and this one was not recorded. To do something else, send it as a new "
                "request.")

    def __init__(self, language: str = "en") -> None:
        super().__init__(self.told(language))

    @classmethod
    def told(cls, language: str) -> str:
        """The refusal in ``language`` (a reader's, where an interface knows it)."""
        return lookup("scriba", language, cls.SENTENCE)

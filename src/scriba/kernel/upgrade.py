"""Old events brought to the current schema when they are read.

Games run for years, so a log holds events written by older versions of Scriba. Each
event type has a schema version (:mod:`scriba.kernel.registry`); an event records it in
its payload as ``"v"`` when above 1, and an event without one is version 1. When the
shape of a payload changes, the type's version goes up and an upgrader from the old
version is added to :data:`UPGRADERS`; :func:`upgrade` applies them in order, on a copy,
so a stored log is never rewritten and a replay of an exported log still works.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriba.kernel.registry import version_of

Event = dict[str, Any]
Upgrader = Callable[[dict[str, Any]], dict[str, Any]]

# (event type, version it upgrades from) -> payload at the next version. Empty today:
# every event type is at version 1.
UPGRADERS: dict[tuple[str, int], Upgrader] = {}


def event_version(event: Event) -> int:
    payload = event.get("payload") or {}
    version = payload.get("v", 1)
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def upgrade(event: Event, upgraders: dict[tuple[str, int], Upgrader] | None = None,
            current: int | None = None) -> Event:
    """The event at its type's current version; the same object if it already is."""
    upgraders = UPGRADERS if upgraders is None else upgraders
    current = version_of(event["type"]) if current is None else current
    version = event_version(event)
    if version == current:
        return event
    if version > current:
        raise ValueError(f"event {event.get('seq')} ({event['type']}) is version {version}, "
                         f"newer than this Scriba knows ({current})")
    payload = {k: v for k, v in event["payload"].items() if k != "v"}
    while version < current:
        step = upgraders.get((event["type"], version))
        if step is None:
            raise ValueError(f"no upgrade of {event['type']} events from version {version}")
        payload = step(payload)
        version += 1
    if current > 1:
        payload["v"] = current
    return {**event, "payload": payload}


def stamp(event: Event) -> Event:
    """Record the type's current version on a new event (nothing for version 1)."""
    current = version_of(event["type"])
    if current > 1:
        event["payload"]["v"] = current
    return event

"""The game view sent to a sandbox worker part by part: what each side keeps.

A view (:class:`scriba.kernel.view.GameView`) is a few small entries that change with
every event, sent with each request, and parts named by keys that change whenever their
content does. A worker keeps the parts it was sent, decoded and frozen, under their keys:
at most ``KEPT_PARTS`` (or the parts of one request, if more), the least recently used
dropped first. The host keeps a mirror of each worker's store, changed by the same steps
in the same order (:meth:`PartStore.take`), so it sends only the parts the worker lacks —
in a long game, the one proposal just voted on instead of the whole view. Should the two
ever disagree, the worker answers ``missing_parts`` and the host sends everything again
with ``reset_parts``.

On the wire, a request has ``"views"``, a list of ``{"inline": {...}, "parts": [key,
...]}`` (one per call it asks for), and ``"send"``, the keys of the parts sent with it:
one line of JSON follows the request for each.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from scriba.kernel.view import GameView, ViewPart

KEPT_PARTS = 512
_ENCODED_KEPT = 2048  # encoded parts the host keeps, shared by its workers

V = TypeVar("V")


class PartStore(Generic[V]):
    """Parts by key, least recently used first (a worker's store, or the host's mirror
    of it, whose values are None)."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, V] = OrderedDict()

    def take(self, sent: list[tuple[str, V]], used: list[str]) -> list[str]:
        """Keep the parts sent, then mark the parts a request uses as just used; the keys
        used that are not kept (nothing changed then but the parts sent)."""
        for key, value in sent:
            self.items[key] = value
            self.items.move_to_end(key)
        missing = [key for key in used if key not in self.items]
        if missing:
            return missing
        for key in used:
            self.items.move_to_end(key)
        while len(self.items) > max(KEPT_PARTS, len(used)):
            self.items.popitem(last=False)
        return []

    def clear(self) -> None:
        self.items.clear()


class EncodedParts:
    """The JSON of the parts lately sent, by key: a part two workers need is encoded once."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, build: Callable[[], Any]) -> bytes:
        with self._lock:
            found = self._items.get(key)
        if found is None:
            found = encode(build())
            with self._lock:
                self._items[key] = found
                while len(self._items) > _ENCODED_KEPT:
                    self._items.popitem(last=False)
        return found


def encode(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate stored before input was checked
        return json.dumps(value, separators=(",", ":")).encode()


def ask_with_parts(ask: Callable[[dict[str, Any], bytes], dict[str, Any]],
                   mirror: PartStore[None], payload: dict[str, Any],
                   prepare: Callable[..., tuple[dict[str, Any], bytes]]) -> dict[str, Any]:
    """Make the request ``prepare`` builds for the worker ``mirror`` stands for; should the
    two disagree about the parts kept, make it once more with every part sent afresh."""
    answer = ask(*prepare(mirror, payload))
    if answer.get("missing_parts"):
        answer = ask(*prepare(mirror, payload, True))
    return answer


def views_for(views: list[GameView | dict[str, Any]], mirror: PartStore[None],
              encoded: EncodedParts, reset: bool = False) -> tuple[dict[str, Any], bytes]:
    """The view entries of a request (``views``, ``send``) for the worker ``mirror``
    stands for, and the lines that follow the request (the parts it lacks); the mirror is
    updated as the worker will be."""
    if reset:
        mirror.clear()
    builds: dict[str, Callable[[], bytes]] = {}
    sent_views = []
    for view in views:
        if not isinstance(view, GameView):
            # A plain dict (tests, benchmarks): one part, named by its content.
            data = encode(view)
            key = "x:" + hashlib.blake2b(data, digest_size=16).hexdigest()
            builds[key] = functools.partial(bytes, data)
            sent_views.append({"inline": {}, "parts": [key]})
            continue
        for part in view.parts:
            builds.setdefault(part.key, _encoder(part, encoded))
        sent_views.append({"inline": view.inline, "parts": [part.key for part in view.parts],
                           "layout": view.layout})
    used = list(builds)
    send = [key for key in used if key not in mirror.items]
    mirror.take([(key, None) for key in send], used)
    lines = b"".join(builds[key]() + b"\n" for key in send)
    request: dict[str, Any] = {"views": sent_views, "send": send}
    if reset:
        request["reset_parts"] = True
    return request, lines


def _encoder(part: ViewPart, encoded: EncodedParts) -> Callable[[], bytes]:
    if part.json is not None:  # sealed: encoded when it was built
        return lambda: part.json  # type: ignore[return-value]
    return lambda: encoded.get(part.key, part.build)


def seal(view: GameView, encoded: EncodedParts) -> GameView:
    """The view with every part's JSON made now: it no longer reads the state, which may
    then change (the kernel asks ahead, then undoes what it applied to do so)."""
    return GameView(view.inline, [ViewPart(p.key, p.build, encoded.get(p.key, p.build))
                                  for p in view.parts], view.layout)

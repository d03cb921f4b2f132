"""The game view sent to a sandbox worker part by part: what each side keeps.

A view (:class:`scriba.kernel.view.GameView`) is a few small entries that change with
every event, sent with each request, and parts named by keys that change whenever their
content does. A worker keeps the parts it was sent, decoded and frozen, under their keys,
and the keys of the proposals' parts of its last few views (``HELD_VIEWS``), by their id.
The host keeps a mirror of each worker's store, changed by the same steps in the same
order (:meth:`PartStore.take`), so it sends only the parts the worker lacks — in a long
game, the one proposal just voted on instead of the whole view — and names the
proposals' parts as a change from keys the worker holds: what a vote costs does not grow
with the proposals that are open. Should the two ever disagree, the worker answers
``missing_parts`` and the host sends everything again with ``reset_parts``.

On the wire, a request has ``"views"``, a list of ``{"inline": {...}, "parts": [key,
...], "proposals": {...}}`` (one per call it asks for; ``parts`` are the top-level
entries; ``proposals`` is ``{"id": n, "keys": [key, ...]}`` or ``{"id": n, "base": m,
"changed": [[place, key], ...]}``), and ``"send"``, the keys of the parts sent with it:
one line of JSON follows the request for each.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from scriba.kernel.caches import keep
from scriba.kernel.view import GameView, ProposalParts, ViewPart

KEPT_PARTS = 512  # parts kept beyond those of the views held
HELD_VIEWS = 4  # proposals' keys of the last views taken, held to be changed from
_ENCODED_KEPT = 2048  # encoded parts the host keeps, shared by its workers

V = TypeVar("V")


class PartStore(Generic[V]):
    """Parts by key, oldest sent first (a worker's store, or the host's mirror of it,
    whose values are None), and the keys of the proposals' parts of the last views."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, V] = OrderedDict()
        self.proposals: OrderedDict[int, list[str]] = OrderedDict()
        self._sweep_at = 2 * KEPT_PARTS

    def take(self, sent: list[tuple[str, V]], views: list[dict[str, Any]]
             ) -> tuple[list[str], list[list[str]]]:
        """Keep the parts sent and the proposals' keys of ``views`` (a request's); what
        the views use that is not kept (nothing changed then but the parts sent), and the
        keys of each view's proposals' parts.

        Parts are dropped in one sweep now and then (once ``KEPT_PARTS`` more are kept
        than after the last), not on every request: the parts of the views held and of
        this request stay, and of the others the last sent."""
        self.items.update(sent)
        used: dict[str, None] = {}
        resolved = []
        for view in views:
            used.update(dict.fromkeys(view.get("parts") or []))
            proposals = view.get("proposals")
            if proposals is None:
                resolved.append([])
                continue
            if "keys" in proposals:
                keys = proposals["keys"]
                used.update(dict.fromkeys(keys))
            else:
                base = self.proposals.get(proposals["base"])
                if base is None:
                    return [f"proposals {proposals['base']}"], []
                keys = list(base)  # a copy of pointers, in C
                for place, key in proposals["changed"]:
                    keys[place] = key
                    used[key] = None
            self.proposals[proposals["id"]] = keys
            self.proposals.move_to_end(proposals["id"])
            resolved.append(keys)
        while len(self.proposals) > HELD_VIEWS:
            self.proposals.popitem(last=False)
        missing = used.keys() - self.items.keys()
        if missing:
            return sorted(missing), []
        if len(self.items) > self._sweep_at:
            self._sweep(used)
        return [], resolved

    def _sweep(self, used: dict[str, None]) -> None:
        held = set(used)
        for keys in self.proposals.values():
            held.update(keys)
        others = [key for key in self.items if key not in held][-KEPT_PARTS:]
        held.update(others)
        self.items = OrderedDict((k, v) for k, v in self.items.items() if k in held)
        self._sweep_at = len(self.items) + KEPT_PARTS

    def clear(self) -> None:
        self.items.clear()
        self.proposals.clear()
        self._sweep_at = 2 * KEPT_PARTS


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
    used: dict[str, None] = {}
    sent_views = []
    proposals = []
    held = set(mirror.proposals)
    for view in views:
        if not isinstance(view, GameView):
            # A plain dict (tests, benchmarks): one part, named by its content.
            data = encode(view)
            key = "x:" + hashlib.blake2b(data, digest_size=16).hexdigest()
            builds[key] = functools.partial(bytes, data)
            used[key] = None
            sent_views.append({"inline": {}, "parts": [key]})
            continue
        entries = [part.key for part in view.entries]
        for part in view.entries:
            builds.setdefault(part.key, _encoder(part, encoded))
        used.update(dict.fromkeys(entries))
        props = view.proposals
        proposals.append(props)
        if props.base is not None and props.base in held:  # the few that changed
            wire: dict[str, Any] = {"id": props.id, "base": props.base, "changed": [
                [place, props.keys[place]] for place in props.changed]}
            used.update(dict.fromkeys(props.keys[place] for place in props.changed))
        else:  # a worker's first view of these proposals, or one made afresh
            wire = {"id": props.id, "keys": props.keys}
            used.update(dict.fromkeys(props.keys))
        held.add(props.id)
        sent_views.append({"inline": view.inline, "parts": entries, "proposals": wire,
                           "layout": view.layout})
    send = sorted(used.keys() - mirror.items.keys())
    places = _places(proposals, send, builds)
    for key in send:
        if key not in builds:  # a proposals' part: built from the first view with it
            parts, index = places[key]
            builds[key] = _encoder(parts.part(index), encoded)
    mirror.take([(key, None) for key in send], sent_views)
    lines = b"".join(builds[key]() + b"\n" for key in send)
    request: dict[str, Any] = {"views": sent_views, "send": send}
    if reset:
        request["reset_parts"] = True
    return request, lines


def _places(proposals: list[ProposalParts], send: list[str],
            builds: dict[str, Any]) -> dict[str, tuple[ProposalParts, int]]:
    """Where the proposals' parts to send are: looked up one by one when they are few
    (the usual vote: one), by a map of every key when many are (a worker's first view)."""
    wanted = [key for key in send if key not in builds]
    places: dict[str, tuple[ProposalParts, int]] = {}
    if len(wanted) > 8:
        for parts in reversed(proposals):  # the first view with a key wins
            places.update((key, (parts, i)) for i, key in enumerate(parts.keys))
        return places
    for key in wanted:
        for parts in proposals:
            if key in parts.keys:  # a scan in C of a list of pointers
                places[key] = (parts, parts.keys.index(key))
                break
    return places


def _encoder(part: ViewPart, encoded: EncodedParts) -> Callable[[], bytes]:
    if part.json is not None:  # sealed: encoded when it was built
        return lambda: part.json  # type: ignore[return-value]
    return lambda: encoded.get(part.key, part.build)


# What sealing encoded of the proposals' parts of a view, by the id of its keys: place ->
# (key, JSON). A view sealed after it, made from those keys, carries on what still holds.
_SEALED: OrderedDict[int, dict[int, tuple[str, bytes]]] = OrderedDict()


def seal(view: GameView, encoded: EncodedParts) -> GameView:
    """The view with its parts' JSON made now, where it may no longer be read from the
    state later: the kernel asks ahead — applies queued events in a trial, seals a view
    after each, then undoes the trial — and sends the views once the state is back.

    Of the proposals' parts, those at places changed since the keys the view's were made
    from (and those sealed with those keys, if still the same): a part at another place
    has the key it had before the trial, and the state will be back to that content. A
    view whose keys were made afresh has every part sealed."""
    entries = [ViewPart(p.key, p.build, encoded.get(p.key, p.build)) for p in view.entries]
    props = view.proposals
    sealed: dict[int, tuple[str, bytes]] = {}
    inherited = _SEALED.get(props.base) if props.base is not None else None
    if inherited:
        sealed.update((place, found) for place, found in inherited.items()
                      if props.keys[place] == found[0])
    places = props.changed if props.base is not None else range(len(props.keys))
    for place in places:
        key = props.keys[place]
        sealed[place] = (key, encoded.get(key, functools.partial(props.build, place)))
    keep(_SEALED, props.id, sealed, 256)
    return GameView(view.inline, entries,
                    dataclasses.replace(props, json=dict(sealed.values())), view.layout)

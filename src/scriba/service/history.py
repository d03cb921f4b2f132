"""The log told: the chronicle's filters and pages (one report per period: :mod:`.periods`);
and the small caches the reads keep. Helpers of :mod:`.reads`: plain functions of events
and words, no store, no lock."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from scriba.kernel.events import Event
from scriba.kernel.sealing import hidden
from scriba.service.gamelog import GameLog
from scriba.service.narrate import Narrator, bookkeeping
from scriba.service.narrate_asof import NarratorAt
from scriba.service.rulehistory import number_now
from scriba.service.words import Words


class SmallCache:
    """A few recent answers, the least recently used dropped first; thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._items.pop(key, None)
            if value is not None:
                self._items[key] = value
            return value

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)


# The chronicle's filters, for people: each group names event types.
CHRONICLE_GROUPS: dict[str, tuple[str, ...]] = {
    "game": ("game_created", "winner_declared", "game_ended"),
    "players": ("player_joined", "player_status"),
    "proposals": ("proposal_submitted", "vote_cast", "vote_withdrawn", "proposal_resolved"),
    "rules": ("rule_changed", "rule_change_failed", "rule_code_aborted"),
    "score": ("var_set",),  # of the ruleset's score variables only (see chronicle)
    "variables": ("var_set",),
    "offices": ("office_set",),
    "deadlines": ("timer_set", "timer_fired", "timer_cancelled", "clock_advanced"),
    "assets": ("asset_set", "asset_destroyed"),
    "notices": ("notice",),
    "actions": ("action_taken",),
    "refusals": ("command_refused",),
}
KIND_GROUP = {kind: group for group, kinds in CHRONICLE_GROUPS.items() for kind in kinds}


def expand_kinds(kinds: Iterable[str] | None) -> set[str] | None:
    if not kinds:
        return None
    if isinstance(kinds, str):
        kinds = [kinds]
    wanted: set[str] = set()
    for kind in kinds:
        wanted.update(CHRONICLE_GROUPS.get(str(kind), (str(kind),)))
    return wanted


# A refused command is a private mistake (issue 19): told to its author, if a player then,
# and to the officer; an attempt by someone who is not a player, to the officer only. The
# log keeps them all (replays, the officer's page); only the chronicle chooses.
PRIVATE_KINDS = frozenset({"command_refused"})


def private_filter(log: GameLog, viewer: str | None, officer: bool,
                   private_vars: Iterable[str] = (),
                   sealing: bool = True) -> Callable[[Event], bool]:
    """Whether the reader (``viewer``, the player they sit as, or the ``officer``) may see
    an event of ``log``: everything but the refusals that are not theirs, the sealed
    moves of others not revealed yet (:mod:`scriba.kernel.sealing`; ``sealing`` False:
    no sealed action is in force, none is looked for) and the changes of others'
    ``private_vars`` (variables declared private)."""
    if officer:
        return lambda event: True
    secret = hidden(log.sealing) if sealing else {}  # the sealed events and their reveals
    private = frozenset(private_vars)

    def mine(event: Event) -> bool:
        p = event.get("payload") or {}
        if event["seq"] in secret and (viewer is None or secret[event["seq"]] != viewer):
            return False
        if isinstance(p.get("sealed"), dict) and event["seq"] not in secret:
            return True  # a move revealed is shown whole, its private values with it
        return not (event["type"] == "var_set" and p.get("name") in private
                    and (viewer is None or p.get("player") != viewer))

    if viewer is None:
        return lambda event: event["type"] not in PRIVATE_KINDS and mine(event)
    # The viewer's refusals from when they first joined (before it, they were an outsider).
    end = log.events[-1]["seq"] + 1 if log.events else 0
    joined = log.joined_before(viewer, end)
    return lambda event: mine(event) and (event["type"] not in PRIVATE_KINDS or (
        joined is not None and event.get("actor") == viewer and event["seq"] > joined))


def outsiders_attempts(events: list[Event], narrator: Narrator,
                       limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` refused commands of people who were not players when they sent
    them, told as chronicle entries (for the officer)."""
    players: set[str] = set()
    found = []
    for event in events:
        if event["type"] == "player_joined":
            players.add(str((event.get("payload") or {}).get("player")))
        elif event["type"] in PRIVATE_KINDS and event.get("actor") not in players:
            found.append(event)
    return [{"seq": e["seq"], "time": e["time"], "kind": e["type"], "group": "refusals",
             "actor": e["actor"], "text": narrator.tell(e), "rules": {}}
            for e in found[-limit:]]


def rules_named(event: Event) -> list[str]:
    """The rules an event's sentence names (by number), for links to them."""
    p = event.get("payload") or {}
    named: list[Any] = [p.get("by_rule")]
    if event["type"] in ("rule_changed", "rule_change_failed"):
        change = p.get("change") or {}
        named += [change.get("rule"), change.get("to"), (p.get("cause") or {}).get("rule")]
    elif event["type"] == "rule_code_aborted":
        named.append(p.get("rule"))
    elif event["type"] == "proposal_submitted":
        named += [c.get("rule") for c in p.get("changes") or [] if isinstance(c, dict)]
    return list(dict.fromkeys(str(r) for r in named if r not in (None, "")))


def concerns(event: Event, player: str) -> bool:
    p = event.get("payload") or {}
    return player in (event.get("actor"), p.get("player"), p.get("author"),
                      p.get("holder"), p.get("owner")) or player in (p.get("players") or [])


def tell(log: GameLog, words: Words, player: str | None,
         kinds: Iterable[str] | None, after_seq: int, limit: int | None,
         since: str | None, until: str | None,
         before_seq: int | None = None, viewer: str | None = None,
         officer: bool = False, private_vars: Iterable[str] = (),
         sealing: bool = True) -> list[dict[str, Any]]:
    """The chronicle's page of ``log`` (see :meth:`.reads.Reads.chronicle`) as the
    reader sees it (``viewer``: the player they sit as; the ``officer`` sees everything);
    ``before_seq`` with ``limit``: the last ``limit`` entries before that event.

    A page walks only the events it may show, from its edge (each told by a narrator
    that looks up what earlier events named in the log's index): its cost follows the
    page, not the game."""
    narrator = NarratorAt(words, log)
    wanted = expand_kinds(kinds)
    visible = private_filter(log, viewer, officer, private_vars, sealing)
    asked = {kinds} if isinstance(kinds, str) else {str(k) for k in kinds or ()}
    # Only the score: other variables' changes stay out unless asked for too.
    score_only = "score" in asked and not asked & {"variables", "var_set"}

    def shown(event: Event) -> bool:
        return not ((wanted is not None and event["type"] not in wanted) or
                    (wanted is None and bookkeeping(event)) or
                    (score_only and event["type"] == "var_set"
                     and event["payload"].get("name") not in words.score) or
                    (player is not None and not concerns(event, player)) or
                    not visible(event))

    def entry(event: Event) -> dict[str, Any] | None:
        text = narrator.tell(event)
        return {"seq": event["seq"], "time": event["time"], "kind": event["type"],
                "group": KIND_GROUP.get(event["type"], "other"),
                "actor": event["actor"], "text": text,
                # each rule the sentence names → its number now (where a link leads)
                "rules": {rule: number_now(log.renumbered, rule, event["seq"])
                          for rule in rules_named(event)}} if text else None

    events, out = log.events, []
    if before_seq is not None:  # counted back from ``before_seq``, newest first
        for index in range(log.position(before_seq) - 1, -1, -1):
            event = events[index]
            if event["seq"] <= after_seq or (limit is not None and len(out) >= limit):
                break
            if (until is not None and event["time"] > until) or (
                    since is not None and event["time"] < since) or not shown(event):
                continue
            told = entry(event)
            if told is not None:
                out.append(told)
        return out[::-1]
    for event in events[log.position(after_seq + 1):]:
        if since is not None and event["time"] < since:
            continue
        if until is not None and event["time"] > until:
            break
        told = entry(event) if shown(event) else None
        if told is not None:
            out.append(told)
            if limit is not None and len(out) >= limit:
                break
    return out

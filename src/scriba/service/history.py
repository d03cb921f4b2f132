"""The log told: the chronicle's filters and pages, each rule's revisions, the rules
compared between two dates, one report per period; and the small caches the reads keep.
Helpers of :mod:`.reads`: plain functions of events and words, no store, no lock."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from scriba.kernel.events import Event
from scriba.kernel.sealing import hidden
from scriba.kernel.state import GameState
from scriba.service.messages import translate
from scriba.service.narrate import Narrator, bookkeeping
from scriba.service.rulehistory import number_now, renumberings
from scriba.service.source import GameSource
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


class LogCache:
    """Logs of recently read games, bounded in events; the least recently read go first.

    Events are never changed once stored, so a cached prefix stays true; callers must
    not change the events they get."""

    def __init__(self, max_events: int = 200_000) -> None:
        self.max_events = max_events
        self._logs: OrderedDict[str, list[Event]] = OrderedDict()
        self._lock = threading.Lock()

    def events(self, source: GameSource, game_id: str) -> list[Event]:
        with self._lock:
            cached = self._logs.pop(game_id, None)
        if cached is None:
            log = source.events(game_id)
        else:
            after = cached[-1]["seq"] if cached else 0
            newer = source.events(game_id, after=after)
            log = cached + newer if newer else cached
        with self._lock:
            self._logs[game_id] = log
            total = sum(len(events) for events in self._logs.values())
            while total > self.max_events and len(self._logs) > 1:
                _, dropped = self._logs.popitem(last=False)
                total -= len(dropped)
        return log


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


def private_filter(events: list[Event], viewer: str | None, officer: bool,
                   private_vars: Iterable[str] = (),
                   sealing: bool = True) -> Callable[[Event], bool]:
    """Whether the reader (``viewer``, the player they sit as, or the ``officer``) may see
    an event of ``events``: everything but the refusals that are not theirs, the sealed
    moves of others not revealed yet (:mod:`scriba.kernel.sealing`; ``sealing`` False:
    no sealed action is in force, none is looked for) and the changes of others'
    ``private_vars`` (variables declared private)."""
    if officer:
        return lambda event: True
    secret = hidden(events) if sealing else {}
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
    joined = next((e["seq"] for e in events if e["type"] == "player_joined"
                   and (e.get("payload") or {}).get("player") == viewer), None)
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


def period_title(words: Words, name: str, value: Any) -> str:
    label = words.var(name)
    return f"{label[:1].upper()}{label[1:]} {words.show(name, value)}"


REPORT_KINDS = {"proposal_resolved", "rule_changed", "rule_change_failed", "winner_declared",
                "game_ended", "player_joined", "office_set"}


def period_reports_of(events: list[Event], state: GameState,
                    words: Words) -> list[dict[str, Any]]:
    name = words.period_variable(state.vars)
    narrator = Narrator(words)
    reports: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    values: dict[tuple[str, str], Any] = {}
    moved: dict[tuple[str, str], float] = {}

    def close(end: str) -> None:
        if current is None:
            return
        current["end"] = end
        current["scores"] = {
            player: {words.var(var): values.get((player, var)) for var in words.score}
            for player in players} if words.score else {}
        # the same, as a letter shows it: "Bruno: Gold 2100 N" (values by their display)
        current["standings"] = [f"{player}: " + ", ".join(
            f"{words.var(var)} {words.show(var, values.get((player, var)))}"
            for var in words.score) for player in players] if words.score else []
        for (player, var), delta in moved.items():
            if delta:
                sign = "+" if delta > 0 else ""
                current["lines"].append(translate(
                    "{player}: {label} {delta} (now {value}).", words.language, player=player,
                    label=words.var(var), delta=sign + words.show(var, delta),
                    value=words.show(var, values.get((player, var)))))
        moved.clear()
        reports.append(current)

    def open_(title: str, start: str) -> dict[str, Any]:
        return {"title": title, "start": start, "end": None, "lines": [], "scores": {}}

    players: list[str] = []

    pending: tuple[str, str] | None = None
    secret = hidden(events)  # a report is everyone's: sealed moves wait for their reveal
    for event in events:
        p = event.get("payload") or {}
        kind = event["type"]
        if event["seq"] in secret:
            narrator.note(event)
            continue
        lined = kind in REPORT_KINDS and not (
            kind == "rule_changed" and (p.get("cause") or {}).get("kind") == "initial")
        text = narrator.tell(event) if lined else ""
        if not lined:
            narrator.note(event)
        if name is not None and kind == "var_set" and p.get("player") is None \
                and p.get("name") == name and p.get("value") is not None:
            pending = (period_title(words, name, p.get("value")), event["time"])
        elif name is None and (current is None or current["start"][:10] != event["time"][:10]):
            pending = (event["time"][:10], event["time"])
        # A new period begins with the next command or deadline: what the rules do in
        # reaction to the command that ended a period (its scores) still belongs to it.
        primary = event["actor"] is not None or kind in ("timer_fired", "clock_advanced")
        if pending is not None and (primary or current is None or name is None):
            if current is None or pending[0] != current["title"]:
                close(pending[1])
                current = open_(*pending)
            pending = None
        if kind == "player_joined":
            if str(p["player"]) not in players:
                players.append(str(p["player"]))
            for var, value in (p.get("vars") or {}).items():
                values[(str(p["player"]), var)] = value
        if kind == "var_set" and p.get("player") is not None:
            # Only additions are told as moves; a value set outright is bookkeeping
            # (the round a player last acted in, a number chosen).
            key = (str(p["player"]), str(p["name"]))
            values[key] = p.get("value")
            if _is_number(p.get("delta")) and current is not None:
                moved[key] = moved.get(key, 0) + p["delta"]
        if current is None:
            current = open_(translate("Before the first period", words.language),
                            event["time"])
            current["ours"] = True  # our words, not the rules': a page marks no `lang`
        if lined and text:
            current["lines"].append(text)
            if kind == "proposal_resolved":  # a letter tells these with their votes
                current.setdefault("resolved", []).append(text)
        current.setdefault("first_seq", event["seq"])  # the events it holds, for a letter
        current["last_seq"] = event["seq"]
        if kind == "notice" and p.get("kind") in words.period_end and not current.get("ours"):
            # The rules end the period here (Anderwelt G.2(1): at the ZAT), not when the
            # next one begins: its report is due now. What follows, until the next period,
            # is kept apart under the same title.
            title = current["title"]
            close(event["time"])
            current = open_(title, event["time"])
            current["between"] = True
    close(state.time)
    if pending is not None and pending[0] != reports[-1]["title"]:
        reports.append(open_(*pending))
    if reports and reports[-1]["end"] == state.time and not state.ended:
        reports[-1]["end"] = None  # the period still running
    # the time after a period the rules ended, until the next begins, only if it holds news
    return [r for r in reports if r["lines"] or (r is reports[-1] and not r.get("between"))]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def tell(events: list[Event], narrator: Narrator, player: str | None,
         kinds: Iterable[str] | None, after_seq: int, limit: int | None,
         since: str | None, until: str | None,
         before_seq: int | None = None, viewer: str | None = None,
         officer: bool = False, private_vars: Iterable[str] = (),
         sealing: bool = True) -> list[dict[str, Any]]:
    """The chronicle's page of ``events`` (see :meth:`.reads.Reads.chronicle`) as the
    reader sees it (``viewer``: the player they sit as; the ``officer`` sees everything);
    ``before_seq`` with ``limit``: the last ``limit`` entries before that event."""
    wanted = expand_kinds(kinds)
    visible = private_filter(events, viewer, officer, private_vars, sealing)
    asked = {kinds} if isinstance(kinds, str) else {str(k) for k in kinds or ()}
    # Only the score: other variables' changes stay out unless asked for too.
    score_only = "score" in asked and not asked & {"variables", "var_set"}

    def shown(event: Event) -> bool:
        return not ((wanted is not None and event["type"] not in wanted) or
                    (wanted is None and bookkeeping(event)) or
                    (score_only and event["type"] == "var_set"
                     and event["payload"].get("name") not in narrator.words.score) or
                    (player is not None and not concerns(event, player)) or
                    not visible(event))

    if before_seq is not None:
        # A page counted back from ``before_seq``: the events it may show are chosen
        # without narrating (a cheap test each); only they are told, the earlier ones just
        # noted. Some tell nothing, so twice the page is told, more if that falls short.
        if until is not None:
            events = [e for e in events if e["time"] <= until]
        events = [e for e in events if e["seq"] < before_seq]
        chosen = [e for e in events if e["seq"] > after_seq and shown(e)
                  and (since is None or e["time"] >= since)]
        if limit is None or len(chosen) <= 2 * limit:
            out = _told(events, narrator, shown, after_seq, None, since, until)
            return out[-limit:] if limit else out
        window = 2 * limit
        while True:
            start = chosen[-window - 1]["seq"] if window < len(chosen) else after_seq
            out = _told(events, Narrator(narrator.words), shown, start, None, since, until)
            if len(out) >= limit or window >= len(chosen):
                return out[-limit:]
            window *= 2
    return _told(events, narrator, shown, after_seq, limit, since, until)


def _told(events: list[Event], narrator: Narrator, shown: Callable[[Event], bool],
          after_seq: int, limit: int | None, since: str | None,
          until: str | None) -> list[dict[str, Any]]:
    out = []
    renumbered = renumberings(events)
    # Earlier events still name the timers and assets that later ones refer to.
    for event in events:
        if event["seq"] <= after_seq or (since is not None and event["time"] < since):
            narrator.note(event)
            continue
        if until is not None and event["time"] > until:
            break
        if not shown(event):
            narrator.note(event)
            continue
        text = narrator.tell(event)
        if not text:
            continue
        out.append({"seq": event["seq"], "time": event["time"], "kind": event["type"],
                    "group": KIND_GROUP.get(event["type"], "other"),
                    "actor": event["actor"], "text": text,
                    # each rule the sentence names → its number now (where a link leads)
                    "rules": {rule: number_now(renumbered, rule, event["seq"])
                              for rule in rules_named(event)}})
        if limit is not None and len(out) >= limit:
            break
    return out

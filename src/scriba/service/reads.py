"""What interfaces read: actions a player may take, rules at a date, histories, proposals,
the chronicle and per-period reports. A mixin of :class:`~scriba.service.service.Service`.

Reads never append anything. The common ones (actions, status, proposals, the rules now)
work on the cached current state; reading the past replays the log up to that point.
"""

from __future__ import annotations

import copy
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from scriba.kernel import changes as rule_changes
from scriba.kernel.checking import CANONICAL_CHOICES, KIND_PARAMS
from scriba.kernel.events import Event, fold
from scriba.kernel.state import ACTIVE, GameState, natural_key
from scriba.kernel.timeutil import normalize
from scriba.service import errors
from scriba.service.messages import translate
from scriba.service.narrate import (
    Narrator,
    Words,
    base_words,
    bookkeeping,
    describe_outcome,
    label_in,
    show_value,
)
from scriba.service.summary import summarize


@dataclass
class ActionInfo:
    name: str
    kind: str
    who: list[str]
    params: dict[str, str]
    choices: dict[str, str] = field(default_factory=dict)
    help: str = ""
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GameReads:
    """Read-only views of a game; expects ``self.load``, ``self.store``, ``self.engine``,
    ``self.replay`` and ``self.now`` from the Service."""

    load: Any
    store: Any
    engine: Any
    replay: Any
    now: Any

    # --- the game -------------------------------------------------------------------
    def _game(self, game_id: str) -> GameState:
        state = self.load(game_id)  # an unknown game: errors.UnknownGame, from the store
        if not state.game_id:  # a snapshot-less miss: nothing was ever stored
            raise errors.UnknownGame(translate("There is no game {game}.", "en", game=game_id))
        return state

    def _log(self, game_id: str) -> list[Event]:
        """The whole log, for reading only: kept between calls (a log only grows), so a
        read fetches just the events appended since the last one."""
        cache = self.__dict__.get("_log_cache")
        if cache is None:
            cache = self.__dict__.setdefault("_log_cache", LogCache())
        return cache.events(self.store, game_id)

    def words(self, game_id: str, language: str | None = None,
              state: GameState | None = None) -> Words:
        """The game's own words: labels of variables and offices, vote words, labels."""
        state = state or self._game(game_id)
        words = base_words(state, language)
        decl = self.engine.declarations(state)
        for (_scope, name), variable in decl.variables.items():
            label = label_in(variable.get("label"), words.language)
            if label and name not in words.variables:
                words.variables[name] = label
        for name, office in decl.offices.items():
            label = label_in(office.get("label"), words.language)
            if label:
                words.offices.setdefault(name, label)
        for action in decl.actions.values():
            if action.get("kind") == "vote":
                for word, canonical in (action.get("choices") or {}).items():
                    words.choices.setdefault(str(canonical), str(word))
        return words

    # --- actions --------------------------------------------------------------------
    def actions_for(self, game_id: str, player: str | None) -> list[ActionInfo]:
        """What ``player`` may do now under the rules in force; nothing for a reader
        (``None``). A name that is not (or no longer) a player may only join."""
        state = self._game(game_id)
        if player is None or state.ended:
            return []
        is_player = player in state.players and state.players[player]["status"] == ACTIVE
        out = []
        for action in self._all_actions(state):
            if action.kind == "join":
                if not is_player and _allows(action.who, state, player, as_player=False):
                    out.append(action)
            elif _allows(action.who, state, player, as_player=is_player):
                out.append(action)
        return out

    def officer_actions(self, game_id: str) -> list[ActionInfo]:
        """Actions that only holders of an office may take, whoever holds it now."""
        state = self._game(game_id)
        return [a for a in self._all_actions(state)
                if any(w.startswith("office:") for w in a.who)]

    def _all_actions(self, state: GameState) -> list[ActionInfo]:
        decl = self.engine.declarations(state)
        out = []
        for name, action in decl.actions.items():
            kind = str(action.get("kind", "plain"))
            who = action.get("who", "player")
            who = [str(w) for w in who] if isinstance(who, list) else [str(who)]
            params = {**KIND_PARAMS.get(kind, {}), **(action.get("params") or {})}
            choices = {str(k): str(v) for k, v in (action.get("choices") or {}).items()} \
                if kind == "vote" else {}
            if kind == "vote":
                for canonical in CANONICAL_CHOICES:
                    choices.setdefault(canonical, canonical)
            out.append(ActionInfo(name=str(name), kind=kind, who=who,
                                  params={str(k): str(v) for k, v in params.items()},
                                  choices=choices, help=str(action.get("help", "")),
                                  rule=str(action.get("rule", ""))))
        return out

    # --- rulesets -------------------------------------------------------------------
    def rulesets(self) -> list[dict[str, Any]]:
        """The bundled rulesets a game can start from: ``id``, ``name``, ``language``."""
        from scriba.rulesets import list_rulesets

        return [{"id": r.id, "name": r.name, "language": r.language}
                for r in list_rulesets()]

    # --- state ----------------------------------------------------------------------
    def summary(self, game_id: str) -> dict[str, Any]:
        # Copies throughout: what a caller does with an answer never reaches the cached state.
        return copy.deepcopy(summarize(self._game(game_id)))

    def status(self, game_id: str, language: str | None = None) -> dict[str, Any]:
        state = self._game(game_id)
        words = self.words(game_id, language, state)
        timers = sorted(state.timers.values(), key=lambda t: (t["at"], t["id"]))
        try:
            text = self.engine.query(state, "status", {}, self.now(state))
        except Exception:  # noqa: BLE001 - a failing rule must not break a page
            text = None
        return {
            "game": state.game_id, "name": state.name, "ruleset": state.ruleset,
            "language": state.language,
            "period": _period_label(state, words),
            "scores": _scores(state, words),
            "text": text if isinstance(text, str) else (None if text is None
                                                       else show_value(text)),
            "deadline": timers[0]["at"] if timers else None,
            "deadline_name": timers[0]["name"] if timers else None,
            "clock": state.clock, "time": state.time, "now": self.now(state),
            "ended": state.ended, "winners": list(state.winners),
            "players": state.active_players(), "offices": dict(state.offices),
        }

    # --- rules ----------------------------------------------------------------------
    def _state_at(self, game_id: str, at: str | None, seq: int | None,
                  since: bool = False) -> GameState:
        """The state at a time or event; ``since``: a bare date is the start of that day,
        and a time before the game's start is its start."""
        state = self._game(game_id)
        if at is None and seq is None:
            return state
        if seq is not None:
            if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
                raise errors.InvalidInput(translate(
                    "An event number is a whole number from 1.", state.language), field="seq")
            if seq >= state.seq and at is None:
                return state
        limit = None
        if at is not None:
            limit = _time_arg(at, state.language, "at", end_of_day=not since)
            if limit is None:  # an empty value names no time
                raise errors.InvalidInput(translate(
                    "Give a date (write e.g. 2026-03-04 or 2026-03-04T10:00:00Z).",
                    state.language), field="since" if since else "at")
            start = self._log(game_id)[0]["time"]
            if since:
                limit = max(limit, start)
            if limit < start:
                raise errors.InvalidInput(translate(
                    "The game started on {start}; there were no rules on {at}.",
                    state.language, start=start, at=limit), field="at")
            if limit >= state.time and seq is None:
                return state
        # The fold reads the cached events and never changes them (as the service's
        # replay, without a second trip to the store).
        events = self._log(game_id)
        if seq is not None:
            events = [e for e in events[:seq] if e["seq"] <= seq]
        if limit is not None:
            events = [e for e in events if e["time"] <= limit]
        return fold(events)

    def rules_at(self, game_id: str, at: str | None = None,
                 seq: int | None = None) -> list[dict[str, Any]]:
        """Every rule as it stood at a date or after an event (now by default), in force
        first, each in natural order."""
        state = self._state_at(game_id, at, seq)
        rules = sorted(state.rules.values(),
                       key=lambda r: (not r["in_force"], natural_key(r["id"])))
        return [_rule_dict(r) for r in rules]

    def rule_history(self, game_id: str, rule_id: str) -> dict[str, Any]:
        """The rule now and each of its revisions: which change, when, by whose proposal,
        with the text and code it had after that change."""
        state = self._game(game_id)
        rule_id = str(rule_id)
        if rule_id not in state.rules:
            raise errors.NotFound(translate("There is no rule {rule} in this game.",
                                            state.language, rule=rule_id))
        records = _rule_records(self._log(game_id))
        current = rule_id
        lineage: list[dict[str, Any]] = []
        for record in reversed(records):
            if record["id"] != current:
                continue
            lineage.append(record)
            if record["change"] == "renumber":
                current = record["from"]
        lineage.reverse()
        revisions = []
        for record in lineage:
            revisions.append({k: v for k, v in record.items() if k not in ("from",)})
        return {**_rule_dict(state.rules[rule_id]), "revisions": revisions}

    def ruleset_diff(self, game_id: str, since: str, until: str | None = None
                     ) -> list[dict[str, Any]]:
        """Rules enacted, repealed or changed between two dates (from the start of
        ``since``'s day, or the game's, to the end of ``until``'s day, or now), with old
        and new text."""
        before = {r["id"]: _rule_dict(r)
                  for r in self._state_at(game_id, since, None, since=True).rules.values()}
        after = {r["id"]: r for r in self.rules_at(game_id, at=until)}
        out = []
        for rule_id in sorted(set(before) | set(after), key=natural_key):
            old, new = before.get(rule_id), after.get(rule_id)
            was = bool(old and old["in_force"])
            is_ = bool(new and new["in_force"])
            if not was and not is_:
                continue
            if not was:
                change = "enacted"
            elif not is_:
                change = "repealed"
            elif any(old[k] != new[k] for k in ("title", "text", "code", "attributes")):
                change = "changed"
            else:
                continue
            out.append({
                "id": rule_id, "change": change,
                "title": (new or old or {}).get("title", ""),
                "old_title": old["title"] if was and old else None,
                "old_text": old["text"] if was and old else None,
                "new_text": new["text"] if is_ and new else None,
                "old_code": old["code"] if was and old else None,
                "new_code": new["code"] if is_ and new else None,
                "old_attributes": old["attributes"] if was and old else None,
                "new_attributes": new["attributes"] if is_ and new else None,
                "old_revision": old["revision"] if was and old else None,
                "new_revision": new["revision"] if is_ and new else None,
            })
        return out

    # --- proposals ------------------------------------------------------------------
    def proposals(self, game_id: str, status: str | None = None) -> list[dict[str, Any]]:
        state = self._game(game_id)
        return [_proposal_dict(p) for p in state.proposals.values()
                if status is None or p["status"] == status]

    def proposal(self, game_id: str, ref: str | int) -> dict[str, Any]:
        state = self._game(game_id)
        return _proposal_dict(_find_proposal(state, ref))

    def dry_run(self, game_id: str, ref: str | int,
                language: str | None = None) -> dict[str, Any]:
        from scriba.service.dryrun import dry_run  # kept apart: it drives the kernel

        state = self._game(game_id)
        proposal = _find_proposal(state, ref)
        words = self.words(game_id, language, state)
        now = self.now(state)
        # Public pages show a dry run on every view: the same question about the same
        # state (to the minute) is answered once.
        key = (game_id, state.seq, proposal["number"], words.language, now[:16])
        cache = self.__dict__.get("_dry_runs")
        if cache is None:
            cache = self.__dict__.setdefault("_dry_runs", SmallCache(64))
        result = cache.get(key)
        if result is None:
            result = dry_run(self.engine, state, proposal["number"], now, words)
            cache.put(key, result)
        return copy.deepcopy(result)

    def describe_outcome(self, game_id: str, outcome: Any,
                         language: str | None = None) -> str:
        """The reply to a command, with the ruleset's own words (see narrate)."""
        if not outcome.accepted or outcome.state is None:
            return describe_outcome(outcome, language)
        state = outcome.state
        reply = describe_outcome(outcome, language, self.words(game_id, language, state))
        if state.ended:
            return reply
        try:  # what comes next, in the rules' own words
            status = self.engine.query(state, "status", {}, self.now(state))
        except Exception:  # noqa: BLE001 - a failing rule must not lose the reply
            status = None
        if isinstance(status, str) and status.strip():
            text = status.strip()
            reply += " " + (text if text.endswith((".", "!", "?")) else text + ".")
        return reply

    # --- the chronicle --------------------------------------------------------------
    def chronicle(self, game_id: str, language: str | None = None,
                  player: str | None = None, kinds: Iterable[str] | None = None,
                  after_seq: int = 0, limit: int | None = None, since: str | None = None,
                  until: str | None = None) -> list[dict[str, Any]]:
        """The log told as sentences: ``{seq, time, kind, group, actor, text}``.

        ``kinds`` are event types or groups (see ``CHRONICLE_GROUPS``: "proposals",
        "rules", "variables", "deadlines", …; "score": changes of the ruleset's score
        variables); a game variable's bookkeeping shows only when ``var_set`` or
        "variables" is asked for. ``player`` keeps what that player did or
        what concerns them; ``since``/``until`` (ISO times, e.g. a period's start and end)
        and ``after_seq``/``limit`` page through the log."""
        state = self._game(game_id)
        for name, value in (("after_seq", after_seq), ("limit", limit)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 0):
                raise errors.InvalidInput(translate(
                    "{name} must be a whole number from 0.", state.language, name=name),
                    field=name)
        if limit == 0:
            return []
        narrator = Narrator(self.words(game_id, language, state))
        wanted = _expand_kinds(kinds)
        asked = {kinds} if isinstance(kinds, str) else {str(k) for k in kinds or ()}
        # Only the score: other variables' changes stay out unless asked for too.
        score_only = "score" in asked and not asked & {"variables", "var_set"}
        since = _time_arg(since, state.language, "since", end_of_day=False)
        until = _time_arg(until, state.language, "until", end_of_day=True)
        out = []
        # Earlier events still name the timers and assets that later ones refer to.
        for event in self._log(game_id):
            if event["seq"] <= after_seq or (since is not None and event["time"] < since):
                narrator.note(event)
                continue
            if until is not None and event["time"] > until:
                break
            if (wanted is not None and event["type"] not in wanted) or \
                    (wanted is None and bookkeeping(event)) or \
                    (score_only and event["type"] == "var_set"
                     and event["payload"].get("name") not in narrator.words.score) or \
                    (player is not None and not _concerns(event, player)):
                narrator.note(event)
                continue
            text = narrator.tell(event)
            if not text:
                continue
            out.append({"seq": event["seq"], "time": event["time"], "kind": event["type"],
                        "group": KIND_GROUP.get(event["type"], "other"),
                        "actor": event["actor"], "text": text})
            if limit is not None and len(out) >= limit:
                break
        return out

    def period_reports(self, game_id: str, language: str | None = None
                       ) -> list[dict[str, Any]]:
        """One report per period: ``title``, ``start``, ``end`` (None while it runs),
        ``lines`` (proposals resolved, rules changed, values added to, winners, as
        sentences) and ``scores`` (player → the ruleset's score variables, by their label,
        at the period's end). Periods follow the first of the ruleset's ``period``
        variables the game has (``[vocabulary]`` in ruleset.toml); a game with none gets
        one report per calendar day."""
        state = self._game(game_id)
        words = self.words(game_id, language, state)
        return _period_reports(self._log(game_id), state, words)


# --- helpers ---------------------------------------------------------------------------

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

    def events(self, store: Any, game_id: str) -> list[Event]:
        with self._lock:
            cached = self._logs.pop(game_id, None)
        if cached is None:
            log = store.events(game_id)
        else:
            after = cached[-1]["seq"] if cached else 0
            newer = store.events(game_id, after=after) if after else store.events(game_id)
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


def _expand_kinds(kinds: Iterable[str] | None) -> set[str] | None:
    if not kinds:
        return None
    if isinstance(kinds, str):
        kinds = [kinds]
    wanted: set[str] = set()
    for kind in kinds:
        wanted.update(CHRONICLE_GROUPS.get(str(kind), (str(kind),)))
    return wanted


def _allows(who: list[str], state: GameState, player: str, as_player: bool) -> bool:
    for option in who:
        if option == "anyone" or (option == "player" and as_player):
            return True
        if option.startswith("office:") and state.offices.get(option[7:]) == player:
            return True
    return False


def _rule_dict(rule: dict[str, Any]) -> dict[str, Any]:
    return {"id": rule["id"], "title": rule["title"], "text": rule["text"],
            "code": rule["code"], "attributes": copy.deepcopy(rule["attributes"]),
            "revision": rule_changes.revision(rule), "in_force": rule["in_force"],
            "history": copy.deepcopy(rule["history"])}


def _rule_records(events: list[Event]) -> list[dict[str, Any]]:
    """One record per change of any rule, with the rule as it stood after that change."""
    rules: dict[str, dict[str, Any]] = {}
    records: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "game_created":
            for rule in event["payload"].get("rules") or []:
                rid = str(rule["id"])
                rules[rid] = {"id": rid, "title": rule.get("title", ""),
                              "text": rule.get("text", ""), "code": rule.get("code") or None,
                              "attributes": dict(rule.get("attributes") or {}),
                              "history": list(rule.get("history") or [{"change": "initial"}]),
                              "in_force": rule.get("in_force", True)}
                records.append(_record(rules[rid], event, "initial", {"kind": "initial"}))
        elif event["type"] == "rule_changed":
            change = event["payload"]["change"]
            cause = event["payload"].get("cause") or {}
            try:
                rid = rule_changes.apply_change(rules, copy.deepcopy(change), cause,
                                                event["time"])
            except Exception:  # noqa: BLE001 - the fold accepted it; never fail a read
                continue
            record = _record(rules[rid], event, change["type"], cause)
            if change["type"] == "renumber":
                record["from"] = str(change["rule"])
            records.append(record)
    return records


def _record(rule: dict[str, Any], event: Event, change: str,
            cause: dict[str, Any]) -> dict[str, Any]:
    return {"id": rule["id"], "revision": rule_changes.revision(rule), "seq": event["seq"],
            "time": event["time"], "change": change,
            "cause": {"kind": cause.get("kind"), "proposal": cause.get("proposal"),
                      "label": cause.get("label"), "author": cause.get("author"),
                      "rule": cause.get("rule")},
            "title": rule["title"], "text": rule["text"], "code": rule["code"],
            "attributes": dict(rule["attributes"]), "in_force": rule["in_force"]}


def _find_proposal(state: GameState, ref: str | int) -> dict[str, Any]:
    key = str(ref).strip()
    proposal = state.proposal_by_label(key) or state.proposals.get(key)
    if proposal is None:
        raise errors.NotFound(translate("There is no proposal {proposal}.", state.language,
                                        proposal=key[:80]))
    return proposal


def _proposal_dict(p: dict[str, Any]) -> dict[str, Any]:
    tally = p.get("tally") or {}
    reason = p.get("reason") or (tally.get("reason") if isinstance(tally, dict) else None)
    return copy.deepcopy({
        "number": p["number"], "label": p.get("label") or str(p["number"]),
        "title": p.get("title", ""), "text": p.get("text", ""), "author": p["author"],
        "status": p["status"], "reason": reason, "changes": p.get("changes") or [],
        "votes": {voter: v["choice"] for voter, v in p["votes"].items()},
        "tally": tally, "submitted": p.get("submitted"), "resolved": p.get("resolved"),
        "data": p.get("data") or {}})


def _concerns(event: Event, player: str) -> bool:
    p = event.get("payload") or {}
    return player in (event.get("actor"), p.get("player"), p.get("author"),
                      p.get("holder"), p.get("owner")) or player in (p.get("players") or [])


def _time_arg(value: Any, language: str, name: str, end_of_day: bool) -> Any:
    """An ISO time from a reader; a bare date means the start of that day, or its end
    where ``end_of_day`` (the rules as they stood that day, after its events)."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        moment = normalize(text)
    except (ValueError, TypeError, OverflowError):
        raise errors.InvalidInput(translate(
            "{value} is not a date (write e.g. 2026-03-04 or 2026-03-04T10:00:00Z).",
            language, value=text[:80]), field=name) from None
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return moment[:10] + "T23:59:59Z"
    return moment


def _period_label(state: GameState, words: Words) -> str | None:
    name = words.period_variable(state.vars)
    if name is None or state.vars.get(name) is None:
        return None
    return _period_title(words, name, state.vars[name])


def _period_title(words: Words, name: str, value: Any) -> str:
    label = words.var(name)
    return f"{label[:1].upper()}{label[1:]} {words.show(name, value)}"


def _scores(state: GameState, words: Words) -> dict[str, dict[str, Any]]:
    """Each active player's score variables, by their label (none declared: nothing)."""
    return {player: {words.var(var): state.players[player]["vars"].get(var)
                     for var in words.score}
            for player in state.active_players()} if words.score else {}


REPORT_KINDS = {"proposal_resolved", "rule_changed", "rule_change_failed", "winner_declared",
                "game_ended", "player_joined", "office_set"}


def _period_reports(events: list[Event], state: GameState,
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
    for event in events:
        p = event.get("payload") or {}
        kind = event["type"]
        lined = kind in REPORT_KINDS and not (
            kind == "rule_changed" and (p.get("cause") or {}).get("kind") == "initial")
        text = narrator.tell(event) if lined else ""
        if not lined:
            narrator.note(event)
        if name is not None and kind == "var_set" and p.get("player") is None \
                and p.get("name") == name and p.get("value") is not None:
            pending = (_period_title(words, name, p.get("value")), event["time"])
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
            if _number(p.get("delta")) and current is not None:
                moved[key] = moved.get(key, 0) + p["delta"]
        if current is None:
            current = open_(translate("Before the first period", words.language),
                            event["time"])
        if lined and text:
            current["lines"].append(text)
    close(state.time)
    if pending is not None and pending[0] != reports[-1]["title"]:
        reports.append(open_(*pending))
    if reports and reports[-1]["end"] == state.time and not state.ended:
        reports[-1]["end"] = None  # the period still running
    return [r for r in reports if r["lines"] or r is reports[-1]]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)

"""The checks of an imported game (:mod:`scriba.service.importing`), one event at a time:
:class:`Checker` folds every event into a scratch state while checking what the kernel
itself guarantees of a live log:

- each line is a JSON object ``{seq, type, time, actor, payload}`` of valid Unicode,
  nested at most :data:`MAX_DEPTH` deep, with no NaN or infinity;
- the first event creates the game, sequence numbers run 1, 2, 3… and time never goes
  back;
- every event type is known, and applies to the state the events before it made;
- actors are players (or office holders), except for refused commands and joins;
- players, proposals, votes, timers named by an event exist; a new player's name passes
  :mod:`~scriba.service.validation` (not a look-alike of another player);
- rule texts and code are within the limits; a rule change credited to a proposal is one
  of that proposal's changes (a swapped code is refused); a bundled rule whose text is
  the ruleset's keeps the ruleset's code.

A line a live game could not have written raises :class:`Forged`, saying why.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scriba.kernel.changes import normalize_change
from scriba.kernel.errors import Refused
from scriba.kernel.events import apply_event
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import normalize
from scriba.rulesets import RulesetError, load_ruleset
from scriba.service import validation
from scriba.service.errors import InvalidInput

MAX_LINE_BYTES = 8 * 2**20      # one event (a game_created with a large ruleset)
MAX_DEPTH = 64                  # nesting of lists and dicts in one event
_FIELDS = {"seq", "type", "time", "actor", "payload"}
_TIMER_ID = re.compile(r"t\d{1,12}")
# Events whose actor need not be a player: refused commands keep whoever sent them, and
# a join is made by the newcomer.
_ANY_ACTOR = {"command_refused", "player_joined"}


class Forged(Exception):
    """A line that a live game could not have written; the message says why."""


class Checker:
    """Folds events one at a time into a scratch state, refusing what a live game could not
    have produced."""

    def __init__(self) -> None:
        self.state = GameState()
        self.language = "en"
        self.bundled: dict[str, dict[str, Any]] = {}

    def feed(self, line: bytes) -> None:
        if len(line) > MAX_LINE_BYTES:
            raise Forged(f"the event is longer than {MAX_LINE_BYTES} bytes")
        event = _parse(line)
        expected = self.state.seq + 1
        if event["seq"] != expected:
            raise Forged(f"event {expected} is missing or out of order "
                          f"(found {event['seq']})")
        if (expected == 1) != (event["type"] == "game_created"):
            raise Forged("an exported game starts with its game_created event, and has "
                          "only one")
        if event["time"] < self.state.time:
            raise Forged(f"its time {event['time']} is before the previous event's")
        self._check(event)
        try:
            apply_event(self.state, event)
        except Refused as refusal:
            raise Forged(f"it does not apply to the game ({refusal.message_id} "
                          f"{refusal.params})") from None
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise Forged(f"it does not apply to the game ({type(error).__name__}: "
                          f"{str(error)[:200]})") from None

    # --- the invariants, before the event is applied -----------------------------------
    def _check(self, event: dict[str, Any]) -> None:
        kind, p, actor = event["type"], event["payload"], event["actor"]
        state = self.state
        if kind == "game_created":
            self._check_created(p)
            return
        if actor is not None and kind not in _ANY_ACTOR and actor not in state.players \
                and actor not in state.offices.values():
            raise Forged(f"its actor {actor!r} is not a player of the game")
        if kind == "player_joined":
            self._check_joined(p, actor)
        if "player" in p and p["player"] is not None and kind not in ("player_joined",) \
                and kind != "command_refused" and p["player"] not in state.players:
            raise Forged(f"there is no player {p['player']!r}")
        if kind in ("vote_cast", "vote_withdrawn", "proposal_updated", "proposal_resolved",
                    "changes_due") and ("proposal" in p or kind != "changes_due"):
            proposal = state.proposals.get(str(p.get("proposal")))
            if proposal is None:
                raise Forged(f"there is no proposal {p.get('proposal')!r}")
            if kind == "proposal_resolved" and proposal["status"] != "open":
                raise Forged(f"proposal {proposal['number']} was already resolved")
        if kind == "proposal_submitted":
            self._check_proposal(p)
        if kind == "rule_changed":
            self._check_change(p)
        if kind == "timer_set":
            if not isinstance(p.get("id"), str) or not _TIMER_ID.fullmatch(p["id"]) \
                    or p["id"] in state.timers:
                raise Forged(f"bad or repeated timer id {p.get('id')!r}")
            _check_time(p.get("at"), "the timer's time")
        if kind in ("timer_fired", "timer_cancelled") and p.get("id") not in state.timers:
            raise Forged(f"there is no timer {p.get('id')!r}")
        if kind == "office_set" and p.get("holder") is not None and \
                p["holder"] not in state.players and "by_rule" in p:
            raise Forged(f"the holder {p['holder']!r} is not a player")
        if kind == "asset_set" and p.get("owner") is not None and \
                p["owner"] not in state.players:
            raise Forged(f"the owner {p['owner']!r} is not a player")
        if kind.startswith("case_"):
            self._check_case(kind, p)
        if kind == "winner_declared":
            winners = p.get("players")
            if not isinstance(winners, list) or any(w not in state.players for w in winners):
                raise Forged(f"the winners {winners!r} are not players")

    def _check_case(self, kind: str, p: dict[str, Any]) -> None:
        """A case is opened once, under a number of its own; its other events name it."""
        number = p.get("number") if kind == "case_opened" else p.get("case")
        if not isinstance(number, int) or isinstance(number, bool):
            raise Forged(f"a case's number must be a whole number, not {number!r}")
        if (kind == "case_opened") == (str(number) in self.state.cases):
            raise Forged(f"case {number} is opened twice" if kind == "case_opened"
                          else f"there is no case {number}")
        if kind == "case_assigned" and p.get("judge") is not None and \
                p["judge"] not in self.state.players and \
                p["judge"] not in self.state.offices.values():
            raise Forged(f"the judge {p['judge']!r} is neither a player nor an office's holder")

    def _check_created(self, p: dict[str, Any]) -> None:
        for field, kind in (("game_id", str), ("ruleset", str), ("rules", list),
                            ("seed", int)):
            if not isinstance(p.get(field), kind):
                raise Forged(f"game_created needs {field} ({kind.__name__})")
        self.language = p.get("language") if isinstance(p.get("language"), str) else "en"
        try:
            validation.game_id(p["game_id"], self.language)
            bundled = {r["id"]: r for r in load_ruleset(p["ruleset"]).rules}
        except InvalidInput as error:
            raise Forged(str(error)) from None
        except RulesetError:
            bundled = {}
        for rule in p["rules"]:
            if not isinstance(rule, dict) or not isinstance(rule.get("id"), str | int):
                raise Forged("each rule needs an id")
            try:
                validation.rule(rule, self.language)
            except InvalidInput as error:
                raise Forged(f"rule {rule['id']}: {error}") from None
            for key in ("title", "text", "code"):
                if rule.get(key) is not None and not isinstance(rule[key], str):
                    raise Forged(f"rule {rule['id']}: {key} must be text")
            original = bundled.get(str(rule["id"]))
            if original and original.get("text") == rule.get("text") and \
                    (original.get("code") or None) != (rule.get("code") or None):
                raise Forged(f"rule {rule['id']} has the ruleset's text but not its code")

    def _check_joined(self, p: dict[str, Any], actor: str | None) -> None:
        player = p.get("player")
        if actor is not None and actor != player:
            raise Forged(f"{actor!r} cannot make {player!r} join")
        try:
            validation.new_player(player, self.state.players, self.language)
        except InvalidInput as error:
            raise Forged(str(error)) from None
        if not isinstance(p.get("vars", {}), dict):
            raise Forged("a player's variables must be a table")

    def _check_proposal(self, p: dict[str, Any]) -> None:
        if not isinstance(p.get("number"), int) or str(p["number"]) in self.state.proposals:
            raise Forged(f"bad or repeated proposal number {p.get('number')!r}")
        if p.get("author") not in self.state.players:
            raise Forged(f"the author {p.get('author')!r} is not a player")
        if not isinstance(p.get("changes"), list):
            raise Forged("a proposal's changes must be a list")
        for change in p["changes"]:
            self._check_change_text(change)

    def _check_change(self, p: dict[str, Any]) -> None:
        change, cause = p.get("change"), p.get("cause") or {}
        if not isinstance(change, dict) or not isinstance(cause, dict):
            raise Forged("a rule change and its cause must be tables")
        self._check_change_text(change)
        if cause.get("kind") == "proposal":
            proposal = self.state.proposals.get(str(cause.get("proposal")))
            if proposal is None:
                raise Forged(f"the change is credited to proposal {cause.get('proposal')!r}, "
                              "which does not exist")
            if not any(_same_change(change, own) for own in proposal["changes"]):
                raise Forged(f"the change to rule {change.get('rule')} is not one of "
                              f"proposal {proposal['number']}'s changes")
            if cause.get("author") is not None and cause["author"] != proposal["author"]:
                raise Forged("the change is credited to another author than the "
                              "proposal's")

    def _check_change_text(self, change: Any) -> None:
        try:
            body = normalize_change(change)
        except Refused as refusal:
            raise Forged(f"malformed rule change ({refusal.message_id})") from None
        try:
            validation.rule(body, self.language)
        except InvalidInput as error:
            raise Forged(str(error)) from None


def _same_change(stored: dict[str, Any], proposed: Any) -> bool:
    """Whether ``stored`` (as applied) is ``proposed`` (as submitted); an enact may have
    been given its rule number when applied."""
    try:
        proposed = normalize_change(proposed)
    except Refused:
        return False
    if proposed == stored:
        return True
    return stored.get("type") == "enact" and not proposed.get("rule") and \
        {k: v for k, v in stored.items() if k != "rule"} == \
        {k: v for k, v in proposed.items() if k != "rule"}


def _parse(line: bytes) -> dict[str, Any]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Forged(f"it is not UTF-8 (byte {error.start})") from None
    try:
        event = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise Forged(f"it is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as error:
        raise Forged(f"it is not JSON ({error})") from None
    if not isinstance(event, dict) or set(event) != _FIELDS:
        raise Forged("an event is a JSON object with exactly seq, type, time, actor, "
                      "payload")
    if not isinstance(event["seq"], int) or isinstance(event["seq"], bool) or \
            not isinstance(event["type"], str) or not isinstance(event["payload"], dict) or \
            not (event["actor"] is None or isinstance(event["actor"], str)):
        raise Forged("seq must be a number, type text, payload a table, actor text or null")
    _check_time(event["time"], "its time")
    _check_plain(event, 0)
    return event


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _check_time(value: Any, what: str) -> None:
    try:
        ok = isinstance(value, str) and normalize(value) == value
    except (ValueError, TypeError, OverflowError):
        ok = False
    if not ok:
        raise Forged(f"{what} {value!r} is not a UTC time like 2026-03-01T10:00:00Z")


def _check_plain(value: Any, depth: int) -> None:
    """Valid Unicode everywhere (JSON's \\ud800 escapes make lone surrogates) and bounded
    nesting."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Forged("it holds text that is not valid Unicode") from None
        return
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            raise Forged(f"it is nested more than {MAX_DEPTH} levels deep")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str):
                _check_plain(key, depth)
            _check_plain(item, depth + 1)

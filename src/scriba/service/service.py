"""The one entry point of every interface: commands in, events out.

Each call loads the game (latest snapshot plus later events), fires the timers the clock
has passed, lets the kernel decide, and appends the resulting events in one transaction.
A refused command is recorded too (``command_refused``, with the raw input) so nothing a
player sent is lost; it changes no state.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scriba.kernel.engine import Command, Engine
from scriba.kernel.errors import Refused
from scriba.kernel.events import Event, apply_event, fold, make_event
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import add_seconds, iso, normalize
from scriba.rulecode.host import SandboxHost
from scriba.rulesets import Ruleset, load_ruleset
from scriba.service import validation
from scriba.service.errors import GameExists, InvalidInput
from scriba.service.errors import UnknownGame as NoSuchGame
from scriba.service.messages import refusal_text, translate
from scriba.service.reads import GameReads
from scriba.store.eventstore import Conflict, EventStore, UnknownGame

if TYPE_CHECKING:
    from scriba.service.accounts import Accounts

DEFAULT_DB = "sqlite:///scriba.db"
SNAPSHOT_EVERY = 250
_RETRIES = 5


def default_db_url() -> str:
    return os.environ.get("SCRIBA_DB", DEFAULT_DB)


@dataclass
class Outcome:
    accepted: bool
    message: str = ""
    events: list[Event] = field(default_factory=list)
    state: GameState | None = None


class Service(GameReads):
    def __init__(self, db_url: str | None = None, host: SandboxHost | None = None,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        self.store = EventStore(db_url or default_db_url())
        self.host = host or SandboxHost()
        self.engine = Engine(self.host)
        self.snapshot_every = snapshot_every
        self._states: dict[str, GameState] = {}
        self._commit_listeners: list[Any] = []

    def add_commit_listener(self, listener: Any) -> None:
        """Call ``listener(connection, game_id, events, outcome)`` inside the transaction
        that appends a decision's events, so what it writes commits with them or not at all."""
        self._commit_listeners.append(listener)

    @cached_property
    def accounts(self) -> Accounts:
        """People and their seats, invitations and API tokens (:mod:`.accounts`)."""
        from scriba.service.accounts import Accounts
        return Accounts(self)

    def close(self) -> None:
        self.host.pool.close()
        self.store.close()

    # --- games --------------------------------------------------------------------------
    def create_game(self, ruleset: str | Ruleset, *, game_id: str | None = None,
                    name: str | None = None, seed: int = 0, start: str | None = None,
                    players: list[Any] | None = None, offices: dict[str, str] | None = None,
                    settings: dict[str, Any] | None = None, clock: str = "simulated",
                    rules: list[dict[str, Any]] | None = None) -> GameState:
        """Create a game from a ruleset; ``players`` default to the ruleset's initial ones."""
        ruleset = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
        game_id, name, players = validation.new_game(ruleset.language, game_id, name, players,
                                                     rules)
        game_id = game_id or f"{ruleset.id}-{uuid.uuid4().hex[:8]}"
        payload = ruleset.game_payload(game_id, name or game_id, seed, clock, settings)
        if rules is not None:
            payload["rules"] = rules
        initial = ruleset.initial
        spec = {
            "game": payload,
            "players": players if players is not None else initial.get("players", []),
            "offices": {**(initial.get("offices") or {}), **(offices or {})},
            "vars": initial.get("vars") or {},
        }
        start = normalize(start) if start else iso(datetime.now(UTC))
        try:
            state, events = self.engine.create(spec, start)
        except Refused as refusal:
            raise InvalidInput(refusal_text(refusal, ruleset.language)) from None
        try:
            self.store.create_game(game_id, payload["name"], ruleset.id, events)
        except Conflict:
            raise GameExists(validation.game_exists(game_id, ruleset.language)) from None
        self._states[game_id] = state
        return state

    def games(self) -> list[dict[str, Any]]:
        return self.store.games()

    def load(self, game_id: str) -> GameState:
        """Current state: the cached one or the latest snapshot, plus any later events."""
        state = self._states.get(game_id)
        if state is None:
            snapshot = self.store.latest_snapshot(game_id)
            state = GameState.from_dict(snapshot[1]) if snapshot else GameState()
        try:
            later = self.store.events(game_id, after=state.seq)
        except UnknownGame:
            raise NoSuchGame(validation.no_game(game_id)) from None
        for event in later:
            apply_event(state, event)
        self._states[game_id] = state
        return state

    def replay(self, game_id: str, upto_seq: int | None = None,
               upto_time: str | None = None) -> GameState:
        """The state rebuilt from the whole log, optionally as it stood at a past point."""
        events = self.store.events(game_id, upto=upto_seq)
        if upto_time is not None:
            limit = normalize(upto_time)
            events = [e for e in events if e["time"] <= limit]
        return fold(events)

    def log(self, game_id: str) -> list[Event]:
        return self.store.events(game_id)

    def now(self, state: GameState) -> str:
        if state.clock == "real":
            return max(iso(datetime.now(UTC)), state.time)
        return state.time

    # --- commands -----------------------------------------------------------------------
    def perform(self, game_id: str, actor: str | None, action: str,
                args: dict[str, Any] | None = None, at: str | None = None,
                channel: str = "api", raw: str | None = None,
                request_id: str | None = None) -> Outcome:
        """Perform an action as a player (or officer); refused commands are recorded.

        ``request_id`` names the client's request (a letter's Message-ID, a form's token):
        the same id again returns the first outcome and records nothing new.
        """
        actor, action, args = validation.command_for(self.load(game_id), actor, action, args)
        raw = validation.raw(raw) if raw is not None else json.dumps(
            {"actor": actor, "action": action, "args": args}, ensure_ascii=False, default=str)
        inbound = self.store.keep_inbound(channel, raw, game_id)
        return self._with_retries(game_id, lambda state, now: self._decide(
            state, Command(actor, action, args), now, raw), at, inbound)

    def _decide(self, state: GameState, command: Command, now: str,
                raw: str) -> tuple[list[Event], Outcome]:
        fired = self.engine.fire_due_timers(state, now)
        current = fold(fired, state.copy()) if fired else state
        try:
            events = self.engine.handle(current, command, now)
            return fired + events, Outcome(True, "", events)
        except Refused as refusal:
            message = refusal_text(refusal, state.language)
            reason = refusal.message_id
        except Exception as error:  # noqa: BLE001 - a fault of ours must not lose the input
            message = translate("internal_error", state.language, error=f"{error!r}"[:300])
            reason = "internal_error"
        refused = make_event("command_refused", now, command.actor, action=command.action,
                             args=command.args, raw=raw, message=message, reason=reason)
        return fired + [refused], Outcome(False, message, [refused])

    def advance(self, game_id: str, to: str | None = None, by: int | None = None) -> Outcome:
        """Move a game's clock; every timer passed fires once, in order."""
        def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
            events = self.engine.advance(state, now)
            return events, Outcome(True, "", events)
        if by is not None:
            to = add_seconds(self.load(game_id).time, by)
        return self._with_retries(game_id, decide, to)

    def tick(self, game_id: str) -> Outcome:
        """Fire whatever timers are due now (for a real-clock game's scheduler)."""
        return self._with_retries(game_id, lambda state, now: (
            (events := self.engine.fire_due_timers(state, now)), Outcome(True, "", events)), None)

    def add_player(self, game_id: str, name: str, at: str | None = None) -> Outcome:
        raw_name = name
        def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
            name = validation.new_player(raw_name, state.players, state.language)
            if state.ended:
                return [], Outcome(False, translate("game_ended", state.language))
            if name in state.players and state.players[name]["status"] == "active":
                message = translate("already_player", state.language, player=name)
                return [], Outcome(False, message)
            events = self.engine.admit(state, name, now)
            return events, Outcome(True, "", events)
        return self._with_retries(game_id, decide, at)

    def query(self, game_id: str, name: str, args: dict[str, Any] | None = None) -> Any:
        state = self.load(game_id)
        return self.engine.query(state, name, args or {}, self.now(state))

    def _with_retries(self, game_id: str, decide: Any, at: str | None,
                      inbound: int | None = None) -> Outcome:
        for _ in range(_RETRIES):
            state = self.load(game_id)
            now = normalize(at) if at else self.now(state)
            if now < state.time:
                now = state.time  # the log never goes back in time
            events, outcome = decide(state, now)
            numbered = _number(events, state.seq)
            mark = None if inbound is None else (
                inbound, "accepted" if outcome.accepted else "refused", outcome.message)
            try:
                self.store.append(game_id, numbered, mark, lambda connection: [
                    listener(connection, game_id, numbered, outcome)
                    for listener in self._commit_listeners])
            except Conflict:
                self._states.pop(game_id, None)
                continue
            before = state.seq
            new_state = fold(numbered, state)
            self._states[game_id] = new_state
            self._maybe_snapshot(game_id, before, new_state)
            outcome.state = new_state
            return outcome
        raise Conflict(f"game {game_id} is too busy; try again")

    def _maybe_snapshot(self, game_id: str, before: int, state: GameState) -> None:
        if state.seq // self.snapshot_every > before // self.snapshot_every:
            self.store.save_snapshot(game_id, state.seq, state.to_json())

    # --- export and import --------------------------------------------------------------
    def export_game(self, game_id: str) -> Iterable[str]:
        for event in self.store.events(game_id):
            yield json.dumps(event, ensure_ascii=False, sort_keys=True)

    def import_game(self, source: Any, game_id: str | None = None) -> GameState:
        """Import an exported game (a path, a binary file or lines), checked whole before
        anything is written (:mod:`scriba.service.importing`); all or nothing."""
        from scriba.service.importing import import_game

        game_id = import_game(self, source, game_id)
        self._states.pop(game_id, None)
        return self.load(game_id)


def _number(events: list[Event], after: int) -> list[Event]:
    return [{**event, "seq": after + i} for i, event in enumerate(events, start=1)]

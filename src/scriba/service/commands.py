"""Commands: the games' commands and lifecycle — created, performed, admitted, advanced,
ticked, exported and imported — each decided and recorded through the one write path
(:mod:`scriba.service.writepath`, whose :class:`~.writepath.WritePath` Commands extends).
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from scriba.kernel.errors import Refused
from scriba.kernel.events import Event
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import add_seconds, iso, normalize
from scriba.rulesets import Ruleset, load_ruleset
from scriba.service import rules_letter, validation
from scriba.service.errors import GameExists, InvalidInput
from scriba.service.inputs import Outcome
from scriba.service.listing import listing, next_due
from scriba.service.messages import refusal_text
from scriba.service.writepath import (  # where callers have always found them
    IDLE_STATE_S,
    MAX_REQUEST_ID,
    SNAPSHOT_EVERY,
    CommitListener,
    WritePath,
)

__all__ = ["IDLE_STATE_S", "MAX_REQUEST_ID", "SNAPSHOT_EVERY", "CommitListener", "Commands"]

log = logging.getLogger("scriba.service")


class Commands(WritePath):
    """Decide and record: every write of a game goes through here (see the module's
    docstring). Built by :func:`scriba.service.assembly.open_service`, which owns the
    store and the host it is given and registers the commit listeners."""

    # --- games --------------------------------------------------------------------------
    def create_game(self, ruleset: str | Ruleset, *, game_id: str | None = None,
                    name: str | None = None, seed: int = 0, start: str | None = None,
                    players: list[Any] | None = None, offices: dict[str, str] | None = None,
                    settings: dict[str, Any] | None = None, clock: str = "simulated",
                    rules: list[dict[str, Any]] | None = None,
                    cases: list[dict[str, Any]] | None = None) -> GameState:
        """Create a game from a ruleset; ``players`` default to the ruleset's initial ones;
        ``cases``: closed cases the game starts with (an import's precedents)."""
        ruleset = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
        game_id, name, players = validation.new_game(ruleset.language, game_id, name, players,
                                                     rules)
        game_id = game_id or f"{ruleset.id}-{uuid.uuid4().hex[:8]}"
        payload = ruleset.game_payload(game_id, name or game_id, seed, clock, settings)
        if rules is not None:
            payload["rules"] = rules
        if cases:
            payload["cases"] = cases
        initial = ruleset.initial
        spec = {
            "game": payload,
            "players": players if players is not None else initial.get("players", []),
            "offices": {**(initial.get("offices") or {}), **(offices or {})},
            "vars": initial.get("vars") or {},
        }
        start = normalize(start) if start else iso(datetime.now(UTC))
        if self.store.has_game(game_id):
            raise GameExists(validation.game_exists(game_id, ruleset.language))
        try:
            state, events = self.engine.create(spec, start)
        except Refused as refusal:
            raise InvalidInput(refusal_text(refusal, ruleset.language)) from None
        with self._lock(game_id):
            self.store.create_game(game_id, payload["name"], ruleset.id, events,  # GameExists
                                   next_due(state), listing(state))
            self._states[game_id] = state
        return state

    def games(self, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        return self.store.games(limit, offset)

    def events(self, game_id: str, after: int = 0,
               upto: int | None = None) -> list[Event]:
        """The stored events after ``after`` (all by default), up to ``upto`` if given."""
        return self.store.events(game_id, after=after, upto=upto)

    def latest_snapshot(self, game_id: str) -> tuple[int, dict[str, Any]] | None:
        """The latest stored snapshot (seq, state dict): where the reads' states start."""
        return self.store.latest_snapshot(game_id)

    # --- commands -----------------------------------------------------------------------
    def perform(self, game_id: str, actor: str | None, action: str,
                args: dict[str, Any] | None = None, at: str | None = None,
                channel: str = "api", raw: str | None = None,
                request_id: str | None = None,
                letter: dict[str, Any] | None = None) -> Outcome:
        """Perform an action as a player (or officer); refused commands are recorded.

        ``letter``: the letter the command came in with others (an e-mail, a form's
        submission), ``{"id": KEY, "commands": [{"action", "args"}, ...]}`` in order; the
        rules see it as ``command["letter"]`` (:func:`.validation.letter`).

        ``request_id`` (the client's key, unique per game and acting player): the same
        id again with the same command returns the first outcome with ``repeated=True``
        and records nothing new; with another command (action or arguments) it raises
        :class:`~.errors.RequestIdReused` and records nothing.
        """
        actor, action, args = validation.command_for(self._validating(game_id, actor), actor,
                                                     action, args)
        raw = validation.raw(raw) if raw is not None else None
        command = {"op": "perform", "actor": actor, "action": action, "args": args, "at": at}
        if letter is not None:
            command["letter"] = rules_letter.letter(letter)
        return self._submit(game_id, command, channel, raw, request_id)

    def _validating(self, game_id: str, actor: Any) -> GameState:
        """The state a command's input is checked against before it is kept: the cached one
        when it already seats ``actor`` (the language never changes and players are never
        removed, so a fresher read would check the same), else the state read anew. The
        decision itself is taken on the state caught up under the lock."""
        state = self._states.get(game_id)
        if state is not None and (actor is None or (isinstance(actor, str)
                                                    and actor in state.players)):
            return state
        return self.load(game_id)

    def add_player(self, game_id: str, name: str, at: str | None = None,
                   request_id: str | None = None, channel: str = "api",
                   raw: str | None = None) -> Outcome:
        """Admit a player (the officer's act); recorded and idempotent like :meth:`perform`."""
        state = self.load(game_id)
        name = validation.new_player(name, state.players, state.language)
        raw = validation.raw(raw) if raw is not None else None
        command = {"op": "add_player", "name": name, "at": at}
        return self._submit(game_id, command, channel, raw, request_id)

    def advance(self, game_id: str, to: str | None = None, by: int | None = None) -> Outcome:
        """Move a game's clock; every timer passed fires once, in order."""
        def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
            events = self.engine.advance(state, now)
            return events, Outcome(True, "", events)
        if by is not None:
            to = add_seconds(self.load(game_id).time, by)
        return self._write(game_id, decide, to)

    def tick(self, game_id: str) -> Outcome:
        """Fire whatever timers are due now (for a real-clock game's scheduler)."""
        return self._write(game_id, lambda state, now: (
            (events := self.engine.fire_due_timers(state, now)), Outcome(True, "", events)), None)

    def tick_due(self) -> dict[str, int]:
        """Fire the due timers of the real-clock games (the scheduler of ``scriba serve``
        and ``scriba tick``): game id → events appended. Only the games the database names
        as due are read (their rows hold their next deadline); one that fails is logged
        and left for the next round. States idle for a while are let go meanwhile."""
        self.evict_idle()
        self.host.pool.reap()  # rule workers started for a busy moment that has passed
        fired: dict[str, int] = {}
        for game_id in self.store.due_games(iso(datetime.now(UTC))):
            try:
                with self._lock(game_id):
                    count = len(self.tick(game_id).events)
            except Exception:  # noqa: BLE001 - one broken game must not stop the others
                log.exception("ticking %s failed; trying again next round", game_id)
                continue
            if count:
                fired[game_id] = count
        return fired

    # --- export and import --------------------------------------------------------------
    def export_game(self, game_id: str) -> Iterable[str]:
        for event in self.store.events(game_id):
            yield json.dumps(event, ensure_ascii=False, sort_keys=True)

    def import_game(self, source: Any, game_id: str | None = None,
                    name: str | None = None) -> GameState:
        """Import an exported game (a path, a binary file or lines), checked whole before
        anything is written (:mod:`scriba.service.importing`); all or nothing. ``name``:
        the copy's (default: the file's, or "… (copy)" if a game is called so already)."""
        from scriba.service.importing import import_game

        game_id = import_game(self.store, source, game_id, name=name)
        with self._lock(game_id):
            self._states.pop(game_id, None)
            self._index(game_id)
            return self.load(game_id)


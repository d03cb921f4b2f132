"""The one entry point of every interface: commands in, events out.

The write path, whole (:meth:`Service._write`): take the game's lock, catch up, decide,
commit the input, its events and the commit listeners' rows in one transaction, answer.

* **One writer per game.** The game's lock is held from the first read to the commit: an
  in-process lock per game (threads), then the store's (a ``flock`` of the game's own file
  beside the database on SQLite, ``pg_advisory_xact_lock`` on PostgreSQL). Nobody else
  writes the game meanwhile, so only the events after the cached state's seq are read,
  there is nothing to retry and no command fails for contention. Games do not share a
  lock: a slow rule in one game never delays another (on SQLite the game is read in a
  short read transaction and decided holding no database lock; SQLite's single write
  lock is taken only to append).
* **Lock order** (no cycle, so no deadlock however many writers and games): the
  in-process lock, the game's file lock, a connection from the pool, then (SQLite, to
  append) the database's writer lock. Nothing waits for the game's file lock holding a
  connection, and nothing holding the writer lock waits for a connection. On PostgreSQL
  the advisory lock is taken on the transaction's own connection, after the in-process
  lock: one connection per game at most waits for it.
* **Exactly once.** The input is inserted already decided (its ``inbound`` row with the
  outcome) in the transaction that appends its events, so no crash leaves it half done.
  A request id is the player's own: unique per (game, player, id), the player being the
  one the command acts as ("" for the officer's). Seen before with the same command, the
  first outcome is answered and nothing is recorded (``repeated``); with another command
  it is refused (:class:`~.errors.RequestIdReused`). Rows kept and never decided (by an
  earlier version's queue, or written outside this path) are decided by their retry or
  by :meth:`Service.recover`, to be called once at start.
* A refused command is recorded too (``command_refused``, with the raw input) so nothing a
  player sent is lost; it changes no state. A commit that fails (a listener, say) is
  rolled back and the command recorded as refused (``internal_error``) instead.
* Snapshots are written off the command path, by a background thread with its own
  connection, folding the previous snapshot and the events since, when the game is quiet
  (:mod:`scriba.service.snapshots`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scriba.kernel.engine import Command, Engine
from scriba.kernel.errors import Refused
from scriba.kernel.events import Event, apply_event, fold, make_event
from scriba.kernel.journal import trial
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import add_seconds, iso, normalize
from scriba.rulecode.host import SandboxHost
from scriba.rulesets import Ruleset, load_ruleset
from scriba.service import validation
from scriba.service.errors import (
    GameExists,
    InvalidInput,
    RequestIdReused,
    ServiceError,
)
from scriba.service.messages import refusal_text, translate
from scriba.service.reads import GameReads
from scriba.service.snapshots import SnapshotWriter
from scriba.store.bulk import collector_paused
from scriba.store.database import is_memory
from scriba.store.eventstore import EventStore, GameWrite, request_owner

if TYPE_CHECKING:
    from scriba.service.accounts import Accounts

DEFAULT_DB = "sqlite:///scriba.db"
log = logging.getLogger("scriba.service")
SNAPSHOT_EVERY = 250
MAX_REQUEST_ID = 200  # characters of a client's request id (the column's width)

# fn(connection, game_id, events, outcome), called inside the command's transaction after
# its events are appended; what it writes commits (or rolls back) with them.
CommitListener = Callable[[Any, str, list[Event], "Outcome"], None]
Decide = Callable[[GameState, str], tuple[list[Event], "Outcome"]]


def default_db_url() -> str:
    return os.environ.get("SCRIBA_DB", DEFAULT_DB)


def migrate_database(db_url: str | None = None) -> str:
    """Create or upgrade the database's schema to the newest revision (``scriba db
    upgrade``, and every server/CLI start); returns that revision. Interfaces call this,
    not the store. A :class:`Service` on an older schema refuses to start."""
    from scriba.store import migrate

    return migrate(db_url or default_db_url())


@dataclass
class Outcome:
    accepted: bool
    message: str = ""
    events: list[Event] = field(default_factory=list)
    state: GameState | None = None
    request_id: str | None = None
    inbound_id: int | None = None
    repeated: bool = False  # True: this request was decided before; nothing new recorded


@dataclass
class _Input:
    """A command as its ``inbound`` row keeps it: the structured command (as JSON), the
    raw text, and the request id its player (:func:`request_owner`) sent it under."""

    command: dict[str, Any]
    raw: str
    channel: str = "api"
    request_id: str | None = None
    row_id: int | None = None  # a row kept before and not decided (recovery)


class Service(GameReads):
    def __init__(self, db_url: str | None = None, host: SandboxHost | None = None,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        self.store = EventStore(db_url or default_db_url())
        self.host = host or SandboxHost()
        self.engine = Engine(self.host)
        self.snapshot_every = snapshot_every
        # The cache of live states: a game's entry is changed only under its lock.
        self._states: dict[str, GameState] = {}
        # Kept only while some thread holds or waits for them: a lock per text that ever
        # reached an interface (addresses, tokens) would otherwise pile up for ever.
        self._locks: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
        self._locks_guard = threading.Lock()
        self._listeners: list[CommitListener] = []
        self._single_connection = is_memory(self.store.url)
        self._snapshots = SnapshotWriter(self.store, inline=self._single_connection)
        # Whatever a decision must tell people by mail is queued with its events.
        from scriba.service.outbox import Outbox

        Outbox(self)

    def close(self) -> None:
        self._snapshots.close()  # writes the snapshots still due, then stops
        self.host.pool.close()
        self.store.close()

    def add_commit_listener(self, listener: CommitListener) -> None:
        """Call ``listener(connection, game_id, events, outcome)`` inside every write's
        transaction, after its events are appended (SQLAlchemy Core ``Connection``).

        Rows it writes commit with the events, or not at all. If it raises, the whole
        write is rolled back; a command is then recorded as refused (``internal_error``,
        a ``command_refused`` event, its inbound row ``refused``), without calling the
        listeners again; ``advance`` and ``tick`` raise.
        """
        self._listeners.append(listener)

    @cached_property
    def accounts(self) -> Accounts:
        """People and their seats, invitations and API tokens (:mod:`.accounts`)."""
        from scriba.service.accounts import Accounts

        return Accounts(self)

    @contextmanager
    def _lock(self, game_id: str) -> Iterator[None]:
        """This process's lock of the game (threads), the first of the write path's locks."""
        if self._single_connection:
            game_id = ""  # an in-memory database is one connection: one writer at a time
        with self._locks_guard:
            lock = self._locks.setdefault(game_id, threading.RLock())
        with lock:
            yield

    def game_lock(self, game_id: str) -> contextlib.AbstractContextManager[None]:
        """This process's lock of one game (reentrant): held by every command of the game,
        and by an interface that reads the game's state at length meanwhile."""
        return self._lock(game_id)

    @contextmanager
    def reading(self, game_id: str) -> Iterator[GameState]:
        """The current state, held still: no command of this process changes it meanwhile."""
        with self._lock(game_id):
            yield self.load(game_id)

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
        if self.store.has_game(game_id):
            raise GameExists(validation.game_exists(game_id, ruleset.language))
        try:
            state, events = self.engine.create(spec, start)
        except Refused as refusal:
            raise InvalidInput(refusal_text(refusal, ruleset.language)) from None
        with self._lock(game_id):
            self.store.create_game(game_id, payload["name"], ruleset.id, events)  # GameExists
            self._states[game_id] = state
        return state

    def games(self) -> list[dict[str, Any]]:
        return self.store.games()

    def load(self, game_id: str) -> GameState:
        """Current state: the cached one or the latest snapshot, plus any later events.

        The object is the live cached state: commands of this process fold into it under
        the game's lock. Use :meth:`reading` to hold it still while reading it at length.
        """
        with self._lock(game_id):
            state = self._states.get(game_id)
            if state is None:
                snapshot = self.store.latest_snapshot(game_id)
                state = GameState.from_dict(snapshot[1]) if snapshot else GameState()
                events = self.store.events(game_id, after=state.seq if snapshot else 0)
            else:
                events = self.store.events(game_id, after=state.seq)
            for event in events:
                apply_event(state, event)
            self._states[game_id] = state
            return state

    def replay(self, game_id: str, upto_seq: int | None = None,
               upto_time: str | None = None) -> GameState:
        """The state rebuilt from the whole log, optionally as it stood at a past point."""
        with collector_paused():  # a bulk fold: see scriba.store.bulk
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

        ``request_id`` (the client's key, unique per game and acting player): the same
        id again with the same command returns the first outcome with ``repeated=True``
        and records nothing new; with another command (action or arguments) it raises
        :class:`~.errors.RequestIdReused` and records nothing.
        """
        actor, action, args = validation.command_for(self._validating(game_id, actor), actor,
                                                     action, args)
        raw = validation.raw(raw) if raw is not None else None
        command = {"op": "perform", "actor": actor, "action": action, "args": args, "at": at}
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

    def recover(self) -> list[Outcome]:
        """Decide every input kept and never decided, oldest first; call once at start.

        Rows holding only raw text (no structured command) are left for their interface
        to parse; a row for a game that no longer exists is marked refused.
        """
        outcomes = []
        for row in self.store.undecided():
            command, game_id = row["command"], row["game_id"]
            if not isinstance(command, dict) or game_id is None:
                continue
            if not self.store.has_game(game_id):
                self.store.mark_inbound(row["id"], "refused", f"There is no game {game_id!r}.")
                continue
            kept = _Input(command, row["raw"], row["channel"], row["request_id"], row["id"])
            outcomes.append(self._write(game_id, self._decider(command, row["raw"]),
                                        command.get("at"), kept))
        return outcomes

    # --- the write path ---------------------------------------------------------------
    def _submit(self, game_id: str, command: dict[str, Any], channel: str,
                raw: str | None, request_id: str | None) -> Outcome:
        if request_id is not None and not (isinstance(request_id, str)
                                           and 0 < len(request_id) <= MAX_REQUEST_ID):
            raise InvalidInput(f"A request id is 1 to {MAX_REQUEST_ID} characters.",
                               field="request_id")
        stored = json.loads(json.dumps(command, ensure_ascii=False, default=str))
        if raw is None:
            raw = json.dumps({k: v for k, v in stored.items() if k not in ("op", "at")},
                             ensure_ascii=False)
        kept = _Input(stored, raw, channel, request_id)
        return self._write(game_id, self._decider(stored, raw), stored.get("at"), kept)

    def _write(self, game_id: str, decide: Decide, at: str | None,
               kept: _Input | None = None) -> Outcome:
        """Under the game's lock: :meth:`_commit`; if that fails (a commit listener, the
        database), nothing was written, and a command is recorded as refused instead."""
        with self._lock(game_id):
            try:
                return self._commit(game_id, decide, at, kept)
            except ServiceError:
                raise
            except Exception as error:
                if kept is None:
                    raise  # advance, tick: the caller is told
                log.exception("deciding a command of %s failed; recorded as refused", game_id)
                fault = self._fault(kept.command, kept.raw, error)
                return self._commit(game_id, fault, at, kept, listeners=False)

    def _commit(self, game_id: str, decide: Decide, at: str | None, kept: _Input | None,
                listeners: bool = True) -> Outcome:
        """Catch up, answer an input decided before, decide, then write the events, the
        input decided and the listeners' rows: one transaction."""
        with self._transaction(game_id) as (tx, state):
            known = None
            if kept is not None and kept.row_id is not None:
                known = tx.inbound(kept.row_id)
            elif kept is not None and kept.request_id is not None:
                known = tx.find_request(request_owner(kept.command), kept.request_id)
            if known is not None:
                if kept is not None and not _same_request(known, kept.command):
                    raise RequestIdReused(state.language)  # nothing kept
                if known["status"] != "received":
                    return _recorded_outcome(known, state, tx.caught_up, tx.events_by_seq)
            events, outcome = self._decide_one(state, decide, at)
            tx.append(events)
            if kept is not None:
                verdict = {"accepted": outcome.accepted, "message": outcome.message,
                           "seqs": [e["seq"] for e in outcome.events]}
                status = "accepted" if outcome.accepted else "refused"
                if known is not None:
                    tx.decide(known["id"], status, outcome.message, verdict)
                    outcome.inbound_id = known["id"]
                else:
                    outcome.inbound_id = tx.keep_decided(
                        kept.channel, kept.raw, kept.request_id, kept.command,
                        status=status, message=outcome.message, outcome=verdict)
                outcome.request_id = kept.request_id
            for listener in self._listeners if listeners else ():
                listener(tx.connection, game_id, events, outcome)
            return outcome

    @contextmanager
    def _transaction(self, game_id: str) -> Iterator[tuple[GameWrite, GameState]]:
        """The game's write transaction (its store lock held) and its cached state, caught
        up. Decisions fold into the cached state as they are taken; if the transaction
        does not commit, the cache is dropped (the next read rebuilds it from the store)."""
        state: GameState | None = None
        before = 0
        try:
            with self.store.write(game_id, known=game_id in self._states) as tx:
                state = self._catch_up(game_id, tx)
                before = state.seq
                yield tx, state
        except ServiceError:  # refused before deciding (unknown game, request id reused)
            if state is not None and state.seq != before:
                self._states.pop(game_id, None)
            raise
        except BaseException:
            self._states.pop(game_id, None)
            raise
        self._snapshots.played(game_id)
        if state.seq // self.snapshot_every > before // self.snapshot_every:
            self._snapshots.request(game_id)  # after the commit, off the command path

    def _catch_up(self, game_id: str, tx: GameWrite) -> GameState:
        """The cached state brought up to the stored log, read inside the lock."""
        state = self._states.get(game_id)
        if state is None:
            snapshot = tx.latest_snapshot()
            state = GameState.from_dict(snapshot[1]) if snapshot else GameState()
        for event in tx.events_after(state.seq):
            apply_event(state, event)
        self._states[game_id] = state
        return state

    def _decide_one(self, state: GameState, decide: Decide,
                    at: str | None) -> tuple[list[Event], Outcome]:
        """Decide a command on ``state`` and fold its events in (numbered); nothing is
        written yet (on SQLite no database lock is held meanwhile, only the game's)."""
        now = normalize(at) if at else self.now(state)
        if now < state.time:
            now = state.time  # the log never goes back in time
        events, outcome = decide(state, now)
        numbered = _number(events, state.seq)
        outcome.events = _renumbered(outcome.events, events, numbered)
        fold(numbered, state)
        outcome.state = state
        return numbered, outcome

    def _decider(self, command: dict[str, Any], raw: str) -> Decide:
        shapes = {"perform": ("actor", "action", "args"), "add_player": ("name",)}
        if not all(key in command for key in shapes.get(command.get("op"), ("-",))):
            return self._fault(command, raw, ValueError("malformed stored command"))
        if command["op"] == "add_player":
            return lambda state, now: self._admit(state, command["name"], now)
        return lambda state, now: self._decide(
            state, Command(command["actor"], command["action"], dict(command["args"] or {})),
            now, raw)

    def _fault(self, command: dict[str, Any], raw: str, error: Exception) -> Decide:
        def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
            message = translate("internal_error", state.language, error=f"{error!r}"[:300])
            refused = make_event("command_refused", now, command.get("actor"),
                                 action=command.get("action", command.get("op")),
                                 args=command.get("args", {}), raw=raw, message=message,
                                 reason="internal_error")
            return [refused], Outcome(False, message, [refused])
        return decide

    def _decide(self, state: GameState, command: Command, now: str,
                raw: str) -> tuple[list[Event], Outcome]:
        fired = self.engine.fire_due_timers(state, now)
        try:
            with trial(state):  # the timers' events, undone after: no whole-state copy
                for event in fired:
                    apply_event(state, event)
                events = self.engine.handle(state, command, now)
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

    def _admit(self, state: GameState, name: str, now: str) -> tuple[list[Event], Outcome]:
        if state.ended:
            return [], Outcome(False, translate("game_ended", state.language))
        if name in state.players and state.players[name]["status"] == "active":
            return [], Outcome(False, translate("already_player", state.language, player=name))
        try:  # checked before it was kept; a look-alike may have joined meanwhile
            validation.new_player(name, state.players, state.language)
        except InvalidInput as refused:
            return [], Outcome(False, str(refused))
        events = self.engine.admit(state, name, now)
        return events, Outcome(True, "", events)

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
        """Fire the due timers of every real-clock game (the scheduler of ``scriba serve``
        and ``scriba tick``): game id → events appended. A game with nothing due is only
        looked at; one that fails is logged and left for the next round."""
        fired: dict[str, int] = {}
        for game in self.games():
            game_id = game["id"]
            try:
                with self._lock(game_id):
                    state = self.load(game_id)
                    now = self.now(state)
                    if state.clock != "real" or state.ended or \
                            not any(t["at"] <= now for t in state.timers.values()):
                        continue
                    count = len(self.tick(game_id).events)
            except Exception:  # noqa: BLE001 - one broken game must not stop the others
                log.exception("ticking %s failed; trying again next round", game_id)
                continue
            if count:
                fired[game_id] = count
        return fired

    def query(self, game_id: str, name: str, args: dict[str, Any] | None = None) -> Any:
        state = self.load(game_id)
        return self.engine.query(state, name, args or {}, self.now(state))


    # --- export and import --------------------------------------------------------------
    def export_game(self, game_id: str) -> Iterable[str]:
        for event in self.store.events(game_id):
            yield json.dumps(event, ensure_ascii=False, sort_keys=True)

    def import_game(self, source: Any, game_id: str | None = None) -> GameState:
        """Import an exported game (a path, a binary file or lines), checked whole before
        anything is written (:mod:`scriba.service.importing`); all or nothing."""
        from scriba.service.importing import import_game

        game_id = import_game(self, source, game_id)
        with self._lock(game_id):
            self._states.pop(game_id, None)
        return self.load(game_id)


def _same_request(row: dict[str, Any], command: dict[str, Any]) -> bool:
    """Whether a kept input asked for ``command`` (as kept: JSON): the same operation,
    actor, action and arguments, compared as canonical JSON (so ``true`` is not ``1``);
    the moment is when it was decided, not part of what was asked."""
    def asked(value: Any) -> str | None:
        if not isinstance(value, dict):
            return None
        return json.dumps({k: v for k, v in value.items() if k != "at"}, sort_keys=True,
                          ensure_ascii=False, default=str)
    return asked(row.get("command")) == asked(command)


def _recorded_outcome(row: dict[str, Any], state: GameState, fresh: list[Event],
                      by_seq: Callable[[list[int]], list[Event]]) -> Outcome:
    """The outcome recorded for an input decided before (``repeated``), its events picked
    from ``fresh`` (the events just read) or else read by ``by_seq``."""
    recorded = row["outcome"] or {}
    seqs = recorded.get("seqs", [])
    found = {event["seq"]: event for event in fresh}
    events = [found[seq] for seq in seqs] if all(seq in found for seq in seqs) else by_seq(seqs)
    return Outcome(bool(recorded.get("accepted", row["status"] == "accepted")),
                   recorded.get("message", row["result"] or ""), events, state,
                   row["request_id"], row["id"], repeated=True)


def _number(events: list[Event], after: int) -> list[Event]:
    return [{**event, "seq": after + i} for i, event in enumerate(events, start=1)]


def _renumbered(chosen: list[Event], events: list[Event], numbered: list[Event]) -> list[Event]:
    """The numbered copies of ``chosen`` (a sublist of ``events``, by identity)."""
    index = {id(event): i for i, event in enumerate(events)}
    return [numbered[index[id(e)]] if id(e) in index else e for e in chosen]

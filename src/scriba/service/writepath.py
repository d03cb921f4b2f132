"""The write path, on which :class:`~.commands.Commands` is built.

Whole (:meth:`WritePath._write`): take the game's lock (in-process, then the store's: a
file lock on SQLite, an advisory lock on PostgreSQL; a writer finding it busy waits in
line and reads ahead), catch up, decide, commit the input already decided,
its events, the game's row and the commit listeners' rows in one transaction, answer.
One writer per game, so nothing is retried and no command fails for contention; a slow
rule in one game never delays another. A request id is the player's own (game, player,
id): seen again with the same command, the first outcome is answered and nothing is
recorded; with another, it is refused. A refused command is recorded too, changing no
state; a commit that fails is rolled back and the command recorded as refused. Inputs kept
and never decided are decided by :meth:`WritePath.recover` at start. The lock order and the
rest: docs/architecture.md.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from scriba.kernel.engine import Engine
from scriba.kernel.events import Event, fold
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import iso, normalize
from scriba.rulecode.host import SandboxHost
from scriba.service.deciding import Decide, decider, fault
from scriba.service.errors import (
    InvalidInput,
    RequestIdReused,
    ServiceError,
)
from scriba.service.inputs import (
    Outcome,
    _Input,
    _number,
    _recorded_outcome,
    _renumbered,
    _same_request,
)
from scriba.service.listing import listing, next_due
from scriba.service.snapshots import SnapshotWriter
from scriba.service.states import GameLocks, LiveStates
from scriba.store.database import is_memory
from scriba.store.eventstore import EventStore, GameWrite, request_owner

log = logging.getLogger("scriba.service")
SNAPSHOT_EVERY = 250
IDLE_STATE_S = 600.0  # a game unused this long: its state is let go (evict_idle)
MAX_REQUEST_ID = 200  # characters of a client's request id (the column's width)

# fn(connection, game_id, events, outcome), called inside the command's transaction after
# its events are appended; what it writes commits (or rolls back) with them.
CommitListener = Callable[[Any, str, list[Event], "Outcome"], None]


class WritePath:
    """Locks, the live states and the one write path of every game (see the module's
    docstring); :class:`~.commands.Commands` adds the games' commands and lifecycle."""

    def __init__(self, store: EventStore, host: SandboxHost,
                 snapshot_every: int = SNAPSHOT_EVERY) -> None:
        self.store = store
        self.host = host
        self.engine = Engine(self.host)
        self.snapshot_every = snapshot_every
        # The cache of live states: a game's entry is changed only under its lock; an idle
        # game's is let go (:meth:`evict_idle`).
        self._states = LiveStates()
        self._locks = GameLocks()
        self._listeners: list[CommitListener] = []
        self._follow_ups: list[Callable[[str, Outcome], None]] = []
        self._single_connection = is_memory(self.store.url)
        self._snapshots = SnapshotWriter(self.store, inline=self._single_connection)

    def close(self) -> None:
        self._snapshots.close()  # writes the snapshots still due, then stops

    def add_commit_listener(self, listener: CommitListener) -> None:
        """Call ``listener(connection, game_id, events, outcome)`` inside every write's
        transaction, after its events are appended (SQLAlchemy Core ``Connection``).

        Rows it writes commit with the events, or not at all. If it raises, the whole
        write is rolled back; a command is then recorded as refused (``internal_error``,
        a ``command_refused`` event, its inbound row ``refused``), without calling the
        listeners again; ``advance`` and ``tick`` raise.
        """
        self._listeners.append(listener)

    def add_follow_up(self, follow_up: Callable[[str, Outcome], None]) -> None:
        """Call ``follow_up(game_id, outcome)`` after every write's commit, still under the
        game's lock (a correction the rules ordered is the next write: corrections.py)."""
        self._follow_ups.append(follow_up)

    def record(self, game_id: str, decide: Decide) -> Outcome:
        """Write what ``decide`` makes of the game as it is now (a correction of the
        record), through the one write path; a ServiceError it raises writes nothing."""
        return self._write(game_id, decide, None)

    @contextmanager
    def _lock(self, game_id: str) -> Iterator[None]:
        """This process's lock of the game (threads), the first of the write path's locks."""
        if self._single_connection:
            game_id = ""  # an in-memory database is one connection: one writer at a time
        with self._locks(game_id):
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

    def load(self, game_id: str) -> GameState:
        """Current state: the cached one or the latest snapshot, plus any later events.

        The object is the live cached state: commands of this process fold into it under
        the game's lock. Use :meth:`reading` to hold it still while reading it at length.
        """
        with self._lock(game_id):
            return self._states.caught_up(
                game_id, lambda: self.store.latest_snapshot(game_id),
                lambda seq: self.store.events(game_id, after=seq))

    def evict_idle(self, idle: float = IDLE_STATE_S) -> int:
        """Let go of the states of games unused for ``idle`` seconds (read again from
        their snapshot when next needed): an idle game costs no memory. How many went."""
        gone = 0
        for game_id in [g for g in list(self._states) if self._states.unused_for(g) >= idle]:
            with self._lock(game_id):  # not while a command uses it
                if game_id in self._states and self._states.unused_for(game_id) >= idle:
                    self._states.pop(game_id)
                    gone += 1
        return gone

    def cached(self, game_id: str) -> GameState | None:
        """The live cached state if this process has one, without reading the store (for
        a commit listener inside the transaction that is writing the game)."""
        return self._states.get(game_id)

    def now(self, state: GameState) -> str:
        if state.clock == "real":
            return max(iso(datetime.now(UTC)), state.time)
        return state.time

    def recover(self) -> list[Outcome]:
        """Decide every input kept and never decided, oldest first; call once at start.

        Rows holding only raw text (no structured command) are left for their interface
        to parse; a row for a game that no longer exists is marked refused.
        """
        for game in self.store.games():
            if game["listing"] is None:  # made before the index, or copied in by hand
                self._index(game["id"])
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
                outcome = self._commit(game_id, decide, at, kept)
            except ServiceError:
                raise
            except Exception as error:
                if kept is None:
                    raise  # advance, tick: the caller is told
                log.exception("deciding a command of %s failed; recorded as refused", game_id)
                fault = self._fault(kept.command, kept.raw, error)
                return self._commit(game_id, fault, at, kept, listeners=False)
            for follow_up in self._follow_ups if not outcome.repeated else ():
                follow_up(game_id, outcome)
            return outcome

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
            tx.index(state.seq, next_due(state), listing(state))
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
            with self.store.write(game_id, known=game_id in self._states,
                                  prepare=lambda ahead: self._read_ahead(game_id, ahead)) as tx:
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

    def _read_ahead(self, game_id: str, reader: GameWrite) -> None:
        """First in line while another writer decides the game: catch up and hand the rule
        worker the view now, so that the turn has only that writer's commit left to read."""
        if game_id not in self._states:
            return  # not read yet: the turn reads it whole
        try:
            self.engine.warm(self._catch_up(game_id, reader))
        except BaseException:
            self._states.pop(game_id, None)
            raise

    def _catch_up(self, game_id: str, tx: GameWrite) -> GameState:
        """The cached state brought up to the stored log, read inside the lock."""
        return self._states.caught_up(game_id, tx.latest_snapshot, tx.events_after)

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
        return decider(self.engine, command, raw)

    _fault = staticmethod(fault)

    def _index(self, game_id: str) -> None:
        """Write the game's row (its deadline, its listing) from its state now."""
        with self._lock(game_id):
            state = self.load(game_id)
            with self.store.write(game_id, known=True) as tx:
                tx.index(state.seq, next_due(state), listing(state))

"""The one entry point of every interface: commands in, events out.

The write path (why it is shaped so):

* **One writer per game.** Each command is decided under the game's lock, held from the
  first read to the commit: an in-process lock per game (threads) and the store's
  (``pg_advisory_xact_lock`` of the game on PostgreSQL; on SQLite a ``flock`` of the
  game's own file beside the database, the game read in a short read transaction and
  decided holding no database lock, SQLite's single write lock taken only to append), so
  a slow rule in one game never delays another. Inside it only the events after the
  cached state's seq are read; nobody else can write meanwhile, so there is nothing to
  retry and no command ever fails for contention.
* **Exactly once.** When the game's lock is free at once (and, on SQLite, no writer is
  queued on it: ``flock`` is not fair), the input — inserted already decided —, its
  decision's events and whatever the commit listeners write are committed in one
  transaction, with the inputs others kept meanwhile (before and while it decided).
* **The holder's desk** (SQLite on a file, :mod:`.desk`). The lock holder opens a local
  socket as soon as it holds the game; a writer that finds the game held hands its
  command over there and waits for one line: the holder decides it with its own, in the
  same commit, and answers after that commit, then goes on deciding, a commit a round,
  while the writers it answered come back. The waiter keeps, reads and folds nothing.
  An answer lost (a holder that failed or died) is found again by request id: one is
  made up for a command handed over without one.
* **The queue in the database** (PostgreSQL, or no desk to be found). The raw input and
  the structured command are kept (committed, not flushed to disk on their own: the
  deciding commit flushes them before anyone is answered) in an ``inbound`` row first;
  the writer then waits for the lock holder (a shared hold, given back at once), which
  decides every input kept meanwhile (up to ``_BATCH``) in its one commit, so most
  waiters only read their answer, side by side; one whose input is still undecided
  decides the queue if the game is free, else waits again.
* **Request ids** are the player's own: unique per (game, player, id), the player being
  the one the command acts as ("" for the officer's and the system's), on every path
  (the ``inbound`` row's unique constraint, the desk, the queue). A ``request_id``
  already seen with the same command returns the first outcome (waiting for the lock if
  the first attempt is still in flight elsewhere) and records nothing new; with another
  command it is refused (:class:`~.errors.RequestIdReused`). Rows a crash left
  ``received`` are decided by :meth:`Service.recover`, to be called once at start.
* **Few statements.** A command is checked against the cached state when that already
  seats its actor (players are never removed), so nothing is read before the lock; a
  game already read is not looked up again; the outbox reads a game's seats once per
  transaction.
* A refused command is recorded too (``command_refused``, with the raw input) so nothing a
  player sent is lost; it changes no state.
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
from scriba.service.desk import Desk, Handed, hand_over
from scriba.service.errors import (
    GameExists,
    InvalidInput,
    RequestIdReused,
    ServiceError,
    UnknownGame,
)
from scriba.service.messages import refusal_text, translate
from scriba.service.reads import GameReads
from scriba.service.snapshots import SnapshotWriter
from scriba.store.bulk import collector_paused
from scriba.store.database import is_memory
from scriba.store.eventstore import Conflict, EventStore, GameWrite, request_owner

if TYPE_CHECKING:
    from scriba.service.accounts import Accounts

DEFAULT_DB = "sqlite:///scriba.db"
log = logging.getLogger("scriba.service")
SNAPSHOT_EVERY = 250
_SAFETY_RETRIES = 3  # only a writer bypassing the lock can cause a Conflict
_BATCH = 64  # inputs one lock holder decides for the writers queued behind it
MAX_REQUEST_ID = 200  # characters of a client's request id (the column's width)
# A request id made up for a command handed to the lock holder without one, so that
# trying again after a lost answer finds it instead of deciding it twice.
_MADE_UP = "desk:"
_HAND_OVER_ROUNDS = 32  # turns a writer waits at the desk before keeping its input itself
# After its own command, a lock holder goes on deciding the commands handed over at its
# desk, a commit a round, while they keep coming within the pause, this many rounds at most.
_DESK_ROUNDS = 32
_DESK_PAUSE_S = 0.002
# Once one is back, how long it waits for the others answered in the last round: one
# commit for them all.
_DESK_GATHER_S = 0.001

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


class _HandedOutcome(Outcome):
    """The outcome of a command the lock holder decided for this writer: the game's state
    after it is read only if asked for (most callers never look)."""

    def __init__(self, read_state: Callable[[], GameState], **fields: Any) -> None:
        self._read_state = read_state
        self._state: GameState | None = None
        super().__init__(**fields)

    @property  # type: ignore[override]
    def state(self) -> GameState | None:
        if self._state is None:
            self._state = self._read_state()
        return self._state

    @state.setter
    def state(self, value: GameState | None) -> None:
        self._state = value


@dataclass
class _Decision:
    """A command decided and folded into the cached state, not yet written."""

    events: list[Event]
    outcome: Outcome
    inbound: int | None
    listeners: bool = True
    # An input kept in the decision's own transaction: (channel, raw, request_id,
    # command), inserted already decided (one statement, no update after).
    keep: tuple[str, str, str | None, dict[str, Any]] | None = None


class _Decided(Exception):
    """The inbound row was decided meanwhile (a repeated request): answer its outcome."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.row = row


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
        write is rolled back; a player's command is then recorded as refused
        (``internal_error``, a ``command_refused`` event, its inbound row ``refused``),
        without calling the listeners again; ``advance``/``tick``/``add_player`` raise.
        """
        self._listeners.append(listener)

    @cached_property
    def accounts(self) -> Accounts:
        """People and their seats, invitations and API tokens (:mod:`.accounts`)."""
        from scriba.service.accounts import Accounts

        return Accounts(self)

    @contextmanager
    def _lock(self, game_id: str, wait: bool = True) -> Iterator[bool]:
        """This process's lock of the game (threads); yields False if ``wait`` is off and
        another thread holds it."""
        if self._single_connection:
            game_id = ""  # an in-memory database is one connection: one writer at a time
        with self._locks_guard:
            lock = self._locks.setdefault(game_id, threading.RLock())
        if not lock.acquire(blocking=wait):
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

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
        """Decide every input a crash left undecided, oldest first; call once at start.

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
            outcomes.append(self._decide_inbound(game_id, row["id"], command, row["raw"],
                                                 row["request_id"]))
        return outcomes

    # --- the write path ---------------------------------------------------------------
    def _submit(self, game_id: str, command: dict[str, Any], channel: str,
                raw: str | None, request_id: str | None) -> Outcome:
        if game_id not in self._states and not self.store.has_game(game_id):
            raise UnknownGame(f"There is no game named {game_id!r}.")  # nothing kept
        stored = json.loads(json.dumps(command, ensure_ascii=False, default=str))
        if raw is None:
            raw = json.dumps({k: v for k, v in stored.items() if k not in ("op", "at")},
                             ensure_ascii=False)
        if request_id is not None and not (isinstance(request_id, str)
                                           and 0 < len(request_id) <= MAX_REQUEST_ID):
            raise InvalidInput(f"A request id is 1 to {MAX_REQUEST_ID} characters.",
                               field="request_id")
        # Writers already queued go first: one that found the lock free would otherwise
        # take it turn after turn while they wait to read their answers (on SQLite;
        # PostgreSQL grants its locks in the order asked).
        at_once = None if self.store.has_queue(game_id) is True else \
            self._submit_at_once(game_id, stored, channel, raw, request_id)
        if isinstance(at_once, Outcome):
            return at_once
        asked = request_id
        if at_once is None and (name := self.store.desk_name(game_id)) is not None:
            request_id = request_id or f"{_MADE_UP}{uuid.uuid4().hex}"
            at_once = self._hand_over(game_id, name, stored, channel, raw, request_id,
                                      fresh=asked is None)
        if isinstance(at_once, Outcome):
            outcome = at_once
        else:
            with self.store.queued(game_id):
                outcome = self._submit_queued(game_id, stored, channel, raw, request_id,
                                              at_once)
        if asked is None and request_id is not None:  # made up here: the client sent none
            outcome.request_id, outcome.repeated = None, False
        return outcome

    def _hand_over(self, game_id: str, name: bytes, command: dict[str, Any], channel: str,
                   raw: str, request_id: str, fresh: bool) -> Outcome | int | None:
        """The game is held: hand the command to the holder's desk (:mod:`.desk`) and wait
        for its answer; when no desk answers, take the game if it is free, else wait for
        the holder to let go and try again. Its outcome; or, for the queue, the row of a
        request id found decided meanwhile, or None after many rounds. ``fresh``: the
        request id was made up here and never sent, so nobody can have recorded it."""
        for _ in range(_HAND_OVER_ROUNDS):
            answer = hand_over(name, command, channel, raw, request_id, fresh)
            fresh = False
            if answer is not None and answer.get("reused"):
                raise self._reused(game_id)
            if answer is not None:
                return _HandedOutcome(
                    lambda: self.load(game_id), accepted=bool(answer.get("accepted")),
                    message=str(answer.get("message", "")), events=answer.get("events", []),
                    request_id=request_id, inbound_id=answer.get("inbound_id"),
                    repeated=bool(answer.get("repeated")))
            at_once = self._submit_at_once(game_id, command, channel, raw, request_id)
            if at_once is not None:
                return at_once
            self.store.wait_for_holder(game_id)
        return None

    def _submit_queued(self, game_id: str, stored: dict[str, Any], channel: str, raw: str,
                       request_id: str | None, known: int | None) -> Outcome:
        """Keep the input, then wait for the writer ahead, which decides it with the
        others queued; or decide them all if none did. ``known``: the row of a request id
        seen before."""
        if known is not None:  # the request id is known: its row's id
            inbound_id, created = known, False
        else:  # the game is busy: keep the input first (the insert checks the request id)
            inbound_id, created = self.store.receive(channel, raw, game_id, request_id,
                                                     stored, check_first=False, queued=True)
        first = created  # False: this request id was seen before
        tries = 0  # after a few looks the writer waits its turn (waiters' brief shared
        # holds could otherwise keep failing each other's attempts)
        while True:
            if not created:  # the first look only: the player sent this request id before
                row = self.store.inbound_row(inbound_id)
                if row is not None and not _same_request(row, stored):
                    raise self._reused(game_id)
                if row is not None and row["status"] != "received":
                    return self._answer(game_id, row, repeated=True)
            else:
                # Wait for the writer ahead: it decides the inputs queued behind it.
                settled = self._settled(game_id, inbound_id)
                if settled is not None:
                    settled.repeated = not first
                    return settled
            try:
                # Only if the game is free: a writer holding it now is likely to decide
                # this input too (it looks for those kept while it decides); then wait
                # for it side by side with the others instead of taking a turn after it
                # just to read the answer.
                outcomes = self._decide_pending(game_id, inbound_id, wait=tries >= 3)
                tries += 1
            except ServiceError:
                raise
            except Exception:  # noqa: BLE001 - e.g. a listener: decide this one alone
                return self._decide_inbound(game_id, inbound_id, stored, raw, request_id)
            if outcomes is None:
                created = True
                continue
            if inbound_id in outcomes:
                outcome = outcomes[inbound_id]
                # A repeat if its request id was kept before, whoever decided it now.
                outcome.repeated = not first
                return outcome
            row = self.store.inbound_row(inbound_id)
            if row is not None and row["status"] != "received":
                # Decided by the writer ahead of us: the first answer to this call.
                return self._answer(game_id, row, repeated=not first)
            created = True  # still queued (beyond the batch): take the next turn

    def _submit_at_once(self, game_id: str, command: dict[str, Any], channel: str,
                        raw: str, request_id: str | None) -> Outcome | int | None:
        """The game's lock free at once: keep the input and decide it in one commit, with
        the inputs queued before it and the commands handed over at its desk meanwhile
        (:mod:`.desk`), answered after that commit; then go on deciding the commands
        handed over while they keep coming. A known request id gives its row's id; None
        when the writer would have to wait or anything went wrong: the caller then hands
        the command over or keeps the input first."""
        with self._lock(game_id, wait=False) as free:
            if not free:
                return None
            with self.store.hold(game_id, wait=False) as held:
                if not held:
                    return None  # another process holds the game
                # At once: the writers waiting look for the desk as soon as the lock is held.
                desk = Desk.open(self.store.desk_name(game_id))
                try:
                    outcome = self._first_round(game_id, desk, command, channel, raw,
                                                request_id)
                    if isinstance(outcome, Outcome) and desk is not None and desk.served:
                        self._serve_desk(game_id, desk)
                    return outcome
                finally:
                    if desk is not None:
                        desk.close()

    def _first_round(self, game_id: str, desk: Desk | None, command: dict[str, Any],
                     channel: str, raw: str, request_id: str | None) -> Outcome | int | None:
        handed: list[_Handing] = []
        committed = False
        try:
            with self._transaction(game_id, wait=False) as (tx, state):
                if tx is None or state is None:
                    return None
                key = (request_owner(command), request_id)
                if request_id is not None:
                    known = tx.find_request(*key)
                    if known is not None:
                        return int(known["id"])
                decisions = self._decide_queued(tx, state)
                own = self._decide_one(state, self._decider(command, raw), command.get("at"))
                own.keep = (channel, raw, request_id, command)
                handed = self._decide_handed(tx, state, desk, _BATCH - len(decisions),
                                             seen={key} if request_id is not None else set())
                # The writers that queued while this one decided get their answers from
                # the same commit, instead of taking the lock turn after it (not looked
                # for where the store can tell nobody queued).
                later: list[_Decision] = []
                if self.store.has_queue(game_id) is not False:
                    tx.refresh()
                    later = self._decide_queued(
                        tx, state, after=max((d.inbound or 0 for d in decisions), default=0),
                        limit=_BATCH - len(decisions) - len(handed))
                self._record(tx, [*decisions, own, *_decided(handed), *later])
            committed = True
        except ServiceError:
            raise
        except Exception:  # noqa: BLE001 - nothing committed: the careful path decides it
            return None
        finally:
            _tell(handed, committed)
        outcome = own.outcome
        outcome.request_id, outcome.inbound_id = request_id, own.inbound
        return outcome

    def _serve_desk(self, game_id: str, desk: Desk) -> None:
        """After its own command, when others were waiting: decide, a commit a round, the
        commands handed over while they keep coming (the writers just answered are
        usually back at once), for a few rounds at most. The game stays with this writer,
        caught up and its sandbox warm, instead of passing to one that must catch up
        first; a writer alone never waits here."""
        expected = desk.served  # the writers just answered, likely back soon
        for _ in range(_DESK_ROUNDS):
            taken = desk.gather(expected, _DESK_PAUSE_S, _DESK_GATHER_S)
            if not taken:
                return
            handed: list[_Handing] = []
            committed = False
            try:
                with self._transaction(game_id, wait=False) as (tx, state):
                    if tx is None or state is None:
                        return
                    # Writers that kept their input in the queue meanwhile go first.
                    queued = self._decide_queued(tx, state) \
                        if self.store.has_queue(game_id) is not False else []
                    handed = self._decide_handed(tx, state, desk, _BATCH, taken)
                    expected = len(handed)
                    if queued or _decided(handed):
                        self._record(tx, [*queued, *_decided(handed)])
                committed = True
            except Exception:  # noqa: BLE001 - this writer's own command is done already
                log.exception("deciding the commands handed over for %s failed; their "
                              "writers try again", game_id)
                return
            finally:
                _tell(handed, committed)

    def _decide_handed(self, tx: GameWrite, state: GameState, desk: Desk | None,
                       limit: int, taken: list[Handed] | None = None,
                       seen: set[tuple[str, str | None]] | None = None) -> list[_Handing]:
        """Decide the commands handed over at the desk (``taken`` already, then those
        handed over while this writer decides, looking again after each round, at most
        ``limit``), folding each into ``state``: each with its decision to record, or
        with the answer recorded before for its player's request id (a refusal if that
        came with another command). ``seen``: the (player, request id) this round keeps
        already."""
        handed: list[_Handing] = []
        seen = set() if seen is None else seen
        while desk is not None and len(handed) < limit:
            taken = taken or desk.take(limit - len(handed))
            if not taken:
                break
            for index, item in enumerate(taken):
                try:
                    key = (request_owner(item.command), item.request_id)
                    row = None if item.fresh else tx.find_request(*key)
                    if key in seen or (row is not None and row["status"] == "received"):
                        item.drop()  # in flight elsewhere: its writer retries, then finds it
                        continue
                    seen.add(key)
                    if row is not None and not _same_request(row, item.command):
                        handed.append((item, None, {"reused": True}))
                        continue
                    if row is not None:
                        outcome = self._recorded(tx, state, row)
                        handed.append((item, None,
                                       _answer_of(outcome, row["id"], repeated=True)))
                        continue
                    decision = self._decide_one(state, self._decider(item.command, item.raw),
                                                item.command.get("at"))
                except BaseException:
                    for left in [*taken[index:], *(h[0] for h in handed)]:
                        left.drop()  # nothing committed for them: their writers retry
                    raise
                decision.keep = (item.channel, item.raw, item.request_id, item.command)
                handed.append((item, decision, None))
            taken = None
        return handed

    def _decide_inbound(self, game_id: str, inbound_id: int, command: dict[str, Any],
                        raw: str, request_id: str | None) -> Outcome:
        decide = self._decider(command, raw)
        at = command.get("at")
        try:
            try:
                outcome = self._write(game_id, decide, at, inbound_id)
            except (_Decided, ServiceError):
                raise
            except Exception as error:  # noqa: BLE001 - a listener failed: refuse, keep input
                outcome = self._write(game_id, self._fault(command, raw, error), at,
                                      inbound_id, listeners=False)
        except _Decided as decided:
            return self._answer(game_id, decided.row, repeated=True)
        outcome.request_id, outcome.inbound_id, outcome.repeated = request_id, inbound_id, False
        return outcome

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

    def _reused(self, game_id: str) -> RequestIdReused:
        """The refusal of a request id sent again with another command, in the game's
        language."""
        return RequestIdReused(self._validating(game_id, None).language)

    def _answer(self, game_id: str, row: dict[str, Any], repeated: bool) -> Outcome:
        """The outcome recorded for a decided input, rebuilt from the store."""
        return _recorded_outcome(row, self.load(game_id), [],
                                 lambda seqs: self.store.events_by_seq(game_id, seqs),
                                 repeated)

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

    def _write(self, game_id: str, decide: Decide, at: str | None,
               inbound: int | None = None, listeners: bool = True) -> Outcome:
        """Load → decide → append (→ mark the inbound row, → listeners) under the game's
        lock, in one transaction, folding the new events into the cached state."""
        with self._lock(game_id):
            for attempt in range(_SAFETY_RETRIES):
                try:
                    with self._transaction(game_id) as (tx, state):
                        assert state is not None
                        if inbound is not None:
                            row = tx.inbound(inbound)
                            if row is not None and row["status"] != "received":
                                raise _Decided(row)
                        decision = self._decide_one(state, decide, at, inbound, listeners)
                        self._record(tx, [decision])
                        return decision.outcome
                except Conflict:  # a writer that bypassed the lock: reload, decide again
                    if attempt + 1 == _SAFETY_RETRIES:
                        raise
        raise AssertionError("unreachable")

    def _decide_pending(self, game_id: str, own: int | None = None,
                        wait: bool = True) -> dict[int, Outcome] | None:
        """Decide, in one transaction, every input of the game kept and not yet decided
        (oldest first, at most ``_BATCH``): whoever holds the lock decides for the writers
        queued behind it, which then find their answer (one lock turn and one commit
        for many commands). With ``wait`` off, None if another writer holds the game."""
        with self._lock(game_id, wait) as free:
            if not free:
                return None
            with self._transaction(game_id, wait) as (tx, state):
                if tx is None or state is None:
                    return None
                return self._decide_pending_in(tx, state, own)

    def _decide_pending_in(self, tx: GameWrite, state: GameState,
                           own: int | None) -> dict[int, Outcome]:
        if own is not None:
            row = tx.inbound(own)
            if row is not None and row["status"] != "received":
                # Decided by the writer ahead: answered from this turn's reads.
                return {own: self._recorded(tx, state, row)}
        decisions = self._decide_queued(tx, state)
        self._record(tx, decisions)
        return {d.inbound: d.outcome for d in decisions if d.inbound is not None}

    @staticmethod
    def _recorded(tx: GameWrite, state: GameState, row: dict[str, Any]) -> Outcome:
        """The recorded outcome of a decided input, its events taken from those this turn
        just read (``repeated`` set: not decided by this call)."""
        return _recorded_outcome(row, state, tx.caught_up, tx.events_by_seq)

    def _settled(self, game_id: str, inbound_id: int) -> Outcome | None:
        """Once the writer ahead is done: the input's recorded outcome if it decided it
        (the events since the cached state read in the same look), else None."""
        with self._lock(game_id):
            state = self._states.get(game_id)
            row, fresh = self.store.settled_row(game_id, inbound_id,
                                                state.seq if state is not None else None)
            if row is None or row["status"] == "received":
                return None
            if state is None:
                state = self.load(game_id)
            for event in fresh:
                if event["seq"] == state.seq + 1:
                    apply_event(state, event)
            return _recorded_outcome(row, state, fresh,
                                     lambda seqs: self.store.events_by_seq(game_id, seqs))

    def _decide_queued(self, tx: GameWrite, state: GameState, after: int = 0,
                       limit: int = _BATCH) -> list[_Decision]:
        """Decide the game's inputs kept and not yet decided (oldest first, row id above
        ``after``, at most ``limit``), folding each into ``state``; :meth:`_record`
        writes them.

        Inputs kept while this writer decides are taken too (another look after each
        round): the writers queued behind it all get their answer from one commit.
        """
        decisions: list[_Decision] = []
        last = after
        while len(decisions) < limit:
            rows = tx.pending(limit - len(decisions), after=last)
            if not rows:
                break
            for row in rows:
                last = row["id"]
                if not isinstance(row["command"], dict):
                    continue  # raw text only: its interface parses it first
                decide = self._decider(row["command"], row["raw"])
                decision = self._decide_one(state, decide, row["command"].get("at"),
                                            row["id"])
                decision.outcome.request_id = row["request_id"]
                decision.outcome.inbound_id = row["id"]
                decisions.append(decision)
            tx.refresh()
        return decisions

    @contextmanager
    def _transaction(self, game_id: str, wait: bool = True
                     ) -> Iterator[tuple[GameWrite | None, GameState | None]]:
        """The game's write transaction and its cached state, caught up under the lock.

        Events are folded into the cached state as they are decided; if the transaction
        does not commit, the cache is dropped (the next read rebuilds it from the store).
        With ``wait`` off, a game another process holds yields ``(None, None)``.
        """
        try:
            with self.store.write(game_id, wait=wait, known=game_id in self._states) as tx:
                if tx is None:
                    yield None, None
                    return
                state = self._catch_up(game_id, tx)
                before = state.seq
                yield tx, state
        except _Decided:
            raise  # nothing was folded: the cache stands
        except BaseException:
            self._states.pop(game_id, None)
            raise
        self._snapshots.played(game_id)
        if state.seq // self.snapshot_every > before // self.snapshot_every:
            self._snapshots.request(game_id)  # after the commit, off the command path

    def _decide_one(self, state: GameState, decide: Decide, at: str | None,
                    inbound: int | None = None, listeners: bool = True) -> _Decision:
        """Decide a command on ``state`` and fold its events in; nothing is written yet
        (on SQLite no database lock is held meanwhile, only the game's)."""
        now = normalize(at) if at else self.now(state)
        if now < state.time:
            now = state.time  # the log never goes back in time
        events, outcome = decide(state, now)
        numbered = _number(events, state.seq)
        outcome.events = _renumbered(outcome.events, events, numbered)
        fold(numbered, state)
        outcome.state = state
        return _Decision(numbered, outcome, inbound, listeners)

    def _record(self, tx: GameWrite, decisions: list[_Decision]) -> None:
        """Write decided commands: events, inbound rows, listeners (the short part that
        holds the database's write lock)."""
        tx.writing()
        for decision in decisions:
            outcome = decision.outcome
            tx.append(decision.events)
            status = "accepted" if outcome.accepted else "refused"
            verdict = {"accepted": outcome.accepted, "message": outcome.message,
                       "seqs": [e["seq"] for e in outcome.events]}
            if decision.keep is not None:
                decision.inbound = tx.keep_decided(*decision.keep, status=status,
                                                   message=outcome.message, outcome=verdict)
            elif decision.inbound is not None:
                tx.decide(decision.inbound, status, outcome.message, verdict)
            for listener in self._listeners if decision.listeners else ():
                listener(tx.connection, tx.game_id, decision.events, outcome)

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
                      by_seq: Callable[[list[int]], list[Event]],
                      repeated: bool = True) -> Outcome:
    """A decided input's recorded outcome, its events picked from ``fresh`` (the events
    just read) or else read by ``by_seq``; ``repeated``: not decided by this call."""
    recorded = row["outcome"] or {}
    seqs = recorded.get("seqs", [])
    found = {event["seq"]: event for event in fresh}
    events = [found[seq] for seq in seqs] if all(seq in found for seq in seqs) else by_seq(seqs)
    return Outcome(bool(recorded.get("accepted", row["status"] == "accepted")),
                   recorded.get("message", row["result"] or ""), events, state,
                   row["request_id"], row["id"], repeated=repeated)


# A command handed over at the desk: with its decision to record, or with the answer
# recorded before for its request id.
_Handing = tuple[Handed, "_Decision | None", "dict[str, Any] | None"]


def _decided(handed: list[_Handing]) -> list[_Decision]:
    return [decision for _, decision, _ in handed if decision is not None]


def _tell(handed: list[_Handing], committed: bool) -> None:
    """Answer the commands handed over once their round is committed; else send them
    back without an answer (nothing was committed for them: their writers try again)."""
    for item, decision, known in handed:
        if not committed:
            item.drop()
        elif known is not None:
            item.answer(known)
        elif decision is not None and decision.inbound is not None:
            item.answer(_answer_of(decision.outcome, decision.inbound, repeated=False))
        else:
            item.drop()


def _answer_of(outcome: Outcome, inbound_id: int, repeated: bool) -> dict[str, Any]:
    """What the lock holder tells a writer whose command it took at the desk."""
    return {"accepted": outcome.accepted, "message": outcome.message,
            "events": outcome.events, "inbound_id": inbound_id, "repeated": repeated}


def _number(events: list[Event], after: int) -> list[Event]:
    return [{**event, "seq": after + i} for i, event in enumerate(events, start=1)]


def _renumbered(chosen: list[Event], events: list[Event], numbered: list[Event]) -> list[Event]:
    """The numbered copies of ``chosen`` (a sublist of ``events``, by identity)."""
    index = {id(event): i for i, event in enumerate(events)}
    return [numbered[index[id(e)]] if id(e) in index else e for e in chosen]

"""The state of one game: plain data, derived by folding its event log.

Everything here is JSON-serialisable so that a state can be snapshotted and compared
byte for byte with a replay.
"""

from __future__ import annotations

import copy
import itertools
import json
import pickle
import re
from collections.abc import Hashable
from dataclasses import asdict, dataclass, field
from typing import Any

ACTIVE = "active"


@dataclass
class GameState:
    game_id: str = ""
    name: str = ""
    ruleset: str = ""
    language: str = "en"
    seed: int = 0
    clock: str = "simulated"  # "simulated": time moves only by events; "real": wall clock
    settings: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    time: str = ""
    players: dict[str, dict[str, Any]] = field(default_factory=dict)
    vars: dict[str, Any] = field(default_factory=dict)
    offices: dict[str, str | None] = field(default_factory=dict)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The docket (kernel/cases.py): case number as text -> case. Empty by default, so
    # snapshots and exports made before cases existed load unchanged.
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    timers: dict[str, dict[str, Any]] = field(default_factory=dict)
    assets: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    notices: list[dict[str, Any]] = field(default_factory=list)
    winners: list[str] = field(default_factory=list)
    ended: bool = False
    next_timer: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameState:
        return cls(**copy.deepcopy(data))

    def __getstate__(self) -> dict[str, Any]:
        # A copy never shares the original's undo log (see scriba.kernel.journal).
        return {k: v for k, v in self.__dict__.items() if k != "_journal"}

    def copy(self) -> GameState:
        # A pickle round trip is the fastest deep copy of plain nested data.
        return pickle.loads(pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))

    # --- convenient reads -------------------------------------------------------------
    def active_players(self) -> list[str]:
        return [name for name, p in self.players.items() if p["status"] == ACTIVE]

    def rules_in_force(self) -> list[dict[str, Any]]:
        return [r for r in self.rules.values() if r["in_force"]]

    def open_proposals(self) -> list[str]:
        """Numbers of the open proposals, in order of submission; an index kept by the
        fold once built, so that reading it does not walk every proposal ever made."""
        index = self.__dict__.get("_open")
        if index is None:
            index = {n: None for n, p in self.proposals.items() if p["status"] == "open"}
            journal = self.__dict__.get("_journal")
            if journal is not None:  # built inside a trial: undone with it
                journal.key(self.__dict__, "_open")
            self.__dict__["_open"] = index
        return list(index)

    def proposal_by_label(self, label: str) -> dict[str, Any] | None:
        for proposal in self.proposals.values():
            if proposal.get("label") == label:
                return proposal
        return None


_VERSIONS = itertools.count(1)


def rules_version(state: GameState) -> int:
    """An id of the rules in force, new whenever a rule changes (never reused in this
    process), so that what is derived from the rules can be cached per version."""
    version = state.__dict__.get("_rules_version")
    if version is None:
        # Not journaled: the id names the rules as they are now, whichever trial is on.
        version = state.__dict__["_rules_version"] = next(_VERSIONS)
    return version


def forget_derived(state: GameState) -> None:
    """The rules change: they get a new version id (undone with a trial)."""
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(state.__dict__, "_rules_version")
    state.__dict__["_rules_version"] = next(_VERSIONS)


def part_stamp(state: GameState, part: Hashable) -> int:
    """An id of one part of the state as it is now — ``"players"``, ``"vars"``,
    ``"offices"``, ``"timers"``, ``"assets"``, ``"settings"``, ``("proposal", number)`` —
    new whenever the part changes (:func:`touch`) and never reused in this process. Equal
    ids mean equal content, so what is derived from a part (its JSON, the copy a sandbox
    worker holds) can be kept by its id."""
    stamps = state.__dict__.get("_stamps")
    if stamps is None:
        stamps = state.__dict__["_stamps"] = {}
    stamp = stamps.get(part)
    if stamp is None:
        # Not journaled: the id names the part as it is now, whichever trial is on.
        stamp = stamps[part] = next(_VERSIONS)
    return stamp


def touch(state: GameState, part: Hashable) -> None:
    """The part is about to change: it gets a new id (undone with a trial, which also
    undoes the change)."""
    stamps = state.__dict__.get("_stamps")
    if stamps is None:
        stamps = state.__dict__["_stamps"] = {}
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(stamps, part)
    stamps[part] = next(_VERSIONS)


# Entries of a game's log of proposal changes (see :func:`note_proposal_change`) kept:
# past this many, the older ones are dropped but for the last ``PROPOSAL_LOG_KEPT``.
PROPOSAL_LOG_LIMIT = 256
PROPOSAL_LOG_KEPT = 32


def note_proposal_change(state: GameState, number: str) -> None:
    """Proposal ``number`` just changed (after :func:`touch` of it and of
    ``"proposal_contents"``): noted with the new stamp of the proposals' contents, so that
    what is derived from every proposal (the view's keys) is brought up to date from the
    few that changed instead of walking them all. Journaled: undone with a trial."""
    log = state.__dict__.get("_proposal_log")
    journal = state.__dict__.get("_journal")
    if log is None or len(log) >= PROPOSAL_LOG_LIMIT:
        if journal is not None:
            journal.key(state.__dict__, "_proposal_log")
            journal.key(state.__dict__, "_proposal_log_start")
        kept = (log or [])[-PROPOSAL_LOG_KEPT:]
        state.__dict__["_proposal_log_start"] = proposal_changes(state)[0] + \
            len(log or []) - len(kept)
        log = state.__dict__["_proposal_log"] = list(kept)
    if journal is not None:
        journal.length(log)
    log.append((part_stamp(state, "proposal_contents"), number))


def proposal_changes(state: GameState) -> tuple[int, list[tuple[int, str]]]:
    """The log of :func:`note_proposal_change` — (stamp of the contents after, number) —
    and the place of its first entry among all the game's (older ones are dropped)."""
    return (state.__dict__.get("_proposal_log_start", 0),
            state.__dict__.get("_proposal_log") or [])


def touch_all(state: GameState) -> None:
    """Every part is about to change (a game is created): all get new ids."""
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.key(state.__dict__, "_stamps")
        journal.key(state.__dict__, "_proposal_log")
    state.__dict__["_stamps"] = {}
    # What the log says is of stamps no longer used; its entries are unique, so keys
    # matched against them (by the place of an entry and the entry) never match again.
    state.__dict__["_proposal_log"] = []


def natural_key(rule_id: str) -> tuple:
    """Sort key that orders "R.2" before "R.10" and "101" before "1023"."""
    parts = re.split(r"(\d+)", rule_id)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p != "")

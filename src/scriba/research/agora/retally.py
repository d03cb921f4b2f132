"""Re-tally Agora's recorded referenda through the game engine and the `agora` rule code.

Each Assessor file (one resolution announcement) is replayed as one game of the bundled
`agora` ruleset, with real commands only:

1. the game starts with the batch's authors and voters as players (registered, Rule 869)
   and the offices held by stand-ins named after them;
2. each author submits eir proposal with its recorded number, title, text, coauthors
   and adoption index (Rule 2350); the proposals are known only by their text;
3. the Promotor distributes each one, stating the recorded quorum and adoption index
   (Rules 1607, 879, 1950);
4. every ballot is cast (Rule 683);
5. where the batch was decided under another default voting strength
   (:mod:`scriba.research.agora.festival`), the Rulekeepor records a temporary rule that sets it;
6. the voting period ends (the clock moves 7 days, Rule 107);
7. for each referendum, the Assessor records the voting strengths the file lists for its
   voters (Rule 2137) and resolves it (Rule 208); the rule code of Rule 955 computes
   the outcome and the FOR/AGAINST strengths (with Rule 2422's strength);
8. the temporary rule, if any, is repealed.

The outcome and totals the rule code produced are then compared with the recorded ones.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scriba.kernel.state import GameState
from scriba.research.agora.assessor import AssessorFile, Proposal, Resolution
from scriba.research.agora.festival import DefaultStrengthPeriod, recover_all
from scriba.research.agora.recount import Agreement, agreement
from scriba.service import Service

ASSESSOR = "Assessor"
PROMOTOR = "Promotor"
RULEKEEPOR = "Rulekeepor"
OFFICES = {"Assessor": ASSESSOR, "Promotor": PROMOTOR, "Rulekeepor": RULEKEEPOR}
VOTING_PERIOD = 7 * 24 * 3600  # Rule 107's default; the rule code enforces it
TEMPORARY_TITLE = "Festival Voting Strength"
TEMPORARY_CATEGORY = "Important Temporary Rules"

Progress = Callable[[int, int], None]


class ReplayError(RuntimeError):
    """A command of the replay was refused: the replay does not reflect the record."""


@dataclass
class Mismatch:
    file: str
    proposal: int
    recorded: tuple[str, int, int]
    tallied: tuple[str, int, int]


@dataclass
class RetallyResult:
    files: int = 0
    resolutions: int = 0
    outcomes_matched: int = 0
    quorate: int = 0  # resolutions that met quorum: their strength totals are compared
    totals_matched: int = 0
    commands: int = 0
    seconds: float = 0.0
    periods: list[DefaultStrengthPeriod] = field(default_factory=list)
    baseline: Agreement | None = None  # a plain recount with the default 3 throughout
    mismatches: list[Mismatch] = field(default_factory=list)


def placeholder_changes(number: int) -> list[dict[str, Any]]:
    """The one structured change the kernel needs on a proposal known only by its text.

    It is never applied: the proposal is submitted `text_only`, and Rule 106 applies
    only structured changes (an FLR proposal's changes are prose, not changes the kernel
    can apply).
    """
    return [{"enact": {"title": f"Proposal {number} (text only)",
                       "text": "The changes of this proposal are those its text specifies."}}]


def temporary_rule(period: DefaultStrengthPeriod) -> dict[str, Any]:
    """The enactment of the recovered temporary rule, as a rule change."""
    text = (
        f"While this rule is in force, the voting strength of a person on an Agoran "
        f"decision, if no other rule specifies it, is {period.default} instead of the "
        f"default of Rule 2422.\n\n"
        f"This rule is temporary. It stands for the Festival during which the referenda "
        f"of the Assessor's report {period.file} were decided, when the Festival "
        f"Restrictions (Rule 2481) gave each person who was not a Festive player the "
        f"minimum voting strength. The report lists the Festive players' strengths "
        f"but not the others'; a default of {period.default} is the only one that "
        f"reproduces every result and total it records. It is repealed once that "
        f"report's referenda are resolved."
    )
    code = (
        f"# Temporary rule recovered from the Assessor's report {period.file}: the\n"
        f"# default voting strength during that Festival was {period.default}.\n\n"
        f"def transform_default_voting_strength(game, value, context):\n"
        f"    return {period.default}\n"
    )
    return {"enact": {"title": TEMPORARY_TITLE, "text": text, "code": code,
                      "attributes": {"power": "2", "category": TEMPORARY_CATEGORY}}}


class _Replay:
    """One Assessor file replayed as one game."""

    def __init__(self, service: Service, record: AssessorFile,
                 period: DefaultStrengthPeriod | None, highest_rule: int | None) -> None:
        self.service = service
        self.record = record
        self.period = period
        self.highest_rule = highest_rule
        self.game = _game_id(record.name)
        self.commands = 0

    def do(self, actor: str, action: str, args: dict[str, Any] | None = None) -> GameState:
        outcome = self.service.commands.perform(self.game, actor, action, args or {},
                                                channel="retally")
        self.commands += 1
        if not outcome.accepted:
            raise ReplayError(f"{self.record.name}: {actor} {action} {args}: {outcome.message}")
        assert outcome.state is not None
        return outcome.state

    def run(self) -> GameState:
        record = self.record
        settings = {} if self.highest_rule is None else \
            {"highest_rule_enacted": self.highest_rule}
        self.service.commands.create_game("agora", game_id=self.game, start=start_time(record),
                                          players=_people(record), offices=OFFICES,
                                          settings=settings)
        for number, proposal in record.proposals.items():
            self.do(proposal.author, "submit", {
                "number": number, "title": proposal.title, "text": proposal.text,
                "coauthors": _coauthors(proposal), "ai": proposal.proposal_ai,
                "text_only": True, "changes": placeholder_changes(number)})
            self.do(PROMOTOR, "distribute", {"proposal": number, "quorum": record.quorum,
                                             "ai": proposal.decision_ai})
        for resolution in record.resolutions:
            for ballot in resolution.ballots:
                self.do(ballot.voter, "vote", {"proposal": resolution.proposal,
                                               "choice": ballot.vote})
        temporary = self._enact_temporary_rule()
        self.service.commands.advance(self.game, by=VOTING_PERIOD)
        state = self.service.reads.load(self.game)
        for resolution in record.resolutions:
            self._record_strengths(state, resolution)
            state = self.do(ASSESSOR, "resolve", {"proposal": resolution.proposal})
        if temporary is not None:
            state = self.do(RULEKEEPOR, "record_change", {
                "changes": [{"repeal": {"rule": temporary}}],
                "mechanism": f"end of the Festival of report {record.name}"})
        return state

    def _enact_temporary_rule(self) -> str | None:
        if self.period is None:
            return None
        state = self.do(RULEKEEPOR, "record_change", {
            "changes": [temporary_rule(self.period)],
            "mechanism": f"Festival of report {self.record.name}"})
        return next(r["id"] for r in state.rules_in_force() if r["title"] == TEMPORARY_TITLE)

    def _record_strengths(self, state: GameState, resolution: Resolution) -> None:
        for voter in dict.fromkeys(b.voter for b in resolution.ballots):
            wanted = resolution.strengths.get(voter)
            if state.players[voter]["vars"].get("voting_strength") != wanted:
                self.do(ASSESSOR, "record_strength", {"player": voter, "strength": wanted})


def start_time(record: AssessorFile) -> str:
    """The game's start: the first day of the month the report was published."""
    return f"{record.month or '2019-01'}-01T00:00:00Z"


def _coauthors(proposal: Proposal) -> list[str]:
    """Coauthors other than the author (Rule 2350; a few records list the author too)."""
    return [name for name in proposal.coauthors if name != proposal.author]


def _people(record: AssessorFile) -> list[str]:
    """Authors and voters, each once, in order of appearance."""
    names = [p.author for p in record.proposals.values()]
    names += [b.voter for r in record.resolutions for b in r.ballots]
    return list(dict.fromkeys(names))


def compare(record: AssessorFile, state: GameState, result: RetallyResult) -> None:
    for resolution in record.resolutions:
        proposal = state.proposals[str(resolution.proposal)]
        tally = proposal.get("tally") or {}
        tallied = (proposal["status"].upper(), tally.get("strength_for", 0),
                   tally.get("strength_against", 0))
        recorded = (resolution.result, resolution.strength_for, resolution.strength_against)
        result.resolutions += 1
        outcome_ok = tallied[0] == recorded[0]
        result.outcomes_matched += outcome_ok
        totals_ok = tallied[1:] == recorded[1:]
        if resolution.met_quorum:
            result.quorate += 1
            result.totals_matched += totals_ok
        if not outcome_ok or (resolution.met_quorum and not totals_ok):
            result.mismatches.append(Mismatch(record.name, resolution.proposal, recorded,
                                              tallied))


def retally_file(service: Service, record: AssessorFile, period: DefaultStrengthPeriod | None,
                 highest_rule: int | None = None) -> RetallyResult:
    """Replay one Assessor file as one game of `service` and count what matches.

    `highest_rule` is Agora's highest rule number at the time, for Rule 2141's numbering.
    """
    result = RetallyResult(files=1)
    replay = _Replay(service, record, period, highest_rule)
    compare(record, replay.run(), result)
    result.commands = replay.commands
    return result


def merge(total: RetallyResult, part: RetallyResult) -> None:
    """Add the counts and mismatches of `part` to `total`."""
    total.files += part.files
    total.resolutions += part.resolutions
    total.outcomes_matched += part.outcomes_matched
    total.quorate += part.quorate
    total.totals_matched += part.totals_matched
    total.commands += part.commands
    total.mismatches += part.mismatches


def retally_records(records: Iterable[AssessorFile], service: Service,
                    periods: dict[str, DefaultStrengthPeriod] | None = None,
                    progress: Progress | None = None,
                    highest_rules: dict[str, int | None] | None = None) -> RetallyResult:
    """Replay the records one after the other through `service`; count what matches."""
    records = list(records)
    periods = recover_all(records) if periods is None else periods
    result = RetallyResult(periods=list(periods.values()), baseline=agreement(records))
    total = sum(len(r.resolutions) for r in records)
    started = time.perf_counter()
    for record in records:
        merge(result, retally_file(service, record, periods.get(record.name),
                                   (highest_rules or {}).get(record.name)))
        if progress is not None:
            progress(result.resolutions, total)
    result.seconds = time.perf_counter() - started
    return result


def _game_id(name: str) -> str:
    """A game id (a slug, at most 64 characters) for a report named like "8805-8810, 8812"."""
    game = "agora-retally-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")
    return game if len(game) <= 64 else \
        game[:55] + "-" + hashlib.sha256(name.encode()).hexdigest()[:8]

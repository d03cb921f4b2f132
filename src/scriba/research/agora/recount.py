"""A plain recount of an Assessor's record, outside the game engine.

This is the arithmetic of Rule 955 written once more in Python, for analysis only: to
measure how many recorded results a given default voting strength reproduces and to
find, for a batch that does not fit, which default strength would. The retally itself
(:mod:`scriba.research.agora.retally`) never uses it: there the rule code decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from scriba.research.agora.assessor import AssessorFile, Resolution

DEFAULT_STRENGTH = 3
STRENGTHS = range(0, 16)  # Rule 2422: an integer between 0 and 15 inclusive


@dataclass(frozen=True)
class Recount:
    result: str
    strength_for: int
    strength_against: int


def recount(record: AssessorFile, resolution: Resolution, default: int) -> Recount:
    def strength(voter: str) -> int:
        return resolution.strengths.get(voter, default)

    votes = resolution.ballots
    strength_for = sum(strength(b.voter) for b in votes if b.vote == "FOR")
    strength_against = sum(strength(b.voter) for b in votes if b.vote == "AGAINST")
    ai = Decimal(record.proposals[resolution.proposal].decision_ai)
    if len(votes) < record.quorum:
        result = "FAILED_QUORUM"
    elif strength_for >= ai * strength_against and strength_for > strength_against:
        result = "ADOPTED"
    else:
        result = "REJECTED"
    return Recount(result, strength_for, strength_against)


def totals_match(resolution: Resolution, counted: Recount) -> bool:
    return (counted.strength_for, counted.strength_against) == (
        resolution.strength_for, resolution.strength_against)


@dataclass(frozen=True)
class Agreement:
    outcomes: int
    resolutions: int
    totals: int
    quorate: int  # resolutions that met quorum: those whose totals are compared

    @property
    def complete(self) -> bool:
        return self.outcomes == self.resolutions and self.totals == self.quorate


def agreement(records: list[AssessorFile], default: int = DEFAULT_STRENGTH) -> Agreement:
    """How many recorded results and totals a recount with this default reproduces."""
    outcomes = resolutions = totals = quorate = 0
    for record in records:
        for resolution in record.resolutions:
            counted = recount(record, resolution, default)
            resolutions += 1
            outcomes += counted.result == resolution.result
            if resolution.met_quorum:
                quorate += 1
                totals += totals_match(resolution, counted)
    return Agreement(outcomes, resolutions, totals, quorate)

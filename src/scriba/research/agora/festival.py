"""Recover, from the Assessor's records, a temporary change of the default voting strength.

Rule 2422 gives every voter without a recorded strength the default of 3. Where a
batch of resolutions is not reproduced with that default, this module looks for the one
default strength (0 to 15) that reproduces every recorded FOR/AGAINST total and result
of the batch. Such a batch was decided while some rule gave players another default —
in Agora's records, a Festival (Rule 2481 "Festival Restrictions": non-Festive persons
have the minimum voting strength). The retally enacts the recovered default as a
temporary rule before the batch is resolved and repeals it afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from scriba.research.agora.assessor import AssessorFile
from scriba.research.agora.recount import DEFAULT_STRENGTH, STRENGTHS, agreement


@dataclass(frozen=True)
class DefaultStrengthPeriod:
    """A batch decided under another default voting strength."""

    file: str
    default: int
    resolutions: int
    reproduced_with_default: int  # outcomes + totals reproduced by the recovered default
    reproduced_with_3: int  # the same with the ordinary default
    compared: int  # outcomes + totals compared


def recover(record: AssessorFile) -> DefaultStrengthPeriod | None:
    """The default strength that explains a batch the ordinary default does not; else None.

    None too unless exactly one default reproduces the whole batch: then the records hold
    some other difference (or cannot tell), and nothing is enacted for it.
    """
    ordinary = agreement([record], DEFAULT_STRENGTH)
    if ordinary.complete:
        return None
    fitting = [d for d in STRENGTHS if agreement([record], d).complete]
    if len(fitting) != 1:
        return None
    found = agreement([record], fitting[0])
    return DefaultStrengthPeriod(
        file=record.name,
        default=fitting[0],
        resolutions=found.resolutions,
        reproduced_with_default=found.outcomes + found.totals,
        reproduced_with_3=ordinary.outcomes + ordinary.totals,
        compared=found.resolutions + found.quorate,
    )


def recover_all(records: list[AssessorFile]) -> dict[str, DefaultStrengthPeriod]:
    """Every batch decided under another default strength, by file name."""
    periods = (recover(record) for record in records)
    return {p.file: p for p in periods if p is not None}

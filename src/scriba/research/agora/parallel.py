"""Run the retally of a whole directory, spreading the Assessor files over processes.

Each file is its own game, so files can be replayed side by side: each process has its
own service (an in-memory database and its own sandbox workers). With a database
other than the in-memory one, the files are replayed one after the other in it.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from multiprocessing.util import Finalize
from pathlib import Path

from scriba.research.agora.assessor import AssessorFile, load_directory
from scriba.research.agora.festival import DefaultStrengthPeriod, recover_all
from scriba.research.agora.numbering import enactments, highest_before
from scriba.research.agora.recount import agreement
from scriba.research.agora.retally import (
    Progress,
    RetallyResult,
    merge,
    retally_file,
    retally_records,
    start_time,
)
from scriba.rulecode.inprocess import InProcessHost
from scriba.service import Service, open_service

IN_MEMORY = "sqlite://"
RULES_DATA = "rules_data"  # the Rulekeepor's records, next to assessor-json/ in the corpus

_service: Service | None = None  # the service of a worker process


def _start_worker(db_url: str, in_process: bool = False) -> None:
    global _service
    # in_process: the rule code (the bundled agora rules) runs in this process, without
    # sandbox workers; for tests, never for rule code players wrote.
    _service = open_service(db_url, host=InProcessHost() if in_process else None)
    Finalize(_service, _service.close, exitpriority=10)


def _replay(record: AssessorFile, period: DefaultStrengthPeriod | None,
            highest_rule: int | None) -> RetallyResult:
    assert _service is not None
    return retally_file(_service, record, period, highest_rule)


def highest_rules(records: list[AssessorFile], rules_data: Path) -> dict[str, int | None]:
    """Agora's highest rule number when each report's game starts, if the records exist."""
    if not (rules_data / "rules").is_dir():
        return {}
    enacted = enactments(rules_data)
    return {r.name: highest_before(enacted, start_time(r)[:10]) for r in records}


def default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def _in_parallel(records: list[AssessorFile], periods: dict[str, DefaultStrengthPeriod],
                 highest_rules: dict[str, int | None], jobs: int,
                 progress: Progress | None, in_process: bool = False) -> RetallyResult:
    result = RetallyResult(periods=list(periods.values()), baseline=agreement(records))
    total = sum(len(r.resolutions) for r in records)
    # The largest files first, so that no process is left with a big one at the end.
    ordered = sorted(records, key=lambda r: -sum(len(x.ballots) for x in r.resolutions))
    with ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=_start_worker,
                             initargs=(IN_MEMORY, in_process)) as pool:
        futures = [pool.submit(_replay, record, periods.get(record.name),
                               highest_rules.get(record.name)) for record in ordered]
        for future in as_completed(futures):
            merge(result, future.result())
            if progress is not None:
                progress(result.resolutions, total)
    result.mismatches.sort(key=lambda m: m.proposal)
    return result


def retally(directory: Path, db_url: str = IN_MEMORY, progress: Progress | None = None,
            jobs: int | None = None, service: Service | None = None,
            in_process: bool = False) -> RetallyResult:
    """Load every Assessor file of `directory`, replay it, and count what matches.

    With a ``service`` the files are replayed one after the other in it. ``in_process``
    runs the bundled rule code in the replaying processes instead of sandbox workers
    (tests)."""
    started = time.perf_counter()
    records = load_directory(directory)
    periods = recover_all(records)
    highest = highest_rules(records, directory.parent / RULES_DATA)
    jobs = default_jobs() if jobs is None else jobs
    if service is not None:
        result = retally_records(records, service, periods, progress, highest)
    elif jobs > 1 and db_url == IN_MEMORY:
        result = _in_parallel(records, periods, highest, jobs, progress, in_process)
    else:
        service = open_service(db_url)
        try:
            result = retally_records(records, service, periods, progress, highest)
        finally:
            service.close()
    result.seconds = time.perf_counter() - started
    return result

"""Time the service's reads on a long EquiNomic game (prints numbers; asserts nothing).

Run: ``.venv/bin/python tests/bench_reads.py [TURNS]`` (default 150 turns).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scriba.bench import play_long_game
from scriba.service import open_service


def timed(label: str, read: Callable[[], Any], repeat: int = 5) -> None:
    read()  # warm caches (declarations, catalogs) as a running server has them
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        read()
        samples.append(time.perf_counter() - start)
    print(f"{label:<38} {min(samples) * 1000:8.1f} ms (best of {repeat})")


def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        service = open_service(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            game, _ = play_long_game(service, turns)
            state = service.reads.load(game)
            middle = state.time[:10]
            print(f"{state.seq} events, {len(state.proposals)} proposals, "
                  f"{len(state.rules)} rules")
            last = str(max(int(n) for n in state.proposals))
            timed("actions_for", lambda: service.reads.actions_for(game, "Anna"))
            timed("status", lambda: service.reads.status(game))
            timed("summary", lambda: service.reads.summary(game))
            timed("proposals", lambda: service.reads.proposals(game))
            timed("proposal", lambda: service.reads.proposal(game, last))
            timed("rules_at (now)", lambda: service.reads.rules_at(game))
            timed("rules_at (seq in the middle)",
                  lambda: service.reads.rules_at(game, seq=state.seq // 2))
            timed("rules_at (a date)", lambda: service.reads.rules_at(game, at=middle))
            timed("rule_history", lambda: service.reads.rule_history(game, "109"))
            timed("ruleset_diff", lambda: service.reads.ruleset_diff(game, "2026-01-01"))
            timed("chronicle (whole)", lambda: service.reads.chronicle(game))
            timed("chronicle (last 50)",
                  lambda: service.reads.chronicle(game, after_seq=state.seq - 200, limit=50))
            timed("period_reports", lambda: service.reads.period_reports(game))
            start = time.perf_counter()
            service.reads.dry_run(game, last, "en")  # a language not asked before: computed
            print(f"{'dry_run (computed)':<38} {(time.perf_counter() - start) * 1000:8.1f} ms")
            timed("dry_run (same state again: cached)", lambda: service.reads.dry_run(game, last))
        finally:
            service.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)

"""A vote's cost by the number of open proposals (``scriba bench --json``: ``vote_ms_by_open``).

A vote touches one proposal: what it costs should not grow with the others that are open.
Agora games are built with ``count`` distributed proposals each by appending the events
the kernel itself makes for a submission and a distribution (as :mod:`scriba.bench.sizes`
does for resolved ones: submitting 800 through the sandbox would take minutes), then
ballots are cast on a few of them, the games taken in turn vote by vote, so that a slow
moment of the shared machine weighs on every count alike. Each game has a service (and a
sandbox pool) of its own: what is measured is the vote, not workers switching games.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from scriba.bench.sizes import AGORA_OFFICES, AGORA_PLAYERS
from scriba.service import open_service
from scriba.service.commands import Commands

START = "2020-01-06T12:00:00Z"
VOTING_PERIOD = 7 * 86400
VOTED_ON = 6  # proposals the ballots go to, in each game (a new ballot replaces the last)


def open_proposal_events(count: int, first_seq: int, time_: str, now_ts: int
                         ) -> list[dict[str, Any]]:
    """The events of ``count`` proposals submitted and distributed at ``time_``."""
    events: list[dict[str, Any]] = []

    def add(type_: str, actor: str | None, **payload: Any) -> None:
        events.append({"seq": first_seq + len(events), "type": type_, "time": time_,
                       "actor": actor, "payload": payload})

    for number in range(1, count + 1):
        author = AGORA_PLAYERS[number % len(AGORA_PLAYERS)]
        add("proposal_submitted", author, number=number, label=str(number), author=author,
            title=f"Open {number}", text="Amend Rule 869 to read as follows. " * 8,
            changes=[{"type": "amend", "rule": "869", "text": f"Bench text {number}."}],
            data={"ai": "1.0"})
        add("action_taken", "Murphy", action="distribute", args={"proposal": number})
        for key, value in (("decision_ai", "1.0"), ("decision_ai_ratio", [10, 10]),
                           ("distributed", time_), ("quorum", 2),
                           ("voting_ends", now_ts + VOTING_PERIOD)):
            add("proposal_updated", None, by_rule="1607", proposal=number, key=key, value=value)
    return events


def build_open_game(service: Commands, game_id: str, count: int) -> None:
    """An Agora game with ``count`` open, distributed proposals numbered 1…count."""
    service.create_game("agora", game_id=game_id, start=START, players=AGORA_PLAYERS,
                        offices=AGORA_OFFICES)
    state = service.load(game_id)
    from scriba.kernel.timeutil import to_ts

    events = open_proposal_events(count, state.seq + 1, state.time, int(to_ts(state.time)))
    for at in range(0, len(events), 5000):
        service.store.append(game_id, events[at:at + 5000])


def vote_ms_by_open(counts: tuple[int, ...] = (5, 800), votes: int = 150,
                    db_url: str | None = None) -> dict[str, float]:
    """The p50 of ``votes`` ballots (ms) in a game with each count of open proposals."""
    with tempfile.TemporaryDirectory() as folder:
        url = db_url or f"sqlite:///{Path(folder) / 'open.db'}"
        services = {count: open_service(url) for count in counts}
        try:
            for count, service in services.items():
                build_open_game(service.commands, f"open-{count}", count)
                for voter in AGORA_PLAYERS:  # warm: state loaded, rules compiled
                    _vote(service.commands, f"open-{count}", voter, count, "PRESENT")
            samples: dict[int, list[float]] = {count: [] for count in counts}
            for index in range(votes):
                voter = AGORA_PLAYERS[index % len(AGORA_PLAYERS)]
                choice = "FOR" if (index // len(AGORA_PLAYERS)) % 2 else "AGAINST"
                for count, service in services.items():
                    # The newest proposals, a few in turn: those a game votes on.
                    number = count - (index // len(AGORA_PLAYERS)) % min(VOTED_ON, count)
                    started = time.perf_counter()
                    _vote(service.commands, f"open-{count}", voter, number, choice)
                    samples[count].append(time.perf_counter() - started)
        finally:
            for service in services.values():
                service.close()
    return {str(count): 1000 * statistics.median(samples[count]) for count in counts}


def _vote(service: Commands, game_id: str, voter: str, number: int, choice: str) -> None:
    outcome = service.perform(game_id, voter, "vote", {"proposal": number, "choice": choice})
    assert outcome.accepted, outcome.message


if __name__ == "__main__":  # python -m scriba.bench.open [count ...]
    import json
    import sys

    print(json.dumps(vote_ms_by_open(tuple(int(a) for a in sys.argv[1:]) or (5, 800))))

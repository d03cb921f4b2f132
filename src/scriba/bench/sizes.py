"""Agora games of a given size, built fast by appending generated events (``scriba bench``).

Playing 5,000 proposals through the sandbox would take an hour; the events of one real
cycle (submitted, distributed, five ballots, resolved, adopted changes applied) are
generated instead, with texts of realistic length, and appended straight to the store.
The resulting log folds like a played one: every event is one the kernel itself makes.
"""

from __future__ import annotations

import random
from typing import Any

from scriba.kernel.timeutil import add_seconds
from scriba.service import Service

AGORA_PLAYERS = ["Janet", "Murphy", "G.", "nix", "Kate"]
AGORA_OFFICES = {"Assessor": "Janet", "Promotor": "Murphy", "Rulekeepor": "Kate"}
_WORDS = (
    "player", "rule", "proposal", "shall", "may", "must", "office", "vote", "ballot",
    "referendum", "Assessor", "Promotor", "quorum", "adoption", "index", "power", "amend",
    "repeal", "enact", "the", "a", "of", "to", "by", "with", "in", "Agora", "each", "any",
    "within", "days", "report",
)
_AMENDABLE = ["869", "879", "1051", "2137", "2350"]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def agora_events(count: int, first_seq: int, start: str, seed: int = 7) -> list[dict[str, Any]]:
    """Events of ``count`` resolved proposals, numbered from ``first_seq`` on."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    time = start

    def add(type_: str, actor: str | None, **payload: Any) -> None:
        events.append({"seq": first_seq + len(events), "type": type_, "time": time,
                       "actor": actor, "payload": payload})

    for number in range(1, count + 1):
        time = add_seconds(time, 3600)
        author = AGORA_PLAYERS[number % len(AGORA_PLAYERS)]
        adopted = number % 3 != 0
        rule = _AMENDABLE[number % len(_AMENDABLE)]
        changes = [{"type": "amend", "rule": rule, "text": _text(rng, 120)}]
        add("proposal_submitted", author, number=number, label=str(number), author=author,
            title=_text(rng, 6), text=_text(rng, 250), changes=changes, data={"ai": "1.0"})
        add("action_taken", "Murphy", action="distribute", args={"proposal": number})
        for key, value in (("decision_ai", "1.0"), ("decision_ai_ratio", [10, 10]),
                           ("distributed", time), ("quorum", 2)):
            add("proposal_updated", None, by_rule="1607", proposal=number, key=key, value=value)
        for index, voter in enumerate(AGORA_PLAYERS):
            choice = "for" if adopted != (index == 4) else "against"
            add("vote_cast", voter, proposal=number, player=voter, choice=choice, data={})
        time = add_seconds(time, 7 * 86400)
        add("clock_advanced", None, to=time)
        add("action_taken", "Janet", action="resolve", args={"proposal": number})
        add("proposal_resolved", None, by_rule="955", proposal=number,
            outcome="adopted" if adopted else "rejected",
            tally={"voters": 5, "quorum": 2, "ai": "1.0", "strength_for": 12,
                   "strength_against": 3, "present": 0}, apply=False)
        if adopted:
            cause = {"kind": "proposal", "proposal": number, "label": str(number),
                     "author": author, "title": ""}
            add("changes_due", None, by_rule="106", proposal=number)
            add("rule_changed", None, change=changes[0], cause=cause)
    return events


def build_agora_game(service: Service, game_id: str, resolved: int) -> None:
    """An Agora game holding ``resolved`` resolved proposals, played on in the usual way."""
    start = "2020-01-06T12:00:00Z"
    service.commands.create_game("agora", game_id=game_id, start=start, players=AGORA_PLAYERS,
                                 offices=AGORA_OFFICES)
    state = service.reads.load(game_id)
    events = agora_events(resolved, state.seq + 1, state.time)
    for at in range(0, len(events), 5000):
        service.commands.store.append(game_id, events[at:at + 5000])

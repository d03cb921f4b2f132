"""A proposal's dry run: what would change if it were adopted now.

The proposal is resolved as adopted on a copy of the state, through the kernel's own
reaction machinery (the same path a vote that adopts it takes: ``proposal_resolved`` with
``apply`` brings the ``rule_changed`` events, and the rules react to both). Nothing is
appended and no inbound row is kept: the events exist only in the answer.

All of it runs under one command's budget (:meth:`Engine.settle` opens
``engine.command()``; see :mod:`scriba.rulecode.cost`), the compiling of the code it
enacts included: a dry run can never cost more than a command, and a rule it enacts can
spend no more than its part of it.
"""

from __future__ import annotations

from typing import Any

from scriba.kernel.engine import Engine
from scriba.kernel.errors import Refused
from scriba.kernel.events import Event, make_event
from scriba.kernel.state import GameState, natural_key
from scriba.service.codeerrors import explain
from scriba.service.messages import refusal_text
from scriba.service.narrate import Narrator, bookkeeping
from scriba.service.summary import summarize
from scriba.service.words import Words, short_reason

_RULE_KEYS = ("title", "text", "code", "attributes", "in_force")


def resolution(engine: Engine, state: GameState, number: int, now: str,
               adopted: bool = True) -> tuple[GameState, list[Event]]:
    """The proposal ``number`` resolved now, adopted (its changes applied) or rejected, on
    a copy of ``state``: the copy as the events left it, and the events (with every
    reaction). The dry run shows them; the proposal lab records them (a fork that
    plays on with the proposal decided). Raises :class:`Refused` when the reactions run
    away."""
    proposal = state.proposals[str(number)]
    work = state.copy()  # the reactions change the state they are given
    time = max(now, state.time)
    resolved = make_event("proposal_resolved", time, None, proposal=proposal["number"],
                          outcome="adopted" if adopted else "rejected",
                          tally=dict(proposal.get("tally") or {}), apply=adopted)
    return work, engine.settle(work, [resolved], time)


def dry_run(engine: Engine, state: GameState, number: int, now: str,
            words: Words) -> dict[str, Any]:
    proposal = state.proposals[str(number)]
    time = max(now, state.time)
    work = state
    refused = None
    produced: list[dict[str, Any]] = []
    try:
        work, produced = resolution(engine, state, number, now)
    except Refused as refusal:  # a rule refused it, or the reactions ran away
        refused = refusal_text(refusal, state.language)
    except Exception as error:  # noqa: BLE001 - a dry run reports, it never breaks a page
        refused = f"{error!r}"[:300]
    after = work if refused is None else state
    narrator = Narrator(words)
    events = [{"seq": e["seq"], "time": e["time"], "kind": e["type"], "actor": e["actor"],
               "text": narrator.tell(e)} for e in produced if not bookkeeping(e)]
    return {
        "proposal": proposal["number"],
        "label": proposal.get("label") or str(proposal["number"]),
        "status": proposal["status"],
        "time": time,
        "refused": refused,
        "rules_before": _changed_rules(state, after, side="before"),
        "rules_after": _changed_rules(state, after, side="after"),
        "summary_before": summarize(state),
        "summary_after": summarize(after),
        "aborted": [{"rule": e["payload"].get("rule"), "hook": e["payload"].get("hook"),
                     "message": short_reason(e["payload"].get("reason")),
                     "reason": e["payload"].get("reason"),
                     # told to the rule's author: the line, the caret, the likely mistake
                     "explained": explain(str(e["payload"].get("reason") or ""),
                                          words.language, _code(after, e["payload"]))}
                    for e in produced if e["type"] == "rule_code_aborted"],
        "failed_changes": [{"change": e["payload"].get("change"),
                            "reason": e["payload"].get("reason")}
                           for e in produced if e["type"] == "rule_change_failed"],
        "events": [e for e in events if e["text"]],
    }


def _code(state: GameState, payload: dict[str, Any]) -> str | None:
    rule = state.rules.get(str(payload.get("rule")))
    return rule.get("code") if rule else None


def _changed_rules(before: GameState, after: GameState, side: str) -> list[dict[str, Any]]:
    """The rules that differ between the two states, as they stood on one side."""
    ids = sorted(set(before.rules) | set(after.rules), key=natural_key)
    out = []
    for rule_id in ids:
        old, new = before.rules.get(rule_id), after.rules.get(rule_id)
        if old is not None and new is not None and \
                all(old[k] == new[k] for k in _RULE_KEYS):
            continue
        rule = old if side == "before" else new
        if rule is None:
            continue
        out.append({"id": rule_id, **{k: rule[k] for k in _RULE_KEYS}})
    return out

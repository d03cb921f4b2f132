"""Checking a proposal without making it: the "check" of the propose form, ``scriba
check-rule`` and the API.

On a copy of the game's state, the proposal is decided as if it were sent now — its code
compiled and its names checked, the rules' own checks asked — and, if it would be accepted,
its dry run (:mod:`.dryrun`) tells what adopting it would change. Nothing is kept. Its code
is also read for the mistakes that compile (:func:`.codewarnings.warnings`); an error a rule
meets in the dry run is told to its author as a compile error is (:mod:`.dryrun`).
"""

from __future__ import annotations

from typing import Any

from scriba.kernel.engine import Command, Engine
from scriba.kernel.errors import Refused
from scriba.kernel.events import apply_event
from scriba.kernel.state import GameState
from scriba.service import validation
from scriba.service.codeerrors import explain
from scriba.service.codewarnings import warnings
from scriba.service.dryrun import dry_run
from scriba.service.errors import InvalidInput
from scriba.service.messages import refusal_text, translate
from scriba.service.words import Words


def codes_of(args: dict[str, Any]) -> list[str]:
    """The code in a proposal's changes, each written as ``{TYPE: {..., "code": ...}}``."""
    out = []
    for change in args.get("changes") or []:
        if isinstance(change, dict):
            for body in change.values():
                if isinstance(body, dict) and isinstance(body.get("code"), str):
                    out.append(body["code"])
    return out


def check_proposal(engine: Engine, state: GameState, actor: str, action: str,
                   args: dict[str, Any], now: str, words: Words) -> dict[str, Any]:
    """``refused``: why the proposal would be refused now (or None), ``reason`` the
    kernel's message id of that refusal (``""``: a rule's, or none); ``warnings``:
    mistakes in its code that compile; ``dry_run``: what adopting it would do (None when
    refused)."""
    language = words.language
    codes = codes_of(args)
    found = [w for code in codes for w in warnings(code, language)]
    work = state.copy()
    try:
        for event in engine.fire_due_timers(work, now):
            apply_event(work, event)
        events = engine.handle(work, Command(actor, action, dict(args)), now)
    except Refused as refusal:
        return {"refused": refusal_text(refusal, language), "warnings": found,
                "dry_run": None, "reason": "" if refusal.literal else refusal.message_id}
    except Exception as error:  # noqa: BLE001 - told as a command's fault is, never raised
        return {"refused": translate("internal_error", language, error=f"{error!r}"[:300]),
                "warnings": found, "dry_run": None, "reason": "internal_error"}
    for event in events:
        apply_event(work, event)
    submitted = [e for e in events if e["type"] == "proposal_submitted"]
    if not submitted:  # not a proposal: accepted, and nothing to dry-run
        return {"refused": None, "warnings": found, "dry_run": None, "reason": ""}
    number = submitted[-1]["payload"]["number"]
    result = dry_run(engine, work, number, now, words)  # its aborts told to the author
    return {"refused": None, "warnings": found, "dry_run": result, "reason": ""}


class RuleChecks:
    """``service.checks``: a proposal checked on a game without being made."""

    def __init__(self, reads: Any) -> None:
        self._reads = reads

    def proposal(self, game_id: str, actor: str, action: str, args: dict[str, Any] | None,
                 language: str | None = None) -> dict[str, Any]:
        """What :func:`check_proposal` says, in ``language`` (the game's by default).
        Input is checked as a command's is (raises :class:`InvalidInput`)."""
        with self._reads.reading(game_id) as state:
            actor_, action, args = validation.command_for(state, actor, action, args)
            words = self._reads.words(game_id, language, state)
            return check_proposal(self._reads.engine, state, str(actor_), action, args,
                                  self._reads.now(state), words)

    def code(self, code: str, language: str = "en") -> dict[str, Any]:
        """Code checked alone, for no game: ``refused`` (it does not compile, told to its
        author) and ``warnings``."""
        if not isinstance(code, str):
            raise InvalidInput("Rule code is text.", field="code")
        error = self._reads.engine.info(code).error
        refused = None
        if error:
            refused = translate("rule_code_invalid_new", language,
                                error=explain(error, language, code))
        return {"refused": refused, "warnings": warnings(code, language), "dry_run": None,
                "reason": "rule_code_invalid" if error else ""}

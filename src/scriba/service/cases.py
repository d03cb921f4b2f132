"""The game's cases as readers see them: the docket, one case with its steps told in
sentences, and the actions the rules offer now for a case.

Built on :class:`~scriba.service.reads.Reads` (the reads' own states and log, under the
game's read lock). Everything here is in the reader's language: statuses as words, steps
as the chronicle tells them (:mod:`.narrate`), the judgment in the ruleset's word as it
was recorded; a case is named by its number, an event by its sentence.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from scriba.kernel.state import GameState
from scriba.service import errors
from scriba.service.actions import ActionInfo
from scriba.service.messages import translate
from scriba.service.narrate import Narrator
from scriba.service.reads import Reads
from scriba.service.words import Words

# The docket's order: what still waits for a judge first.
STATUS_ORDER = {"open": 0, "appealed": 1, "judged": 2, "closed": 3}
STATUS_WORDS = {"open": "awaiting judgment", "judged": "judged", "appealed": "under appeal",
                "closed": "closed, final"}
CASE_EVENTS = ("case_opened", "case_assigned", "case_judged", "case_appealed",
               "case_reopened", "case_closed", "case_updated")
STEP_WORDS = {"opened": "Opened", "assigned": "A judge assigned", "judged": "Judged",
              "appealed": "Appealed", "reopened": "Reopened", "closed": "Closed",
              "updated": "Updated"}
NOTE_WORDS = {"imported": "taken from the record imported"}
# Superseded judgments' reasons the kernel and std give, as words for readers.
SUPERSEDED_WORDS = {"overruled": "overruled", "appealed": "appealed", "reopened": "reopened",
                    "judged again": "judged again"}


def _(template: str, language: str, **params: Any) -> str:
    return translate(template, language, **params)


class CaseReads:
    """Read-only views of the games' cases, in the reader's words."""

    def __init__(self, reads: Reads) -> None:
        self.reads = reads

    # --- the docket -----------------------------------------------------------------
    def docket(self, game_id: str, language: str | None = None) -> list[dict[str, Any]]:
        """Every case, those waiting for a judgment first, the newest first among equals:
        number, question, status (and in words), judge, the judgment's word, when opened,
        by whom, and what it concerns told."""
        with self.reads.reading(game_id):
            state = self._state(game_id)
            words = self.reads.words(game_id, language, state)
            told = [self._line(state, case, words) for case in state.cases.values()]
        told.sort(key=lambda c: (STATUS_ORDER.get(c["status"], 9), -c["number"]))
        return told

    def case(self, game_id: str, number: Any, language: str | None = None
             ) -> dict[str, Any]:
        """One case whole: the docket's line, its parties, its steps told as the chronicle
        tells them (``{seq, time, text}``), the judgment and the judgments it superseded."""
        with self.reads.reading(game_id):
            state = self._state(game_id)
            case = _find(state, number)
            words = self.reads.words(game_id, language, state)
            out = self._line(state, case, words)
            events = [e for e in self.reads._log(game_id)  # noqa: SLF001 - the reads' cache
                      if e["type"] in CASE_EVENTS and _case_of(e) == case["number"]]
            narrator = Narrator(words)
            out["steps"] = [{"seq": e["seq"], "time": e["time"],
                             "text": narrator.tell(e)} for e in events] \
                or [_step(step, words.language) for step in case.get("steps") or []]
            out["parties"] = list(case.get("parties") or [])
            out["earlier"] = [self._judgment(state, j, words) for j in
                              reversed(case.get("earlier") or [])]
            out["data"] = copy.deepcopy(case.get("data") or {})
            return out

    def actions(self, game_id: str, number: Any, player: str | None) -> list[ActionInfo]:
        """What ``player`` may do now about case ``number``: the actions the rules in force
        would accept that take a case, each narrowed to this one (nothing for a reader)."""
        if player is None:
            return []
        with self.reads.reading(game_id):
            wanted = str(_find(self._state(game_id), number)["number"])
            offered = []
            for action in self.reads.actions_for(game_id, player):
                params = [name for name, kind in action.params.items()
                          if str(kind).rstrip("?") == "case"]
                if not params:
                    continue
                options = dict(action.options)
                open_ = options.get(params[0])
                if open_ is not None and wanted not in [str(v) for v in open_]:
                    continue
                options[params[0]] = [wanted]
                offered.append(replace(action, options=options))
            return offered

    def corrected_spans(self, game_id: str) -> list[tuple[int, int, int]]:
        """The stretches of the log a confirmed correction decided again: (first seq, last
        seq, the correction's number), oldest first — from the reads' cached log, so that
        the chronicle can mark the superseded entries on every view at no store read."""
        with self.reads.reading(game_id):
            self._state(game_id)
            return list(self.reads._game_log(game_id).corrections)  # noqa: SLF001 - indexed

    # --- telling ----------------------------------------------------------------------
    def _state(self, game_id: str) -> GameState:
        return self.reads._game(game_id)  # noqa: SLF001 - the state the read lock holds

    def _line(self, state: GameState, case: dict[str, Any], words: Words) -> dict[str, Any]:
        status = str(case.get("status") or "open")
        language = words.language
        judgment = case.get("judgment")
        label = (case.get("data") or {}).get("label")
        return {
            "number": int(case["number"]), "question": str(case.get("question") or ""),
            "label": str(label) if label else str(case["number"]),
            "status": status, "status_word": status_word(status, language),
            "judge": case.get("judge"), "opened": case.get("opened"),
            "opened_by": case.get("opened_by"),
            "concerns": [self._concern(state, c, words) for c in case.get("concerns") or []],
            "judgment": self._judgment(state, judgment, words) if judgment else None,
        }

    def _judgment(self, state: GameState, judgment: dict[str, Any], words: Words
                  ) -> dict[str, Any]:
        superseded = judgment.get("superseded")
        return {
            "word": str(judgment.get("judgment") or ""),
            "reasons": str(judgment.get("reasons") or ""),
            "by": judgment.get("by"), "at": judgment.get("at"),
            "rules": [{"rule": str(r.get("rule")), "revision": r.get("revision"),
                       "title": str((state.rules.get(str(r.get("rule"))) or {})
                                    .get("title") or "")}
                      for r in judgment.get("rules") or [] if isinstance(r, dict)],
            "superseded": superseded_word(superseded, words.language)
            if superseded else None,
            "when": judgment.get("when"),
        }

    def _concern(self, state: GameState, concern: dict[str, Any], words: Words
                 ) -> dict[str, Any]:
        """What a case concerns, as a reader names it: a rule by number and title, a
        proposal by number and title, a player by name, an event by its sentence."""
        kind, ident = str(concern.get("kind") or ""), str(concern.get("id") or "")
        language = words.language
        if kind == "rule":
            title = str((state.rules.get(ident) or {}).get("title") or "")
            text = _("rule {rule}", language, rule=ident) + (f" \u2013 {title}" if title
                                                              else "")
        elif kind == "proposal":
            found = state.proposal_by_label(ident) or state.proposals.get(ident) or {}
            title = str(found.get("title") or "")
            text = _("proposal {proposal}", language, proposal=ident) + (
                f" \u2013 {title}" if title else "")
        elif kind == "event":
            text = self._event_sentence(state, ident, words)
        else:
            text = ident
        return {"kind": kind, "id": ident, "text": text}

    def _event_sentence(self, state: GameState, ident: str, words: Words) -> str:
        try:
            seq = int(ident)
        except ValueError:
            return ident
        found = [e for e in self.reads._log(state.game_id)  # noqa: SLF001 - as above
                 if e["seq"] == seq]
        if not found:
            return ident
        told = Narrator(words).tell(found[0])
        return told or _("an entry of the chronicle", words.language)


def _step(step: dict[str, Any], language: str) -> dict[str, Any]:
    """A step with no event of its own (a case imported whole), told from the case."""
    what = str(step.get("step") or "")
    text = _(STEP_WORDS[what], language) if what in STEP_WORDS else what
    if step.get("by"):
        text += " " + _("(by {player})", language, player=step["by"])
    note = step.get("note")
    if note:
        text += ": " + (_(NOTE_WORDS[note], language) if note in NOTE_WORDS else str(note))
    return {"seq": None, "time": step.get("at"), "text": text + "."}


def status_word(status: str, language: str) -> str:
    """A case's status in the reader's words."""
    return _(STATUS_WORDS[status], language) if status in STATUS_WORDS else status


def superseded_word(reason: Any, language: str) -> str:
    """Why a judgment was set aside, in the reader's words where the reason is known."""
    reason = str(reason)
    return _(SUPERSEDED_WORDS[reason], language) if reason in SUPERSEDED_WORDS else reason


def _case_of(event: dict[str, Any]) -> int | None:
    payload = event.get("payload") or {}
    value = payload.get("number") if event["type"] == "case_opened" else payload.get("case")
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _find(state: GameState, number: Any) -> dict[str, Any]:
    key = str(number).strip().lstrip("#")
    case = state.cases.get(str(int(key))) if key.isascii() and key.isdigit() \
        and len(key) < 10 else None
    if case is None:
        shown = key[:40]
        raise errors.with_sentence(errors.NotFound(translate(
            "There is no case {case} in this game.", state.language, case=shown)),
            "There is no case {case} in this game.", case=shown)
    return case

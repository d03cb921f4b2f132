"""One report per period, told from the log — and kept, so that the next event is added
to them instead of the whole log being told again (issue 18: a page after a vote costs
what the vote added, not the game).

:class:`PeriodReports` takes the events in log order (:meth:`~PeriodReports.add`) and
gives the reports as of a state (:meth:`~PeriodReports.as_of`) without changing what it
keeps. It is kept only while what it was told with still holds (:meth:`~PeriodReports.fits`:
the same words, the same period variable, no sealed move revealed since), else the reports
are told anew: either way they are those of :func:`period_reports_of`.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from scriba.kernel.events import Event
from scriba.kernel.sealing import REVEALED, hidden
from scriba.kernel.state import GameState
from scriba.service.messages import translate
from scriba.service.narrate import Narrator
from scriba.service.words import Words

REPORT_KINDS = {"proposal_resolved", "rule_changed", "rule_change_failed", "winner_declared",
                "game_ended", "player_joined", "office_set"}


def period_title(words: Words, name: str, value: Any) -> str:
    label = words.var(name)
    return f"{label[:1].upper()}{label[1:]} {words.show(name, value)}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same_words(told: Words, now: Words, submitted: set[str]) -> bool:
    """Whether sentences told with ``told`` read as with ``now``: all their words alike
    but the titles of the proposals the log submits (the narrator learns those from it)."""
    for field in dataclasses.fields(Words):
        if field.name != "proposals" and getattr(told, field.name) != getattr(now, field.name):
            return False
    return ({n: t for n, t in told.proposals.items() if n not in submitted} ==
            {n: t for n, t in now.proposals.items() if n not in submitted})


class PeriodReports:
    """The reports of a game's periods, told event by event."""

    def __init__(self, words: Words, state: GameState) -> None:
        self.name = words.period_variable(state.vars)
        self.words = dataclasses.replace(words)  # the narrator notes titles in its own
        self.words.proposals = dict(words.proposals)
        self.words.rule_titles = dict(words.rule_titles)
        self.narrator = Narrator(self.words)
        self.reports: list[dict[str, Any]] = []  # closed: never changed again
        self.current: dict[str, Any] | None = None
        self.values: dict[tuple[str, str], Any] = {}
        self.moved: dict[tuple[str, str], float] = {}
        self.players: list[str] = []
        self.pending: tuple[str, str] | None = None
        self.seq = 0  # the last event added
        self.submitted: set[str] = set()
        self.sealed = False  # a sealed move seen: a later reveal means telling anew
        self.told_with = dataclasses.replace(words, proposals=dict(words.proposals),
                                             rule_titles=dict(words.rule_titles))

    def fits(self, words: Words, state: GameState, events: list[Event]) -> bool:
        """Whether adding ``events`` gives the reports telling all anew would."""
        if self.sealed and any(e["type"] == REVEALED for e in events):
            return False
        submitted = self.submitted | {str((e.get("payload") or {}).get("number"))
                                      for e in events if e["type"] == "proposal_submitted"}
        return words.period_variable(state.vars) == self.name and \
            same_words(self.told_with, words, submitted)

    def _close(self, current: dict[str, Any] | None, end: str, into: list[dict[str, Any]],
               moved: dict[tuple[str, str], float]) -> None:
        if current is None:
            return
        words = self.words
        current["end"] = end
        current["scores"] = {
            player: {words.var(var): self.values.get((player, var)) for var in words.score}
            for player in self.players} if words.score else {}
        # the same, as a letter shows it: "Bruno: Gold 2100 N" (values by their display)
        current["standings"] = [f"{player}: " + ", ".join(
            f"{words.var(var)} {words.show(var, self.values.get((player, var)))}"
            for var in words.score) for player in self.players] if words.score else []
        for (player, var), delta in moved.items():
            if delta:
                sign = "+" if delta > 0 else ""
                current["lines"].append(translate(
                    "{player}: {label} {delta} (now {value}).", words.language, player=player,
                    label=words.var(var), delta=sign + words.show(var, delta),
                    value=words.show(var, self.values.get((player, var)))))
        moved.clear()
        into.append(current)

    @staticmethod
    def _open(title: str, start: str) -> dict[str, Any]:
        return {"title": title, "start": start, "end": None, "lines": [], "scores": {}}

    def add(self, events: list[Event], secret: dict[int, str | None]) -> None:
        """Tell ``events`` (after those added before, in log order); ``secret``: the
        sealed events not revealed (a report is everyone's: they wait for their reveal)."""
        words, name, narrator = self.words, self.name, self.narrator
        for event in events:
            p = event.get("payload") or {}
            kind = event["type"]
            self.seq = event["seq"]
            if kind == "proposal_submitted":
                self.submitted.add(str(p.get("number")))
            if event["seq"] in secret:
                self.sealed = True
                narrator.note(event)
                continue
            lined = kind in REPORT_KINDS and not (
                kind == "rule_changed" and (p.get("cause") or {}).get("kind") == "initial")
            text = narrator.tell(event) if lined else ""
            if not lined:
                narrator.note(event)
            current = self.current
            if name is not None and kind == "var_set" and p.get("player") is None \
                    and p.get("name") == name and p.get("value") is not None:
                self.pending = (period_title(words, name, p.get("value")), event["time"])
            elif name is None and (current is None
                                   or current["start"][:10] != event["time"][:10]):
                self.pending = (event["time"][:10], event["time"])
            # A new period begins with the next command or deadline: what the rules do in
            # reaction to the command that ended a period (its scores) still belongs to it.
            primary = event["actor"] is not None or kind in ("timer_fired", "clock_advanced")
            if self.pending is not None and (primary or current is None or name is None):
                if current is None or self.pending[0] != current["title"]:
                    self._close(current, self.pending[1], self.reports, self.moved)
                    current = self.current = self._open(*self.pending)
                self.pending = None
            if kind == "player_joined":
                if str(p["player"]) not in self.players:
                    self.players.append(str(p["player"]))
                for var, value in (p.get("vars") or {}).items():
                    self.values[(str(p["player"]), var)] = value
            if kind == "var_set" and p.get("player") is not None:
                # Only additions are told as moves; a value set outright is bookkeeping
                # (the round a player last acted in, a number chosen).
                key = (str(p["player"]), str(p["name"]))
                self.values[key] = p.get("value")
                if _is_number(p.get("delta")) and current is not None:
                    self.moved[key] = self.moved.get(key, 0) + p["delta"]
            if current is None:
                current = self.current = self._open(
                    translate("Before the first period", words.language), event["time"])
                current["ours"] = True  # our words, not the rules': a page marks no `lang`
            if lined and text:
                current["lines"].append(text)
                if kind == "proposal_resolved":  # a letter tells these with their votes
                    current.setdefault("resolved", []).append(text)
            current.setdefault("first_seq", event["seq"])  # the events it holds, for a letter
            current["last_seq"] = event["seq"]
            if kind == "notice" and p.get("kind") in words.period_end \
                    and not current.get("ours"):
                # The rules end the period here (Anderwelt G.2(1): at the ZAT), not when the
                # next one begins: its report is due now. What follows, until the next
                # period, is kept apart under the same title.
                title = current["title"]
                self._close(current, event["time"], self.reports, self.moved)
                current = self.current = self._open(title, event["time"])
                current["between"] = True

    def as_of(self, state: GameState) -> list[dict[str, Any]]:
        """The reports at ``state`` (the running period's still open), sharing the closed
        ones with what is kept (callers copy what they hand out)."""
        reports = list(self.reports)
        self._close(copy.deepcopy(self.current), state.time, reports, dict(self.moved))
        if self.pending is not None and self.pending[0] != reports[-1]["title"]:
            reports.append(self._open(*self.pending))
        if reports and reports[-1]["end"] == state.time and not state.ended:
            reports[-1] = {**reports[-1], "end": None}  # the period still running
        # the time after a period the rules ended, until the next begins: only with news
        return [r for r in reports if r["lines"] or (r is reports[-1] and not r.get("between"))]


def period_reports_of(events: list[Event], state: GameState,
                      words: Words) -> list[dict[str, Any]]:
    """The reports of the periods of ``events`` (the whole log), told at once."""
    told = PeriodReports(words, state)
    told.add(events, hidden(events))
    return told.as_of(state)

"""Corrections of the record: annul a past command, add a lost one, or set what the record
should have said at a past moment; the game recomputed from that point (:mod:`.recompute`)
and the difference shown (:mod:`.difference`) before it is confirmed.

The log is never rewritten: a confirmed correction is one event, ``record_corrected``,
carrying the patch from the game as the log made it to the game recomputed (the fold
applies it, so a replay equals the live state) and the difference told to the players.
It is written through the commands' one write path, under the game's lock; a preview
writes nothing. A correction the rules order (``correction_ordered``) is confirmed right
after the command that ordered it, as the next write.
"""

from __future__ import annotations

import json
import logging
import threading
import time as wall
from dataclasses import dataclass, field
from typing import Any

from scriba.kernel import patch
from scriba.kernel.errors import Refused
from scriba.kernel.events import Event, fold, make_event
from scriba.kernel.sealing import hidden
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import normalize
from scriba.service import validation
from scriba.service.commands import Commands
from scriba.service.difference import (
    CommandChange,
    Difference,
    compare,
    correction_letter,
    tell_difference,
)
from scriba.service.errors import InvalidInput
from scriba.service.inputs import Outcome
from scriba.service.letters import current_letter
from scriba.service.messages import refusal_text
from scriba.service.recompute import (
    OverBudget,
    corrected,
    folding,
    is_command,
    keep_notice_seqs,
    read_inputs,
    recompute,
)
from scriba.service.words import _, ruleset_words

log = logging.getLogger("scriba.service")
MAX_INPUTS = 5000  # inputs a correction may decide again
MAX_SECONDS = 120.0  # and the time it may take
MAX_REASON = 2000
SHOWN_KEPT = 8  # previews kept for their confirmation


class CorrectionRefused(InvalidInput):
    """A correction the service will not make; the message says why, in the game's words."""


class LookAgain(CorrectionRefused):
    """The game moved on since the difference was shown: it must be looked at again."""


@dataclass
class Preview:
    """A correction with its difference: before confirming, or as confirmed."""

    game_id: str
    number: int
    correction: dict[str, Any]
    reason: str
    by: str | None
    point: int
    through: int
    difference: Difference
    sentences: list[str]
    confirmed: bool = False
    seq: int | None = None
    at: str | None = None
    case: int | None = None
    patch: list[dict[str, Any]] = field(default_factory=list, repr=False)


def _refuse(language: str, template: str, cls: type[CorrectionRefused] = CorrectionRefused,
            **params: Any) -> CorrectionRefused:
    error = cls(_(template, language, **params))
    error.template, error.params = template, params
    return error


class Corrections:
    """The corrections of the games' records (``Service.corrections``)."""

    def __init__(self, commands: Commands, *, max_inputs: int = MAX_INPUTS,
                 max_seconds: float = MAX_SECONDS) -> None:
        self.commands = commands
        self.max_inputs = max_inputs
        self.max_seconds = max_seconds
        # The last differences shown: confirming one on the game as it was shown needs no
        # second recompute (the log only grows, and the recompute is deterministic).
        self._shown: dict[str, Preview] = {}
        self._shown_lock = threading.Lock()
        commands.add_follow_up(self._follow_ordered)

    # --- reads --------------------------------------------------------------------------
    def preview(self, game_id: str, correction: dict[str, Any], by: str | None = None,
                reason: str | None = None) -> Preview:
        """The difference the correction would make; nothing is written."""
        shown = self._compute(game_id, self.commands.events(game_id), correction, by, reason)
        with self._shown_lock:
            if len(self._shown) >= SHOWN_KEPT:
                self._shown.pop(next(iter(self._shown)))
            self._shown[_key(game_id, correction, by, reason, shown.through)] = shown
        return shown

    def corrections(self, game_id: str) -> list[Preview]:
        """The confirmed corrections of a game, oldest first."""
        return [self._recorded(game_id, e) for e in self.commands.events(game_id)
                if e["type"] == "record_corrected"]

    def superseded(self, game_id: str) -> dict[int, int]:
        """seq of each event decided again by a correction → that correction's number."""
        marks: dict[int, int] = {}
        for e in self.commands.events(game_id):
            if e["type"] == "record_corrected":
                p = e["payload"]
                marks.update({seq: p["number"] for seq in range(p["point"], p["through"] + 1)})
        return marks

    def tell(self, game_id: str, preview: Preview, language: str | None = None) -> list[str]:
        """The difference in sentences in ``language`` (default: the game's)."""
        state = self.commands.load(game_id)
        return tell_difference(preview.difference, ruleset_words(state, language))

    def describe(self, game_id: str, preview: Preview,
                 language: str | None = None) -> tuple[str, list[str]]:
        """The correction told whole (heading, lines): what, by whom, why, its difference;
        as made, or as it would be (a preview), in ``language`` (default: the game's)."""
        state = self.commands.load(game_id)
        fields = {"number": preview.number, "by": preview.by, "reason": preview.reason,
                  "correction": preview.correction, "point": preview.point,
                  "difference": preview.difference}
        return correction_letter(fields, ruleset_words(state, language), preview.confirmed)

    # --- writes -------------------------------------------------------------------------
    def confirm(self, game_id: str, correction: dict[str, Any], by: str | None,
                expected_seq: int, case: int | None = None,
                reason: str | None = None) -> Preview:
        """Recompute and record the correction, if the game is still as it was shown
        (``expected_seq``: its last event then); refused with :class:`LookAgain` if not."""
        with self.commands.game_lock(game_id):
            state = self.commands.load(game_id)
            if state.seq != expected_seq:
                raise _refuse(state.language, "The game has moved on since the difference "
                              "was shown (event {seq} is now its last, not {expected}): "
                              "look at the difference again.", LookAgain, seq=state.seq,
                              expected=expected_seq)
            with self._shown_lock:
                shown = self._shown.pop(_key(game_id, correction, by, reason, state.seq), None)
            if shown is None:
                shown = self._compute(game_id, self.commands.events(game_id), correction, by,
                                      reason)

            def decide(now_state: GameState, now: str) -> tuple[list[Event], Outcome]:
                if now_state.seq != shown.through:  # another process wrote meanwhile
                    raise _refuse(now_state.language, "The game has moved on since the "
                                  "difference was shown (event {seq} is now its last, not "
                                  "{expected}): look at the difference again.", LookAgain,
                                  seq=now_state.seq, expected=shown.through)
                extra = {"case": case} if case is not None else {}
                event = make_event(
                    "record_corrected", now, None, number=shown.number,
                    correction=shown.correction, reason=shown.reason, by=shown.by,
                    point=shown.point, through=shown.through,
                    difference=shown.difference.as_dict(), patch=shown.patch,
                    refused_now=[c.__dict__ for c in shown.difference.refused_now],
                    accepted_now=[c.__dict__ for c in shown.difference.accepted_now], **extra)
                return [event], Outcome(True, "", [event])

            outcome = self.commands.record(game_id, decide)
            return self._recorded(game_id, outcome.events[0])

    def _follow_ordered(self, game_id: str, outcome: Outcome) -> None:
        """Confirm each correction the rules ordered in ``outcome`` (the rules are the
        authority: no one is asked), one after the other."""
        ordered = [e for e in outcome.events or [] if e["type"] == "correction_ordered"]
        if not ordered:
            return
        token = current_letter.set(None)  # not a command of the letter being answered
        try:
            for event in ordered:
                p = event["payload"]
                try:
                    self.confirm(game_id, dict(p["correction"]), None,
                                 self.commands.load(game_id).seq,
                                 case=p["correction"].get("case"),
                                 reason=p.get("reason") or p["correction"].get("reason"))
                except CorrectionRefused as refused:
                    log.warning("%s: the correction ordered by event %s was refused: %s",
                                game_id, event["seq"], refused)
                    self._tell_refused(game_id, event, str(refused))
                except Exception:  # noqa: BLE001 - the command that ordered it stands
                    log.exception("%s: the correction ordered by event %s failed",
                                  game_id, event["seq"])
        finally:
            current_letter.reset(token)

    def _tell_refused(self, game_id: str, ordered: Event, why: str) -> None:
        """An ordered correction refused is not lost without a word: a notice on the
        record says which order was not carried out and why, for the players and the
        officer to take up (a case, a new order, a correction by hand)."""
        def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
            text = _("The correction ordered at {time} was not made: {why}", state.language,
                     time=ordered["time"][:16].replace("T", " "), why=why)
            notice = make_event("notice", now, None, kind="correction_refused", text=text,
                                ordered=ordered["seq"])
            return [notice], Outcome(True, "", [notice])
        self.commands.record(game_id, decide)

    # --- the recompute ------------------------------------------------------------------
    def _compute(self, game_id: str, events: list[Event], correction: Any, by: str | None,
                 reason: str | None) -> Preview:
        live = fold(events)
        lang = live.language
        correction, reason = self._checked(game_id, live, correction, reason)
        if by is not None:  # shown to every player
            by = validation.text(by, "by", lang, limit=100, blank=False)
        started = next((e["seq"] for e in events if e["type"] == "game_started"), 0)
        point = self._point(live, events, started, correction)
        # Earlier corrections recorded after the point are made again with this one (the
        # recompute starting early enough for each): racing corrections compose.
        records = [e for e in events if e["type"] == "record_corrected"]
        while (earlier := min((r["payload"]["point"] for r in records if r["seq"] >= point),
                              default=point)) < point:
            point = earlier
        redone = [(r["payload"]["correction"], False) for r in records if r["seq"] >= point]
        engine = self.commands.engine
        inputs = corrected(read_inputs(events[point - 1:], started, self._kept(game_id),
                                       engine, folding(events)),
                           [*redone, (correction, True)])
        if len(inputs) > self.max_inputs:
            raise _refuse(lang, "This correction would decide {count} commands again; at "
                          "most {limit} may be: nothing was changed.", count=len(inputs),
                          limit=self.max_inputs)
        try:
            after, decided = recompute(engine, fold(events[:point - 1]), inputs, live.time,
                                       deadline=wall.monotonic() + self.max_seconds)
        except OverBudget:
            raise _refuse(lang, "Recomputing the game after this correction takes longer "
                          "than {seconds} seconds: nothing was changed.",
                          seconds=int(self.max_seconds)) from None
        except Refused as refusal:  # the clock moved on and the rules ran away
            raise CorrectionRefused(refusal_text(refusal, lang)) from None
        keep_notice_seqs(after, live, point, live.seq + 1)
        # whether each command stands as the record says now (earlier corrections included)
        standing = {c["seq"]: accepted for r in records
                    for key, accepted in (("refused_now", False), ("accepted_now", True))
                    for c in r["payload"].get(key) or []}
        sealed = hidden(events)
        refused_now, accepted_now = [], []
        for d in decided:
            item = d.input
            if item.kind != "command" or item.command is None:
                continue
            if item.new and not d.accepted:
                raise _refuse(lang, "The command added would be refused: {message}",
                              message=d.message)
            secret = item.seq in sealed  # a sealed move not revealed: not its contents
            change = CommandChange(item.seq, item.command.get("actor"),
                                   str(item.command.get("action")),
                                   {} if secret else dict(item.command.get("args") or {}),
                                   "" if secret else d.message)
            was = standing.get(item.seq, item.accepted)
            if item.seq and was and not d.accepted:
                refused_now.append(change)
            elif item.seq and not was and d.accepted:
                accepted_now.append(change)
        private = frozenset(key for state in (live, after)
                            for key, declared in engine.declarations(state).variables.items()
                            if declared.get("private"))
        difference = compare(live, after, refused_now, accepted_now, private)
        number = 1 + sum(1 for e in events if e["type"] == "record_corrected")
        return Preview(game_id, number, correction, reason, by, point, live.seq, difference,
                       tell_difference(difference, ruleset_words(after)),
                       patch=patch.diff(_comparable(live), _comparable(after)))

    def _checked(self, game_id: str, state: GameState, correction: Any,
                 reason: str | None) -> tuple[dict[str, Any], str]:
        """The correction in its normal shape, or a refusal saying what is wrong."""
        lang = state.language
        if not isinstance(correction, dict) or correction.get("kind") not in (
                "annul", "add", "set"):
            raise _refuse(lang, "A correction annuls a command, adds one or sets what the "
                          "record should have said.")
        if correction.get("game") not in (None, game_id):
            raise _refuse(lang, "This correction is of game {other}, not of this game.",
                          other=str(correction["game"])[:100])
        reason = reason if reason is not None else correction.get("reason")
        if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
            raise _refuse(lang, "A correction needs its reason (up to {limit} characters).",
                          limit=MAX_REASON)
        reason = validation.text(reason, "reason", lang, limit=MAX_REASON)  # hostile input
        kind = correction["kind"]
        shaped: dict[str, Any] = {"kind": kind}
        if kind == "annul":
            seq = correction.get("event")
            if not isinstance(seq, int) or isinstance(seq, bool):
                raise _refuse(lang, "Say which event to annul by its number.")
            shaped["event"] = seq
            return shaped, reason.strip()
        try:
            shaped["at"] = normalize(str(correction.get("at")))
        except ValueError:
            raise _refuse(lang, "Say when, as a date and time.") from None
        if kind == "add":
            actor, action = correction.get("actor"), correction.get("action")
            args = correction.get("args") or {}
            if not isinstance(actor, str) or not isinstance(action, str) \
                    or not isinstance(args, dict):
                raise _refuse(lang, "A command to add needs its player, its action and its "
                              "arguments.")
            # checked as a command sent now would be: text, sizes, nesting, look-alikes
            actor, action, args = validation.command_for(state, actor, action, args)
            shaped.update(actor=actor, action=action, args=args)
        else:
            game_vars = correction.get("vars") or {}
            players = correction.get("players") or {}
            offices = correction.get("offices") or {}
            if not all(isinstance(x, dict) for x in (game_vars, players, offices)) or not all(
                    isinstance(v, dict) for v in players.values()):
                raise _refuse(lang, "Say what the record should have said: variables, "
                              "players' variables, offices.")
            unknown = [p for p in players if p not in state.players]
            if unknown:
                raise _refuse(lang, "There is no player named {player}.", player=unknown[0])
            for name, given in (("vars", game_vars), ("players", players),
                                ("offices", offices)):
                validation.value(given, name, lang)  # JSON data, bounded
            shaped.update(vars=game_vars, players=players, offices=offices)
        return shaped, reason.strip()

    def _point(self, live: GameState, events: list[Event], started: int,
               correction: dict[str, Any]) -> int:
        """The first event of the log decided again."""
        lang = live.language
        if correction["kind"] == "annul":
            seq = correction["event"]
            if not 0 < seq <= live.seq:
                raise _refuse(lang, "There is no event {seq} in this game.", seq=seq)
            if seq <= started:
                raise _refuse(lang, "Event {seq} is before the game's start.", seq=seq)
            event = events[seq - 1]
            if event["type"] in ("record_corrected", "correction_ordered"):
                raise _refuse(lang, "A correction cannot be corrected: correct the record "
                              "after it.")
            if not is_command(event, started):
                raise _refuse(lang, "Event {seq} is not a player's command: only what a "
                              "player sent can be annulled.", seq=seq)
            return seq
        at = correction["at"]
        start = events[started - 1]["time"] if started else live.time
        if at < start:
            raise _refuse(lang, "That is before the game's start.")
        if at > self.commands.now(live):
            raise _refuse(lang, "That is in the future.")
        return next((e["seq"] for e in events if e["seq"] > started and e["time"] > at),
                    live.seq + 1)

    def _kept(self, game_id: str) -> dict[int, dict[str, Any]]:
        """The commands as their interfaces kept them, by the seqs of the events they made."""
        kept: dict[int, dict[str, Any]] = {}
        for row in self.commands.store.inbound(game_id):
            outcome = row.get("outcome")
            if isinstance(outcome, dict):
                for seq in outcome.get("seqs") or []:
                    kept[seq] = row
        return kept

    def _recorded(self, game_id: str, event: Event) -> Preview:
        p = event["payload"]
        difference = Difference.from_dict(p.get("difference") or {})
        state = self.commands.load(game_id)
        return Preview(game_id, p["number"], p["correction"], p["reason"], p.get("by"),
                       p["point"], p["through"], difference,
                       tell_difference(difference, ruleset_words(state)), confirmed=True,
                       seq=event["seq"], at=event["time"], case=p.get("case"))


def _key(game_id: str, correction: Any, by: str | None, reason: str | None,
         seq: int) -> str:
    return json.dumps([game_id, correction, by, reason, seq], sort_keys=True, default=str)


def _comparable(state: GameState) -> dict[str, Any]:
    """The state as the patch sees it: its seq and time stay the log's."""
    return {k: v for k, v in state.to_dict().items() if k not in ("seq", "time")}

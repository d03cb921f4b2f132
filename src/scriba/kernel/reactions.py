"""The reaction loop: apply a command's events one by one, asking the rules to react.

A :class:`Run` applies events to the state it is given (inside a
:func:`scriba.kernel.journal.trial`, which undoes them afterwards) and collects them.
Each event is offered to the rules' ``on_<type>`` hooks; the effects they return become
further events, and adopted rule changes become ``rule_changed`` events before anything
else queued. The limits of :mod:`scriba.kernel.limits` bound a run: past them a rule's
reaction is aborted (recorded), never the command. Every abort is its own rule's: a
nested call that fails (a ``transform`` made by another rule's code) is recorded as the
abort of the rule whose hook it called, and a rule the host no longer calls in this
command (it has spent what it may) is recorded once per hook (:meth:`Run.aborts_of`).
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import TYPE_CHECKING, Any

from scriba.kernel import changes as rule_changes
from scriba.kernel.effects import EffectContext, effect_to_events, proposal_cause
from scriba.kernel.errors import InvalidEffect, Refused
from scriba.kernel.events import Event, apply_event, make_event
from scriba.kernel.host import HookResult
from scriba.kernel.in_force import aborted
from scriba.kernel.limits import MAX_EFFECTS_PER_CALL, MAX_EVENTS_PER_COMMAND, MAX_REACTION_DEPTH
from scriba.kernel.registry import (
    COMMANDS,
    NOT_DISPATCHED,
    action_hook,
    reacts,
    undeclared_notice,
)
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import to_ts
from scriba.kernel.view import GameView, build_view

if TYPE_CHECKING:
    from scriba.kernel.engine import Engine

# A fault of the kernel itself, not of a rule, could still loop: this stops it.
HARD_LIMIT = 4 * MAX_EVENTS_PER_COMMAND
# Queued events whose reactions are asked in the same request as the current one's.
LOOK_AHEAD = 32


class Run:
    """One decision in progress: the working state, the events so far, the queue."""

    def __init__(self, engine: Engine, state: GameState, time: str) -> None:
        self.engine = engine
        self.rules = engine.rules
        self.state = state
        self.time = time
        self.events: list[Event] = []
        self.queue: deque[Event] = deque()
        self._depth: dict[int, int] = {}  # id(event) -> how many reactions led to it
        self._stopped: set[tuple[str, str]] = set()  # (rule, hook) aborted by a limit
        self._asked: dict[int, list[HookResult]] = {}  # id(event) -> answers asked ahead

    def push(self, events: list[Event], depth: int = 0) -> None:
        for event in events:
            self._depth[id(event)] = depth
        self.queue.extend(events)

    def precedence(self) -> list[str]:
        """The rules' order; a ``transform_rule_order`` that aborted is recorded."""
        failed: list[Event] = []
        order = self.rules.precedence(self.state, failed)
        self.push(failed)
        return order

    def call(self, targets: list[str], hook: str, view: GameView | dict[str, Any],
              args: list[Any]) -> list[HookResult]:
        return self.engine.host.call(self.rules.coded_rules(self.state), targets, hook,
                                     view, args)

    def call_all(self, hook: str, view: GameView | dict[str, Any],
                 args: list[Any]) -> list[HookResult]:
        self.precedence()
        targets = self.rules.hooked(self.state, hook)
        return self.call(targets, hook, view, args) if targets else []

    def hooked(self, hook: str, action: object = None) -> list[str]:
        """Rules to ask with ``hook``: those defining it or, for ``check`` and
        ``on_action_taken``, the hook of this one ``action``, in precedence order. A rule
        defining both is asked once: its generated dispatcher calls the general hook,
        then the action's (:func:`scriba.rulecode.callcode._dispatcher`)."""
        targets = self.rules.hooked(self.state, hook)
        specific = action_hook(hook, action)
        extra = self.rules.hooked(self.state, specific) if specific else []
        if not extra:
            return targets
        wanted = {*targets, *extra}
        return [rid for rid, _ in self.rules.coded_rules(self.state) if rid in wanted]

    def checking(self, command: dict[str, Any]) -> list[str]:
        """Rules to ask whether ``command`` (as a check hook gets it) may happen: those
        with ``check`` or ``check_<its action>``, less those whose ``reacts_to()`` names
        other commands (``{"command": {"kind": ["propose"]}}``)."""
        targets = self.hooked("check", command["action"])
        filters = self.rules.declarations(self.state).reacts if targets else {}
        if not filters:
            return targets
        asked = {"type": COMMANDS, "payload": command}
        return [rid for rid in targets if reacts(filters.get(rid), asked)]

    def reacting(self, event: Event) -> list[str]:
        """Rules asked about ``event``: with its ``on_`` hook (or, for an action, that
        action's ``on_action_<name>``), less those its ``reacts_to()`` leaves out."""
        hook = f"on_{event['type']}"
        specific = action_hook(hook, event["payload"].get("action"))
        if not specific or not self.rules.hooked(self.state, specific):
            return self.rules.reacting(self.state, event)
        filters = self.rules.declarations(self.state).reacts
        return [rid for rid in self.hooked(hook, event["payload"].get("action"))
                if reacts(filters.get(rid), event)]

    def settle(self) -> None:
        """Apply queued events one by one, asking the rules to react to each."""
        while self.queue:
            event = self.queue.popleft()
            depth = self._depth.get(id(event), 0)
            event = self._apply(event)
            self.events.append(event)
            if len(self.events) > HARD_LIMIT:
                raise Refused("runaway_reactions", count=HARD_LIMIT)
            consequences = self._consequences(event)
            # With no consequences, the events queued behind this one come next, in this
            # order, whatever the rules answer: they can be asked about together.
            reactions = self._react(event, depth, look_ahead=not consequences)
            for produced in consequences:
                self._depth[id(produced)] = depth
            for produced in reactions:
                self._depth[id(produced)] = depth + 1
            # Rule changes happen before anything else queued, so that a second proposal
            # resolved in the same reaction sees the rules the first one made.
            self.queue.extendleft(reversed(consequences))
            self.queue.extend(reactions)

    def _apply(self, event: Event) -> Event:
        """Apply a queued event (numbered now); a rule change that no longer applies
        becomes ``rule_change_failed``. Returns the event applied."""
        journal = self.state.__dict__.get("_journal")
        event["seq"] = self.state.seq + 1
        mark = journal.mark() if journal is not None else None
        try:
            apply_event(self.state, event)
        except Refused as refusal:  # a rule change that no longer applies
            if journal is not None and mark is not None:
                journal.rollback(mark)
            event = make_event("rule_change_failed", event["time"], None,
                               **event["payload"], reason=refusal.message_id,
                               details=refusal.params)
            event["seq"] = self.state.seq + 1
            apply_event(self.state, event)
        if event["type"] == "var_set" and "delta" in event["payload"]:
            # record the resulting value, for readers and for the rules reacting to it
            p = event["payload"]
            holder = self.state.vars if p["player"] is None else \
                self.state.players[p["player"]]["vars"]
            p["value"] = holder[p["name"]]
        return event

    def aborts_of(self, result: HookResult, hook: str, time: str) -> list[Event]:
        """The records of what was aborted in a call: the nested calls it made (each its
        own rule's), then the call itself. A rule that was not called because it had
        nothing left to spend in this command is recorded once per hook."""
        events = [event for nested in result.aborts
                  for event in self.aborts_of(nested, nested.hook or hook, time)]
        if result.error:
            key = (result.rule_id, hook)
            if not result.stopped or key not in self._stopped:
                if result.stopped:
                    self._stopped.add(key)
                events.append(aborted(result.rule_id, hook, result.error, time))
        return events

    def _limited(self, hook: str, targets: list[str], time: str, reason: str) -> list[Event]:
        """Every rule that would react is stopped by a limit: recorded once per rule."""
        events = []
        for rule_id in targets:
            if (rule_id, hook) not in self._stopped:
                self._stopped.add((rule_id, hook))
                events.append(aborted(rule_id, hook, reason, time))
        return events

    def _react(self, event: Event, depth: int, look_ahead: bool = False) -> list[Event]:
        asked = self._asked.pop(id(event), None)  # answered ahead (see _ask_ahead)
        if event["type"] in NOT_DISPATCHED:
            return []
        hook = f"on_{event['type']}"
        targets = self.reacting(event)
        if not targets:
            return []
        time = event["time"]
        if depth >= MAX_REACTION_DEPTH:
            return self._limited(hook, targets, time, f"stopped: hooks triggered hooks "
                                 f"more than {MAX_REACTION_DEPTH} times in a chain in one "
                                 "command")
        if self._pending() >= MAX_EVENTS_PER_COMMAND:
            return self._limited(hook, targets, time, f"stopped: the command reached "
                                 f"{MAX_EVENTS_PER_COMMAND} events, the most one command "
                                 "may make")
        if asked is None:
            view = build_view(self.state, self.precedence(), now=time)
            asked = (self._ask_ahead(event, hook, targets, view) if look_ahead else None) \
                or self.call(targets, hook, view, [event_for_rules(event)])
        initials = self.rules.declarations(self.state).initials()
        produced: list[Event] = []
        for result in asked:
            produced += self.aborts_of(result, hook, time)
            if result.error:
                continue
            try:
                converted = self._convert(result, hook, EffectContext(
                    time, result.rule_id, initials, trigger=event), len(produced))
            except InvalidEffect as invalid:
                produced.append(aborted(result.rule_id, hook, str(invalid), time))
                continue
            produced += converted
        return produced

    def _ask_ahead(self, event: Event, hook: str, targets: list[str],
                   view: GameView) -> list[HookResult] | None:
        """Ask the rules about ``event`` and, in the same request, about the events queued
        behind it, each with the view it will be reacted to with: they are applied next,
        in this order, whatever the rules answer (reactions join the end of the queue).
        To build their views they are applied and then undone; their answers are kept
        for when each comes up. None when there is nothing to ask ahead."""
        journal = self.state.__dict__.get("_journal")
        if journal is None or not any(
                q["type"] not in NOT_DISPATCHED and self.reacting(q)
                for q in itertools.islice(self.queue, LOOK_AHEAD)):
            return None  # nobody to ask about what is queued (as far as can be told now)
        host = self.engine.host
        order = self.precedence()
        calls = [(event, targets, hook, host.seal(view))]
        mark = journal.mark()
        try:
            for queued in itertools.islice(self.queue, LOOK_AHEAD):
                if queued["type"] == "rule_changed" or \
                        self._depth.get(id(queued), 0) >= MAX_REACTION_DEPTH:
                    break  # a rule change may fail, and become another event
                self._apply(queued)
                queued_targets = [] if queued["type"] in NOT_DISPATCHED else \
                    self.reacting(queued)
                if queued_targets:
                    calls.append((queued, queued_targets, f"on_{queued['type']}", host.seal(
                        build_view(self.state, order, now=queued["time"]))))
                if _may_insert(queued):
                    break  # what the kernel derives from it comes next: not known yet
        finally:
            journal.rollback(mark)
        if len(calls) == 1:
            return None
        answers = host.call_many(self.rules.coded_rules(self.state), [
            (rules, name, sealed, [event_for_rules(e)]) for e, rules, name, sealed in calls])
        if answers is None:  # the request failed as a whole: each is asked on its own
            return None
        for (queued, *_), results in zip(calls[1:], answers[1:], strict=True):
            self._asked[id(queued)] = results
        return answers[0]

    def _pending(self) -> int:
        return len(self.events) + len(self.queue)

    def _convert(self, result: HookResult, hook: str, ctx: EffectContext,
                 produced: int) -> list[Event]:
        effects = result.value or []
        if isinstance(effects, dict):
            effects = [effects]
        if not isinstance(effects, list):
            raise InvalidEffect(f"{hook} must return a list of effects, got "
                                f"{repr(effects)[:200]}")
        if len(effects) > MAX_EFFECTS_PER_CALL:
            raise InvalidEffect(f"{hook} returned {len(effects)} effects; one call may return "
                                f"at most {MAX_EFFECTS_PER_CALL}")
        converted: list[Event] = []
        code = dict(self.engine.coded_rules(self.state)).get(result.rule_id, "")
        declared = self.engine.info(code).declarations.get("notices") if code else None
        for effect in effects:
            problem = undeclared_notice(effect, declared)
            if problem:
                raise InvalidEffect(problem)
            converted += effect_to_events(self.state, effect, ctx)
        if self._pending() + produced + len(converted) > MAX_EVENTS_PER_COMMAND:
            raise InvalidEffect(f"{hook} would take the command past {MAX_EVENTS_PER_COMMAND} "
                                "events, the most one command may make")
        return converted

    def _consequences(self, event: Event) -> list[Event]:
        """What the kernel itself derives from an event: applying adopted rule changes."""
        payload = event["payload"]
        applies_proposal = (event["type"] == "proposal_resolved" and payload.get("apply")) or \
            (event["type"] == "changes_due" and "proposal" in payload)
        if applies_proposal:
            proposal = self.state.proposals[str(payload["proposal"])]
            return self._change_events(proposal["changes"], proposal_cause(proposal),
                                       event["time"], proposal["number"])
        if event["type"] == "changes_due":
            return self._change_events(payload["changes"], payload["cause"], event["time"], None)
        if event["type"] == "rule_changed":
            return self._new_variables(event["time"])
        return []

    def _change_events(self, changes: list[dict[str, Any]], cause: dict[str, Any], time: str,
                       proposal: int | None) -> list[Event]:
        # Changes touch a rule's fields, attributes and history: a copy of those suffices.
        scratch = {rid: {**r, "attributes": dict(r["attributes"]), "history": []}
                   for rid, r in self.state.rules.items()}
        events: list[Event] = []
        taken: list[str] = []
        for change in changes:
            change = dict(change)
            if change["type"] == "enact" and not change.get("rule"):
                change["rule"] = self._new_rule_number(scratch, taken, change, proposal, time)
            try:
                rule_changes.apply_change(scratch, change, cause, time)
            except Refused as refusal:
                events.append(make_event("rule_change_failed", time, None, change=change,
                                         cause=cause, reason=refusal.message_id,
                                         details=refusal.params))
                continue
            taken.append(str(change.get("rule")))
            events.append(make_event("rule_changed", time, None, change=change, cause=cause))
        return events

    def _new_rule_number(self, rules: dict[str, dict[str, Any]], taken: list[str],
                         change: dict[str, Any], proposal: int | None, time: str) -> str:
        numbers = [int(rid) for rid in list(rules) + taken if rid.isdigit()]
        default = str(max(numbers) + 1 if numbers else 1)
        value = self.transform("rule_number", default,
                               {"proposal": proposal, "change": change, "taken": taken}, time)
        value = str(value)
        if value in rules and rules[value]["in_force"] or value in taken:
            return default
        return value

    def transform(self, name: str, value: Any, context: Any, now: str) -> Any:
        """``value`` passed through the rules' ``transform_<name>``; aborts are recorded."""
        hook = f"transform_{name}"
        order = self.precedence()
        if not self.rules.hooked(self.state, hook):
            return value
        view = build_view(self.state, order, now=now)
        result, failed = self.engine.host.transform(self.rules.coded_rules(self.state), name,
                                                    view, value, context)
        self.push([event for result in failed
                   for event in self.aborts_of(result, result.hook or hook, now)])
        return result

    def _new_variables(self, time: str) -> list[Event]:
        decl = self.rules.declarations(self.state)
        events = []
        for (scope, name), d in decl.variables.items():
            initial = d.get("initial", 0)
            if scope == "game" and name not in self.state.vars:
                events.append(make_event("var_set", time, None, player=None, name=name,
                                         value=initial))
            elif scope == "player":
                events += [make_event("var_set", time, None, player=p, name=name, value=initial)
                           for p, data in self.state.players.items() if name not in data["vars"]]
        return events


def event_for_rules(event: Event) -> dict[str, Any]:
    return {"type": event["type"], "seq": event["seq"], "time": event["time"],
            "time_ts": to_ts(event["time"]), "actor": event["actor"], **event["payload"]}


def _may_insert(event: Event) -> bool:
    """Whether the kernel may derive events from this one (:meth:`Run._consequences`),
    which go before the rest of the queue, or turn it into another when applying it."""
    kind = event["type"]
    return kind in ("changes_due", "rule_changed") or \
        (kind == "proposal_resolved" and bool(event["payload"].get("apply")))

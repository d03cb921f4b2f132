"""The kernel's decisions: commands and due timers in, events out.

The engine knows the nouns of Nomic (player, rule, proposal, vote, office, variable,
timer) and how to apply a rule change. Everything else — who may act, how votes count,
when a period ends, who wins — is asked of the rules in force through their hooks
(see :mod:`scriba.rulecode.api`). The engine works on a copy of the state and returns
the events to append; nothing is half-applied: a refusal discards them all.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from scriba.kernel import changes as rule_changes
from scriba.kernel.effects import EffectContext, effect_to_events
from scriba.kernel.errors import InvalidEffect, Refused
from scriba.kernel.events import Event, apply_event, make_event
from scriba.kernel.host import CodeInfo, HookResult, RuleHost, RuleRef
from scriba.kernel.registry import NOT_DISPATCHED, undeclared_notice
from scriba.kernel.state import ACTIVE, GameState, natural_key
from scriba.kernel.timeutil import normalize, to_ts
from scriba.kernel.view import build_view

CANONICAL_CHOICES = ("for", "against", "abstain")
# A command whose reactions keep producing events past this is refused as runaway.
MAX_EVENTS_PER_COMMAND = 5000
_KIND_PARAMS: dict[str, dict[str, str]] = {
    "propose": {"changes": "changes", "label": "str?", "title": "str?", "text": "str?"},
    "vote": {"proposal": "proposal", "choice": "any"},
}


@dataclass
class Command:
    actor: str | None
    action: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Declarations:
    actions: dict[str, dict[str, Any]]
    variables: dict[tuple[str, str], dict[str, Any]]
    offices: dict[str, dict[str, Any]]

    def initials(self) -> dict[tuple[str, str], Any]:
        return {key: decl.get("initial", 0) for key, decl in self.variables.items()}


class Engine:
    def __init__(self, host: RuleHost) -> None:
        self.host = host
        self._order_cache: dict[tuple, list[str]] = {}
        self._infos: dict[str, CodeInfo] = {}

    # --- reading the rules in force ---------------------------------------------------
    def info(self, code: str) -> CodeInfo:
        """What a piece of code defines; cached by the code itself (strings cache their hash)."""
        info = self._infos.get(code)
        if info is None:
            info = self.host.inspect(code)
            if len(self._infos) > 4096:
                self._infos.clear()
            self._infos[code] = info
        return info

    def coded_rules(self, state: GameState) -> list[RuleRef]:
        """Rules in force that have code, in precedence order."""
        return [(rid, state.rules[rid]["code"]) for rid in self.precedence(state)
                if state.rules[rid]["code"]]

    def precedence(self, state: GameState) -> list[str]:
        """Rule ids in force, in the order rules are asked; itself decided by rules."""
        in_force = sorted((r["id"] for r in state.rules_in_force()), key=natural_key)
        fingerprint = tuple((rid, repr(sorted(state.rules[rid]["attributes"].items())),
                             state.rules[rid]["code"]) for rid in in_force)
        if fingerprint not in self._order_cache:
            if len(self._order_cache) > 256:
                self._order_cache.clear()
            default = [(rid, state.rules[rid]["code"]) for rid in in_force
                       if state.rules[rid]["code"] and
                       "transform_rule_order" in self.info(state.rules[rid]["code"]).hooks]
            order = in_force
            if default:
                view = build_view(state, in_force)
                value, _ = self.host.transform(default, "rule_order", view, in_force, {})
                if isinstance(value, list) and sorted(map(str, value)) == sorted(in_force):
                    order = [str(v) for v in value]
            self._order_cache[fingerprint] = order
        return self._order_cache[fingerprint]

    def declarations(self, state: GameState) -> Declarations:
        actions: dict[str, dict[str, Any]] = {}
        variables: dict[tuple[str, str], dict[str, Any]] = {}
        offices: dict[str, dict[str, Any]] = {}
        for rule_id, code in self.coded_rules(state):
            declared = self.info(code).declarations
            for action in declared.get("actions", []):
                actions.setdefault(action["name"], {**action, "rule": rule_id})
            for variable in declared.get("variables", []):
                key = (variable.get("scope", "player"), variable["name"])
                variables.setdefault(key, {**variable, "rule": rule_id})
            for office in declared.get("offices", []):
                office = office if isinstance(office, dict) else {"name": office}
                offices.setdefault(office["name"], {**office, "rule": rule_id})
        return Declarations(actions, variables, offices)

    # --- creating a game --------------------------------------------------------------
    def create(self, spec: dict[str, Any], time: str) -> tuple[GameState, list[Event]]:
        """Events that create a game: its rules, initial variables, players and offices."""
        time = normalize(time)
        created = make_event("game_created", time, None, **spec["game"])
        for rule in created["payload"]["rules"]:
            if rule.get("code"):
                error = self.info(rule["code"]).error
                if error:
                    raise Refused("rule_code_invalid", rule=rule["id"], error=error)
        run = _Run(self, GameState(), time)
        run.push([created])
        run.settle()
        decl = self.declarations(run.state)
        initial_vars = [make_event("var_set", time, None, player=None, name=name,
                                   value=spec.get("vars", {}).get(name, d.get("initial", 0)))
                        for (scope, name), d in decl.variables.items() if scope == "game"]
        initial_vars += [make_event("var_set", time, None, player=None, name=k, value=v)
                         for k, v in spec.get("vars", {}).items()
                         if ("game", k) not in decl.variables]
        run.push(initial_vars)
        for player in spec.get("players", []):
            name, values = (player, {}) if isinstance(player, str) else (player["name"],
                                                                          player.get("vars", {}))
            run.push([self._join_event(run.state, name, time, None, values)])
        for office, holder in (spec.get("offices") or {}).items():
            run.push([make_event("office_set", time, None, office=office, holder=holder)])
        run.push([make_event("game_started", time, None)])
        run.settle()
        return run.state, run.events

    def admit(self, state: GameState, name: str, now: str) -> list[Event]:
        """Events of a player added by the game's officer (not through a rule's action)."""
        run = _Run(self, state.copy(), normalize(now))
        run.push([self._join_event(run.state, name, normalize(now), None, {})])
        run.settle()
        return run.events

    def _join_event(self, state: GameState, name: str, time: str, actor: str | None,
                    values: dict[str, Any]) -> Event:
        decl = self.declarations(state)
        initial = {n: d.get("initial", 0) for (scope, n), d in decl.variables.items()
                   if scope == "player"}
        return make_event("player_joined", time, actor, player=name, vars={**initial, **values})

    # --- commands -----------------------------------------------------------------------
    def handle(self, state: GameState, command: Command, now: str) -> list[Event]:
        """Events for an accepted command; raises :class:`Refused` otherwise."""
        now = normalize(now)
        if state.ended:
            raise Refused("game_ended")
        decl = self.declarations(state)
        action = decl.actions.get(command.action)
        if action is None:
            raise Refused("unknown_action", action=command.action,
                          available=", ".join(sorted(decl.actions)) or "-")
        self._check_actor(state, command, action)
        args = self._check_args(state, command, action)
        run = _Run(self, state.copy(), now)
        first = self._primary_event(run.state, command, action, args, now)
        view = build_view(run.state, self.precedence(run.state), now=now)
        request = {"actor": command.actor, "action": command.action,
                   "kind": action.get("kind", "plain"), "args": args}
        aborts: list[Event] = []
        for result in run.call_all("check", view, [request]):
            if result.error:
                aborts.append(_aborted(result.rule_id, "check", result.error, now))
            elif result.value:
                message = result.value.get("message") if isinstance(result.value, dict) \
                    else str(result.value)
                raise Refused.by_rule(str(message), result.rule_id)
        run.push(aborts + [first])
        run.settle()
        return run.events

    def _check_actor(self, state: GameState, command: Command, action: dict[str, Any]) -> None:
        who = action.get("who", "player")
        allowed = who if isinstance(who, list) else [who]
        actor = command.actor
        is_player = actor in state.players and state.players[actor]["status"] == ACTIVE
        kind = action.get("kind", "plain")
        if kind == "join" and is_player:
            raise Refused("already_player", player=actor)
        for option in allowed:
            if option == "anyone" or (option == "player" and is_player):
                return
            if option.startswith("office:") and state.offices.get(option[7:]) == actor \
                    and actor is not None:
                return
        offices = [o[7:] for o in allowed if o.startswith("office:")]
        if offices:
            raise Refused("not_office_holder", actor=actor or "?", action=command.action,
                          office=", ".join(offices))
        raise Refused("not_a_player", actor=actor or "?")

    def _check_args(self, state: GameState, command: Command,
                    action: dict[str, Any]) -> dict[str, Any]:
        kind = action.get("kind", "plain")
        params = {**_KIND_PARAMS.get(kind, {}), **(action.get("params") or {})}
        args = dict(command.args)
        unknown = sorted(set(args) - set(params))
        if unknown:
            raise Refused("unknown_argument", action=command.action, argument=", ".join(unknown),
                          expected=", ".join(params) or "-")
        for name, type_ in params.items():
            optional = type_.endswith("?")
            type_ = type_.rstrip("?")
            if args.get(name) is None:
                if not optional:
                    raise Refused("missing_argument", action=command.action, argument=name)
                args.pop(name, None)
                continue
            args[name] = _coerce(state, command.action, name, type_, args[name])
        for name, type_ in params.items():
            if type_.rstrip("?") == "changes" and name in args:
                args[name] = self._check_changes(state, args[name])
        if kind == "propose" and args.get("label") and state.proposal_by_label(str(args["label"])):
            raise Refused("label_taken", label=args["label"])
        if kind == "vote":
            proposal = state.proposals[str(args["proposal"])]
            if proposal["status"] != "open":
                raise Refused("proposal_closed", proposal=proposal.get("label") or
                              proposal["number"], status=proposal["status"])
            args["choice"] = _choice(action, args["choice"])
        return args

    def _check_changes(self, state: GameState, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, list) or not raw:
            raise Refused("changes_empty")
        changes = [rule_changes.normalize_change(c) for c in raw]
        scratch = copy.deepcopy({rid: {**r, "history": []} for rid, r in state.rules.items()})
        for change in changes:
            for code in rule_changes.codes_in(change):
                error = self.info(code).error
                if error:
                    raise Refused("rule_code_invalid", rule=change.get("rule") or "new",
                                  error=error)
            if change["type"] != "enact" or change.get("rule"):
                rule_changes.check_change_applies(scratch, change)
            if change["type"] != "enact":
                rule_changes.apply_change(scratch, change, {}, state.time or "0000-00-00")
        return changes

    def _primary_event(self, state: GameState, command: Command, action: dict[str, Any],
                       args: dict[str, Any], now: str) -> Event:
        kind = action.get("kind", "plain")
        actor = command.actor
        if kind == "propose":
            number = self._proposal_number(state, args, actor, now)
            extra = {k: v for k, v in args.items()
                     if k not in ("changes", "label", "title", "text")}
            return make_event("proposal_submitted", now, actor, number=number,
                              label=args.get("label") or str(number), author=actor,
                              title=args.get("title", ""), text=args.get("text", ""),
                              changes=args.get("changes", []), data=extra)
        if kind == "vote":
            extra = {k: v for k, v in args.items() if k not in ("proposal", "choice")}
            return make_event("vote_cast", now, actor, proposal=int(args["proposal"]),
                              player=actor, choice=args["choice"], data=extra)
        if kind == "join":
            return self._join_event(state, str(actor), now, actor, {})
        if kind == "leave":
            return make_event("player_status", now, actor, player=actor, status="left")
        return make_event("action_taken", now, actor, action=command.action, args=args)

    def _proposal_number(self, state: GameState, args: dict[str, Any], actor: str | None,
                         now: str) -> int:
        numbers = [int(n) for n in state.proposals if str(n).lstrip("-").isdigit()]
        default = max(numbers) + 1 if numbers else int(state.settings.get("first_proposal", 1))
        value = self._transform(state, "proposal_number", default,
                                {"author": actor, "args": args}, now)
        if not isinstance(value, int) or str(value) in state.proposals:
            return default  # a number already given never names a second proposal
        return value

    def _transform(self, state: GameState, name: str, value: Any, context: Any,
                   now: str) -> Any:
        order = self.coded_rules(state)
        if not any(f"transform_{name}" in self.info(code).hooks for _, code in order):
            return value
        view = build_view(state, self.precedence(state), now=now)
        result, _aborts = self.host.transform(order, name, view, value, context)
        return result

    # --- time -------------------------------------------------------------------------
    def due_timers(self, state: GameState, now: str) -> list[dict[str, Any]]:
        now = normalize(now)
        return sorted((t for t in state.timers.values() if t["at"] <= now),
                      key=lambda t: (t["at"], int(t["id"].lstrip("t"))))

    def fire_next_timer(self, state: GameState, now: str) -> list[Event]:
        """Events of the earliest due timer firing at its own time, or [] if none is due."""
        due = self.due_timers(state, now)
        if not due or state.ended:
            return []
        timer = due[0]
        at = max(timer["at"], state.time)
        run = _Run(self, state.copy(), at)
        run.push([make_event("timer_fired", at, None, **timer)])
        run.settle()
        return run.events

    def fire_due_timers(self, state: GameState, now: str) -> list[Event]:
        """Events of every timer due by ``now``, each firing once at its own time, in order
        (timers that the reactions set and that are due by then fire too)."""
        work = state.copy()
        events: list[Event] = []
        while fired := self.fire_next_timer(work, now):
            for event in fired:
                apply_event(work, event)
            events += fired
        return events

    def advance(self, state: GameState, now: str) -> list[Event]:
        """Events that move the clock to ``now``: due timers in order, then the move."""
        now = normalize(now)
        events = self.fire_due_timers(state, now)
        run = _Run(self, state.copy(), now)
        for event in events:
            apply_event(run.state, event)
        run.events = events
        if now > run.state.time:
            run.push([make_event("clock_advanced", now, None, to=now)])
            run.settle()
        return run.events

    # --- queries ----------------------------------------------------------------------
    def query(self, state: GameState, name: str, args: dict[str, Any], now: str) -> Any:
        view = build_view(state, self.precedence(state), now=normalize(now), with_text=True)
        run = _Run(self, state, now)
        for result in run.call_all(f"query_{name}", view, [args]):
            if result.error is None and result.value is not None:
                return result.value
        return None


def _coerce(state: GameState, action: str, name: str, type_: str, value: Any) -> Any:
    def bad() -> Refused:
        return Refused("bad_argument", action=action, argument=name, expected=type_,
                       value=repr(value))
    if type_ == "int":
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        raise bad()
    if type_ == "number":
        try:
            return float(value) if not isinstance(value, int) else value
        except (TypeError, ValueError):
            raise bad() from None
    if type_ == "bool":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "yes", "1", "false", "no", "0"):
            return str(value).lower() in ("true", "yes", "1")
        raise bad()
    if type_ == "player":
        if str(value) not in state.players:
            raise Refused("unknown_player", player=str(value))
        return str(value)
    if type_ == "proposal":
        proposal = state.proposals.get(str(value)) or state.proposal_by_label(str(value))
        if proposal is None:
            raise Refused("unknown_proposal", proposal=str(value))
        return proposal["number"]
    if type_ == "str":
        if isinstance(value, dict | list):
            raise bad()
        return str(value)
    if type_ == "list" and not isinstance(value, list):
        raise bad()
    if type_ == "dict" and not isinstance(value, dict):
        raise bad()
    return value


def _choice(action: dict[str, Any], word: Any) -> str:
    words = {str(k).lower(): v for k, v in (action.get("choices") or {}).items()}
    if isinstance(word, bool):  # YAML reads an unquoted yes/no as a boolean
        yes_no = "yes" if word else "no"
        word = yes_no if yes_no in words else ("for" if word else "against")
    key = str(word).strip().lower()
    if key in words:
        return str(words[key])
    if key in CANONICAL_CHOICES or key in words.values():
        return key
    accepted = list(action.get("choices") or {}) + list(CANONICAL_CHOICES)
    raise Refused("bad_choice", choice=word, accepted=", ".join(accepted))


class _Run:
    """One decision in progress: a working state, the events so far, the reaction queue."""

    def __init__(self, engine: Engine, state: GameState, time: str) -> None:
        self.engine = engine
        self.state = state
        self.time = time
        self.events: list[Event] = []
        self.queue: deque[Event] = deque()

    def push(self, events: list[Event]) -> None:
        self.queue.extend(events)

    def call_all(self, hook: str, view: dict[str, Any], args: list[Any]) -> list[HookResult]:
        order = self.engine.coded_rules(self.state)
        targets = [rid for rid, code in order if hook in self.engine.info(code).hooks]
        if not targets:
            return []
        return self.engine.host.call(order, targets, hook, view, args)

    def settle(self) -> None:
        """Apply queued events one by one, asking the rules to react to each."""
        while self.queue:
            event = self.queue.popleft()
            event["seq"] = self.state.seq + 1
            try:
                apply_event(self.state, event)
            except Refused as refusal:  # a rule change that no longer applies
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
            self.events.append(event)
            if len(self.events) > MAX_EVENTS_PER_COMMAND:
                raise Refused("runaway_reactions", count=MAX_EVENTS_PER_COMMAND)
            consequences = self._consequences(event)
            reactions = self._react(event)
            # Rule changes happen before anything else queued, so that a second proposal
            # resolved in the same reaction sees the rules the first one made.
            self.queue.extendleft(reversed(consequences))
            self.queue.extend(reactions)

    def _react(self, event: Event) -> list[Event]:
        if event["type"] in NOT_DISPATCHED:
            return []
        hook = f"on_{event['type']}"
        order = self.engine.coded_rules(self.state)
        if not any(hook in self.engine.info(code).hooks for _, code in order):
            return []
        view = build_view(self.state, self.engine.precedence(self.state),
                          now=event["time"])
        initials = self.engine.declarations(self.state).initials()
        produced: list[Event] = []
        for result in self.call_all(hook, view, [_event_for_rules(event)]):
            if result.error:
                produced.append(_aborted(result.rule_id, hook, result.error, event["time"]))
                continue
            ctx = EffectContext(event["time"], result.rule_id, initials)
            effects = result.value or []
            if isinstance(effects, dict):
                effects = [effects]
            try:
                if not isinstance(effects, list):
                    raise InvalidEffect(f"{hook} must return a list of effects, got {effects!r}")
                converted: list[Event] = []
                declared = self.engine.info(dict(order)[result.rule_id]).declarations
                for effect in effects:
                    problem = undeclared_notice(effect, declared.get("notices"))
                    if problem:
                        raise InvalidEffect(problem)
                    converted += effect_to_events(self.state, effect, ctx)
                produced += converted
            except InvalidEffect as invalid:
                produced.append(_aborted(result.rule_id, hook, str(invalid), event["time"]))
        return produced

    def _consequences(self, event: Event) -> list[Event]:
        """What the kernel itself derives from an event: applying adopted rule changes."""
        payload = event["payload"]
        applies_proposal = (event["type"] == "proposal_resolved" and payload.get("apply")) or \
            (event["type"] == "changes_due" and "proposal" in payload)
        if applies_proposal:
            proposal = self.state.proposals[str(payload["proposal"])]
            return self._change_events(proposal["changes"], _proposal_cause(proposal),
                                       event["time"], proposal["number"])
        if event["type"] == "changes_due":
            return self._change_events(payload["changes"], payload["cause"], event["time"], None)
        if event["type"] == "rule_changed":
            return self._new_variables(event["time"])
        return []

    def _change_events(self, changes: list[dict[str, Any]], cause: dict[str, Any], time: str,
                       proposal: int | None) -> list[Event]:
        scratch = copy.deepcopy(self.state.rules)
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
        value = self.engine._transform(self.state, "rule_number", default,
                                       {"proposal": proposal, "change": change,
                                        "taken": taken}, time)
        value = str(value)
        if value in rules and rules[value]["in_force"] or value in taken:
            return default
        return value

    def _new_variables(self, time: str) -> list[Event]:
        decl = self.engine.declarations(self.state)
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


def _aborted(rule_id: str, hook: str, reason: str | None, time: str) -> Event:
    return make_event("rule_code_aborted", time, None, rule=rule_id, hook=hook, reason=reason)


def _proposal_cause(proposal: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "proposal", "proposal": proposal["number"], "label": proposal.get("label"),
            "author": proposal["author"], "title": proposal.get("title", "")}


def _event_for_rules(event: Event) -> dict[str, Any]:
    return {"type": event["type"], "seq": event["seq"], "time": event["time"],
            "time_ts": to_ts(event["time"]), "actor": event["actor"], **event["payload"]}

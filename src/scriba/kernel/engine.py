"""The kernel's decisions: commands and due timers in, events out.

The engine knows the nouns of Nomic (player, rule, proposal, vote, office, variable,
timer) and how to apply a rule change. Everything else — who may act, how votes count,
when a period ends, who wins — is asked of the rules in force through their hooks
(see :mod:`scriba.rulecode.api`). Each decision applies its events to the state it is
given inside a :func:`~scriba.kernel.journal.trial` and returns them, leaving the state
as it was; nothing is half-applied: a refusal discards them all.

The parts: :mod:`~scriba.kernel.in_force` (the rules in force, their order and
declarations), :mod:`~scriba.kernel.checking` (a command against the declarations),
:mod:`~scriba.kernel.reactions` (the reaction loop), :mod:`~scriba.kernel.timers`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from scriba.kernel import timers
from scriba.kernel.availability import Availability, available
from scriba.kernel.cases import case_command
from scriba.kernel.checking import CANONICAL_CHOICES, check_actor, check_args
from scriba.kernel.declarations import Declarations
from scriba.kernel.errors import Refused
from scriba.kernel.events import Event, make_event
from scriba.kernel.host import CodeInfo, RuleHost, RuleRef
from scriba.kernel.in_force import RulesInForce
from scriba.kernel.journal import trial
from scriba.kernel.reactions import NOT_DISPATCHED, Run
from scriba.kernel.sealing import seal
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import normalize
from scriba.kernel.view import build_view

__all__ = ["CANONICAL_CHOICES", "NOT_DISPATCHED", "Availability", "Command", "Declarations",
           "Engine"]
_MAX_MESSAGE = 2000


@dataclass
class Command:
    """A command to decide. ``letter``: the letter it came in, when it came with others
    (``{"id", "commands": [{"action", "args"}]}``): rules may require commands to come
    together or count letters; the kernel only passes it on."""

    actor: str | None
    action: str
    args: dict[str, Any] = field(default_factory=dict)
    letter: dict[str, Any] | None = None


class Engine:
    def __init__(self, host: RuleHost) -> None:
        self.host = host
        self.rules = RulesInForce(host)

    def command(self) -> AbstractContextManager[Any]:
        """One budget for all the rule code a decision runs, when the host keeps one."""
        scope = getattr(self.host, "command", None)
        return scope() if scope is not None else nullcontext()

    # --- reading the rules in force ---------------------------------------------------
    def info(self, code: str) -> CodeInfo:
        return self.rules.info(code)

    def coded_rules(self, state: GameState) -> list[RuleRef]:
        return self.rules.coded_rules(state)

    def precedence(self, state: GameState) -> list[str]:
        return self.rules.precedence(state)

    def warm(self, state: GameState) -> None:
        """Hand the rule host the game's view as it is now, ahead of the next command."""
        self.host.warm(build_view(state, self.precedence(state)))

    def declarations(self, state: GameState) -> Declarations:
        return self.rules.declarations(state)

    # --- creating a game --------------------------------------------------------------
    def create(self, spec: dict[str, Any], time: str) -> tuple[GameState, list[Event]]:
        """Events that create a game: its rules, initial variables, players and offices."""
        time = normalize(time)
        created = make_event("game_created", time, None, **spec["game"])
        for rule in created["payload"]["rules"]:
            if rule.get("code"):
                error = self.info(rule["code"]).error
                if error:
                    raise Refused("rule_code_invalid", rule=rule["id"], error=error,
                                  code=rule["code"])
        with self.command():
            run = Run(self, GameState(), time)
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
                name, values = (player, {}) if isinstance(player, str) else (
                    player["name"], player.get("vars", {}))
                run.push([self._join_event(run.state, name, time, None, values)])
            for office, holder in (spec.get("offices") or {}).items():
                run.push([make_event("office_set", time, None, office=office, holder=holder)])
            run.push([make_event("game_started", time, None)])
            run.settle()
        return run.state, run.events

    def admit(self, state: GameState, name: str, now: str) -> list[Event]:
        """Events of a player added by the game's officer (not through a rule's action)."""
        now = normalize(now)
        with self.command(), trial(state):
            run = Run(self, state, now)
            run.push([self._join_event(state, name, now, None, {})])
            run.settle()
            return run.events

    def settle(self, state: GameState, events: list[Event], now: str) -> list[Event]:
        """Apply ``events`` to ``state`` with every reaction they bring, and return them
        all; the state is left as they made it (pass a copy: this is for "what if", e.g.
        a proposal's dry run). Raises :class:`Refused` when the reactions run away."""
        with self.command():
            run = Run(self, state, normalize(now))
            run.push(events)
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
        """Events for an accepted command; raises :class:`Refused` otherwise. The state
        is changed while deciding and restored before this returns."""
        now = normalize(now)
        if state.ended:
            raise Refused("game_ended")
        decl = self.declarations(state)
        action = decl.actions.get(command.action)
        if action is None:
            raise Refused("unknown_action", action=command.action,
                          available=", ".join(sorted(decl.actions)) or "-")
        check_actor(state, command.actor, command.action, action)
        # Proposed code is compiled while checking the arguments: within the command's budget.
        with self.command():
            args = check_args(self.rules, state, command.action, command.args, action,
                              command.actor)
            return self._decide(state, command, action, args, now)

    def _decide(self, state: GameState, command: Command, action: dict[str, Any],
                args: dict[str, Any], now: str) -> list[Event]:
        with trial(state):
            run = Run(self, state, now)
            first = self._primary_event(run, command, action, args, now)
            if command.letter is not None:  # the event's reactions see which letter
                first["payload"]["letter"] = command.letter["id"]
            order = run.precedence()
            request = {"actor": command.actor, "action": command.action,
                       "kind": action.get("kind", "plain"), "args": args}
            if command.letter is not None:
                request["letter"] = command.letter
            # Rules with check, or check_<this action>; the view only when there are some.
            checkers = run.checking(request)
            view = build_view(state, order, now=now) if checkers else {}
            aborts: list[Event] = []
            asked = run.call(checkers, "check", view, [request]) if checkers else []
            for result in asked:
                aborts += run.aborts_of(result, "check", now)
                if result.error:
                    continue
                if result.value:
                    message = result.value.get("message") if isinstance(result.value, dict) \
                        else result.value
                    raise Refused.by_rule(str(message)[:_MAX_MESSAGE], result.rule_id)
            sealed = action.get("sealed") is True  # seen by its player and the officer only
            if sealed:
                seal([first], first, command.actor, command.action, args)
            run.push(aborts + [first])
            run.settle()
            if sealed:
                seal(run.events, first, command.actor, command.action, args)
            return run.events

    def _primary_event(self, run: Run, command: Command, action: dict[str, Any],
                       args: dict[str, Any], now: str) -> Event:
        kind = action.get("kind", "plain")
        actor = command.actor
        if kind == "propose":
            number = self._proposal_number(run, args, actor, now)
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
            return self._join_event(run.state, str(actor), now, actor, {})
        if kind == "leave":
            return make_event("player_status", now, actor, player=actor, status="left")
        if kind in ("case", "judge", "appeal"):
            type_, payload = case_command(run.state, kind, command.action, action, args)
            return make_event(type_, now, actor, **payload)
        return make_event("action_taken", now, actor, action=command.action, args=args)

    def _proposal_number(self, run: Run, args: dict[str, Any], actor: str | None,
                         now: str) -> int:
        state = run.state
        numbers = [int(n) for n in state.proposals if str(n).lstrip("-").isdigit()]
        default = max(numbers) + 1 if numbers else int(state.settings.get("first_proposal", 1))
        value = run.transform("proposal_number", default, {"author": actor, "args": args}, now)
        if not isinstance(value, int) or isinstance(value, bool) or str(value) in state.proposals:
            return default  # a number already given never names a second proposal
        return value

    def available(self, state: GameState, actor: str | None, now: str) -> list[Availability]:
        """What ``actor`` may do now under the rules in force, the moves owed first (see
        :mod:`~scriba.kernel.availability`): nothing is applied, no event made."""
        with self.command():
            return available(Run(self, state, normalize(now)), actor, normalize(now))

    # --- time -------------------------------------------------------------------------
    def due_timers(self, state: GameState, now: str) -> list[dict[str, Any]]:
        return timers.due_timers(state, now)

    def fire_next_timer(self, state: GameState, now: str) -> list[Event]:
        return timers.fire_next_timer(self, state, now)

    def fire_due_timers(self, state: GameState, now: str) -> list[Event]:
        return timers.fire_due_timers(self, state, now)

    def advance(self, state: GameState, now: str) -> list[Event]:
        return timers.advance(self, state, now)

    # --- queries ----------------------------------------------------------------------
    def invariants(self, state: GameState, now: str) -> list[tuple[str, str]]:
        """What the rules' ``invariants(game)`` hooks say does not hold now: (rule id,
        statement) pairs. Nothing is enforced: the proposal lab reports them. A hook
        that fails or answers something else than texts says nothing."""
        if not self.rules.hooked(state, "invariants"):
            return []  # no rule declares any: no view built, nothing asked
        view = build_view(state, self.precedence(state), now=normalize(now), with_text=True)
        with self.command():
            results = Run(self, state, now).call_all("invariants", view, [])
        return [(result.rule_id, statement) for result in results
                if result.error is None and isinstance(result.value, list | tuple)
                for statement in result.value if isinstance(statement, str) and statement]

    def query(self, state: GameState, name: str, args: dict[str, Any], now: str) -> Any:
        view = build_view(state, self.precedence(state), now=normalize(now), with_text=True)
        with self.command():
            run = Run(self, state, now)
            for result in run.call_all(f"query_{name}", view, [args]):
                if result.error is None and result.value is not None:
                    return result.value
        return None

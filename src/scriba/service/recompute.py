"""The game recomputed after a correction's point: every input after it decided again,
in order, at its own time, under the rules as they then stand, by the same code as live
(:mod:`.deciding`). Pure: nothing is read or written here; :mod:`.corrections` gives the
log and the inputs kept with it, and keeps the result.

The inputs are read from the log: a player's command (the primary event of an accepted
one, or its ``command_refused``), the officer's admission of a player, the clock moved
(``clock_advanced``). Timers fire on their own as time passes (each decision fires the
timers due by its time first); at the end the clock is brought to the log's time.
Deterministic: the same log and correction give the same events.
"""

from __future__ import annotations

import json
import time as wall
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scriba.kernel.engine import Engine
from scriba.kernel.events import Event, fold, make_event
from scriba.kernel.state import GameState
from scriba.service.deciding import admit, decider
from scriba.service.inputs import Outcome, _number

# The primary event of a player's accepted command, by the kind of its action.
PRIMARY = {"proposal_submitted": "propose", "vote_cast": "vote", "action_taken": None,
           "player_joined": "join", "player_status": "leave", "case_opened": "case",
           "case_judged": "judge", "case_appealed": "appeal"}


class OverBudget(Exception):
    """The recompute would need more inputs or time than it is allowed."""


@dataclass
class Input:
    """One input to decide again: a player's command, an admission, or the clock."""

    seq: int  # the seq of its event in the log (0: the correction's own)
    time: str
    kind: str  # "command" | "admit" | "clock"
    command: dict[str, Any] | None = None  # as kept: {"op", "actor", "action", "args", ...}
    raw: str = ""
    accepted: bool = True  # as decided in the log
    to: str = ""  # the clock's new time
    setting: dict[str, Any] | None = None  # kind "set": a correction's vars, players, offices
    new: bool = False  # put here by the correction being made (not an earlier one)


@dataclass
class Decided:
    """What the recompute made of one input."""

    input: Input
    accepted: bool
    message: str


def is_command(event: Event, started: int) -> bool:
    """Whether ``event`` is what a player's command made first (not a rule's doing)."""
    if event["seq"] <= started or (event.get("payload") or {}).get("by_rule"):
        return False
    if event["type"] == "command_refused":
        return True
    return event["type"] in PRIMARY and event.get("actor") is not None


def read_inputs(events: list[Event], started: int, kept: dict[int, dict[str, Any]],
                engine: Engine, state_at: Callable[[int], GameState]) -> list[Input]:
    """The inputs among ``events`` (the log after the point), in order. ``kept``: the
    commands as their interface kept them, by the seq of an event they made (exact,
    with their letter); a command not kept (an imported game) is read from its event."""
    letters = _letters(events)
    inputs: list[Input] = []
    for event in events:
        payload = event.get("payload") or {}
        if event["type"] == "clock_advanced" and not payload.get("by_rule"):
            inputs.append(Input(event["seq"], event["time"], "clock", to=payload["to"]))
        elif event["type"] == "player_joined" and event.get("actor") is None \
                and not payload.get("by_rule") and event["seq"] > started:
            command = {"op": "add_player", "name": payload["player"]}
            inputs.append(Input(event["seq"], event["time"], "admit", command,
                                json.dumps({"name": payload["player"]}, ensure_ascii=False)))
        elif is_command(event, started):
            row = kept.get(event["seq"])
            if row is not None and isinstance(row.get("command"), dict) \
                    and row["command"].get("op") == "perform":
                command, raw = row["command"], row.get("raw") or ""
            else:
                command = _from_event(event, engine, state_at, letters)
                raw = payload.get("raw") or json.dumps(
                    {k: v for k, v in command.items() if k not in ("op", "at")},
                    ensure_ascii=False)
            inputs.append(Input(event["seq"], event["time"], "command", command, raw,
                                accepted=event["type"] != "command_refused"))
    return inputs


def _from_event(event: Event, engine: Engine, state_at: Callable[[int], GameState],
                letters: dict[Any, list[dict[str, Any]]]) -> dict[str, Any]:
    """A command rebuilt from the event it made: the action of that kind in the rules as
    they stood, its arguments from the payload."""
    p = event["payload"]
    kind = event["type"]
    if kind in ("command_refused", "action_taken"):
        action, args = str(p.get("action")), dict(p.get("args") or {})
    elif kind.startswith("case_"):
        state = state_at(event["seq"] - 1)
        action = str(p.get("action") or _action_of_kind(engine, state, PRIMARY[kind]))
        args = _case_args(kind, p, engine.declarations(state).actions.get(action) or {})
    else:
        action = _action_of_kind(engine, state_at(event["seq"] - 1), PRIMARY[kind])
        if kind == "vote_cast":
            args = {"proposal": p["proposal"], "choice": p["choice"], **(p.get("data") or {})}
        elif kind == "proposal_submitted":
            args = {"title": p.get("title", ""), "text": p.get("text", ""),
                    "changes": p.get("changes", []), **(p.get("data") or {})}
            if p.get("label") not in (None, str(p.get("number"))):
                args["label"] = p["label"]
        else:
            args = {}
    command = {"op": "perform", "actor": event["actor"], "action": action, "args": args}
    if p.get("letter") is not None:
        command["letter"] = {"id": p["letter"], "commands": letters.get(p["letter"], [])}
    return command


def _case_args(kind: str, p: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    """A case command's arguments from its event (kernel/cases.py made the event)."""
    reasons = {"reasons": p["reasons"]} if p.get("reasons") else {}
    if kind == "case_judged":
        rules = [r.get("rule") for r in p.get("rules") or [] if isinstance(r, dict)]
        return {"case": p["case"], "judgment": p["judgment"], **reasons,
                **({"rules": rules} if rules else {}), **(p.get("data") or {})}
    if kind == "case_appealed":
        return {"case": p["case"], **reasons}
    args: dict[str, Any] = {"question": p.get("question", ""), **(p.get("data") or {})}
    params = {name: str(t).rstrip("?") for name, t in (action.get("params") or {}).items()}
    if p.get("parties"):
        args["parties"] = list(p["parties"])
    for concern in p.get("concerns") or []:  # back to the parameter of its type
        name = next((n for n, t in params.items() if t == concern.get("kind")
                     and n not in args), None)
        if name is not None:
            value = concern.get("id")
            args[name] = int(value) if concern.get("kind") in ("proposal", "event") \
                and str(value).lstrip("-").isdigit() else value
    return args


def _action_of_kind(engine: Engine, state: GameState, kind: str) -> str:
    actions = engine.declarations(state).actions
    return next((name for name, a in actions.items() if a.get("kind") == kind), kind)


def _letters(events: list[Event]) -> dict[Any, list[dict[str, Any]]]:
    """The commands of each letter, as far as the log tells them (accepted ones)."""
    letters: dict[Any, list[dict[str, Any]]] = {}
    for event in events:
        letter = (event.get("payload") or {}).get("letter")
        if letter is not None and event["type"] in PRIMARY:
            p = event["payload"]
            letters.setdefault(letter, []).append(
                {"action": p.get("action", event["type"]), "args": p.get("args", {})})
    return letters


def corrected(inputs: list[Input], corrections: list[tuple[dict[str, Any], bool]]
              ) -> list[Input]:
    """The inputs as the corrections say they should have been (earlier corrections first,
    then the one being made, ``True``): annulled ones dropped, added commands and
    settings put at their time, before the inputs that came after it."""
    inputs = list(inputs)
    for correction, new in corrections:
        if correction["kind"] == "annul":
            inputs = [i for i in inputs if i.seq != correction["event"]]
            continue
        at = correction["at"]
        if correction["kind"] == "add":
            command = {"op": "perform", "actor": correction["actor"],
                       "action": correction["action"], "args": dict(correction["args"])}
            item = Input(0, at, "command", command, new=new, raw=json.dumps(
                {k: v for k, v in command.items() if k != "op"}, ensure_ascii=False))
        else:
            item = Input(0, at, "set", setting=correction, new=new)
        place = next((k for k, i in enumerate(inputs) if i.time > at), len(inputs))
        inputs.insert(place, item)
    return inputs


def recompute(engine: Engine, state: GameState, inputs: list[Input], until: str, *,
              deadline: float | None = None) -> tuple[GameState, list[Decided]]:
    """Decide ``inputs`` again on ``state`` (changed in place), in order, then bring its
    clock to ``until``. Raises :class:`OverBudget` past ``deadline`` (monotonic)."""
    decided: list[Decided] = []
    for item in inputs:
        if deadline is not None and wall.monotonic() > deadline:
            raise OverBudget
        now = max(item.time, state.time)
        if item.kind == "clock":
            events = engine.advance(state, max(item.to, state.time))
            outcome = Outcome(True, "", events)
        elif item.kind == "set":
            assert item.setting is not None
            fold(_number(engine.fire_due_timers(state, now), state.seq), state)
            s = item.setting
            events = set_events(state, now, s["vars"], s["players"], s["offices"])
            outcome = Outcome(True, "", events)
        elif item.kind == "admit":
            assert item.command is not None
            fired = engine.fire_due_timers(state, now)
            fold(_number(fired, state.seq), state)
            events, outcome = admit(engine, state, item.command["name"], now)
        else:
            assert item.command is not None
            events, outcome = decider(engine, item.command, item.raw)(state, now)
        fold(_number(events, state.seq), state)
        decided.append(Decided(item, outcome.accepted, outcome.message))
    if deadline is not None and wall.monotonic() > deadline:
        raise OverBudget
    fold(_number(engine.advance(state, max(until, state.time)), state.seq), state)
    return state, decided


def set_events(state: GameState, at: str, game_vars: dict[str, Any],
               players: dict[str, dict[str, Any]],
               offices: dict[str, Any]) -> list[Event]:
    """The least events that make the record say this at ``at`` (a ratification): only
    what differs is set, and nothing reacts to it (it was so, not done)."""
    events = [make_event("var_set", at, None, player=None, name=name, value=value)
              for name, value in game_vars.items() if state.vars.get(name, _NONE) != value]
    for player, values in players.items():
        if player not in state.players:
            continue  # not a player yet at that time
        have = state.players[player]["vars"]
        events += [make_event("var_set", at, None, player=player, name=name, value=value)
                   for name, value in values.items() if have.get(name, _NONE) != value]
    events += [make_event("office_set", at, None, office=office, holder=holder)
               for office, holder in offices.items() if state.offices.get(office, _NONE)
               != holder]
    return events


_NONE = object()


def keep_notice_seqs(after: GameState, live: GameState, point: int, record: int) -> None:
    """The recomputed notices name events of the log: one the log made alike keeps its
    event's seq, one only the recompute made gets the correction's own (``record``) — the
    recompute's numbering is never stored."""
    made = [n for n in live.notices if n.get("seq", 0) >= point]
    for notice in after.notices:
        if notice.get("seq", 0) < point:
            continue
        same = next((i for i, old in enumerate(made) if _alike(old, notice)), None)
        notice["seq"] = made[same]["seq"] if same is not None else record
        made = made[same + 1:] if same is not None else made


def _alike(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return {k: v for k, v in a.items() if k != "seq"} == {k: v for k, v in b.items()
                                                          if k != "seq"}


def folding(events: list[Event]) -> Callable[[int], GameState]:
    """The game as of a seq, asked in increasing order: folded on, not again from the
    start (a command rebuilt from its event needs the rules as they then stood)."""
    state, at = GameState(), 0

    def state_at(seq: int) -> GameState:
        nonlocal state, at
        if seq < at:
            state, at = GameState(), 0
        fold(events[at:seq], state)
        at = seq
        return state
    return state_at

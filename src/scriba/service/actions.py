"""The actions of a game as interfaces list them (:class:`ActionInfo`): every one the
rules in force declare, the ones a player's seat permits, and the ones open to a player
now — asked of the rules, with the values open for each parameter and the moves owed
first (:meth:`scriba.kernel.engine.Engine.available`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from scriba.kernel.checking import CANONICAL_CHOICES, KIND_PARAMS
from scriba.kernel.engine import Engine
from scriba.kernel.state import ACTIVE, GameState


@dataclass
class ActionInfo:
    name: str
    kind: str
    who: list[str]
    params: dict[str, str]
    choices: dict[str, str] = field(default_factory=dict)
    help: str = ""
    rule: str = ""
    # Per parameter, the values open to this player now, in order (absent: free input; an
    # empty list: none is open, and the parameter, then optional, is left out).
    options: dict[str, list[str]] = field(default_factory=dict)
    # Owed by this player now (a rule's ``due``): by ``deadline`` (ISO, or None), because
    # ``due_reason`` (the rule's sentence).
    due: bool = False
    deadline: str | None = None
    due_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def declared(engine: Engine, state: GameState) -> list[ActionInfo]:
    """Every action the rules in force declare, whoever may take it."""
    out = []
    for name, action in engine.declarations(state).actions.items():
        kind = str(action.get("kind", "plain"))
        who = action.get("who", "player")
        who = [str(w) for w in who] if isinstance(who, list) else [str(who)]
        params = {**KIND_PARAMS.get(kind, {}), **(action.get("params") or {})}
        choices = {str(k): str(v) for k, v in (action.get("choices") or {}).items()} \
            if kind in ("vote", "judge") else {}  # a vote's words; a judgment's
        if kind == "vote":
            for canonical in CANONICAL_CHOICES:
                choices.setdefault(canonical, canonical)
        out.append(ActionInfo(name=str(name), kind=kind, who=who,
                              params={str(k): str(v) for k, v in params.items()},
                              choices=choices, help=str(action.get("help", "")),
                              rule=str(action.get("rule", ""))))
    return out


def permitted(engine: Engine, state: GameState, player: str | None) -> list[ActionInfo]:
    """The actions whose ``who`` admits ``player``, whatever the rules would say now (what
    a command may name: a letter is read, a form's arguments typed, with these); a name
    that is not (or no longer) a player may only join; nothing for a reader (None)."""
    if state.ended:
        return []
    is_player = player in state.players and state.players[player]["status"] == ACTIVE
    out = []
    for action in declared(engine, state):
        if action.kind == "join":
            if not is_player and _allows(action.who, state, player, as_player=False):
                out.append(action)
        elif player is not None and _allows(action.who, state, player, as_player=is_player):
            out.append(action)
    return out


def available(engine: Engine, state: GameState, player: str | None,
              now: str) -> list[ActionInfo]:
    """What ``player`` may do now, as the rules in force answer when asked (one request to
    the rule host): only the actions they would not refuse, each with the values open for
    its listed parameters, the moves owed first."""
    if player is None or state.ended:
        return []
    by_name = {a.name: a for a in declared(engine, state)}
    out = []
    for found in engine.available(state, player, now):
        info = by_name.get(found.action)
        if info is None:
            continue
        info.options = {param: [str(v) for v in values]
                        for param, values in found.options.items()}
        info.due, info.deadline, info.due_reason = found.due, found.deadline, found.reason
        out.append(info)
    return out


def _allows(who: list[str], state: GameState, player: str | None, as_player: bool) -> bool:
    for option in who:
        if option == "anyone" or (option == "player" and as_player):
            return True
        if option.startswith("office:") and player is not None \
                and state.offices.get(option[7:]) == player:
            return True
    return False

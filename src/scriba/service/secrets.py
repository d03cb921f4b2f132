"""What a reader may not see yet: others' sealed moves the rules have not revealed (a
Nomic number given to the referee, a secret ballot: :mod:`scriba.kernel.sealing`) and
others' variables declared ``"private": True``. The state and the log keep everything
(a replay is unchanged); the reads leave these out of what they hand a reader who is
neither the move's or variable's player nor the officer (a :class:`Seer`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scriba.kernel.declarations import Declarations
from scriba.kernel.events import Event
from scriba.kernel.sealing import hidden


@dataclass(frozen=True)
class Seer:
    """Who reads: the player they sit as (None: anyone) and whether they are the officer."""

    player: str | None = None
    officer: bool = False


PUBLIC = Seer()


@dataclass(frozen=True)
class Secrets:
    """A game's secrets at one point of its log."""

    hidden: dict[int, str | None]  # seq of a sealed event not revealed → whose move
    votes: frozenset[tuple[int, str]]  # (proposal, player) of a sealed vote not revealed
    player_vars: frozenset[str]  # the names of private player variables
    game_vars: frozenset[str]  # the names of private game variables
    sealing: bool = True  # a sealed action is in force: the log may hold sealed moves

    @property
    def private_vars(self) -> frozenset[str]:
        return self.player_vars | self.game_vars

    def summary(self, whole: dict[str, Any], seer: Seer) -> dict[str, Any]:
        """The game's summary (:func:`.summary.summarize`, a copy) as ``seer`` may see it."""
        if seer.officer:
            return whole
        for name, values in (whole.get("players") or {}).items():
            if name != seer.player:
                for var in self.player_vars & set(values):
                    del values[var]
        game = whole.get("vars")
        if isinstance(game, dict):
            whole["vars"] = {k: v for k, v in game.items() if k not in self.game_vars}
        period = whole.get("period")
        if isinstance(period, dict) and period.get("variable") in self.game_vars:
            whole["period"] = None
        for proposal in whole.get("proposals") or []:
            self.proposal(proposal, seer)
        return whole

    def proposal(self, proposal: dict[str, Any], seer: Seer) -> dict[str, Any]:
        """A proposal's dict (a copy) without the votes still sealed for ``seer``."""
        if seer.officer or not self.votes:
            return proposal
        number = proposal.get("number")
        votes = proposal.get("votes")
        if isinstance(votes, dict):
            proposal["votes"] = {voter: choice for voter, choice in votes.items()
                                 if voter == seer.player or (number, voter) not in self.votes}
        return proposal


def secrets_of(events: list[Event], declarations: Declarations) -> Secrets:
    """The secrets of a game whose log is ``events`` under these declarations (with no
    sealed action in force, ``events`` need not be read: pass none)."""
    sealing = any(action.get("sealed") for action in declarations.actions.values())
    secret = hidden(events) if sealing else {}
    votes = set()
    if secret:
        for event in events:
            p = event.get("payload") or {}
            if event["seq"] in secret and event["type"] == "vote_cast":
                votes.add((p.get("proposal"), str(p.get("player"))))
    private = {key for key, decl in declarations.variables.items() if decl.get("private")}
    return Secrets(secret, frozenset(votes),
                   frozenset(name for scope, name in private if scope == "player"),
                   frozenset(name for scope, name in private if scope == "game"), sealing)

"""Bots that play by the rules: each turn a bot is shown what its player may do now (the
actions the rules would not refuse, with the values open for their parameters) and picks
one, seeded, or nothing.

Strategies: ``random`` (the moves owed first, else any available action, opening a case
seldom: a bot that sues at every turn buries the game in its docket; any open value),
``for`` / ``against`` (vote that way whenever a vote is open, otherwise act as
``random``), ``self`` (self-interested: votes for a proposal when adopting it now would
raise its own score in the dry run, against otherwise; acts as ``random`` elsewhere),
``idle`` (never acts). No bot leaves the game on its own: a game of
leavers shows nothing about its rules.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

STRATEGIES = ("random", "for", "against", "self", "idle")
NEVER_CHOSEN = ("leave",)  # kinds a bot does not take (see the module's docstring)
SELDOM = ("case", "appeal")  # kinds a random bot draws WEIGHT times less often
WEIGHT = 8


class Offered(Protocol):
    """What a bot reads of an action on offer (the service's ``ActionInfo``)."""

    name: str
    kind: str
    params: dict[str, str]
    choices: dict[str, str]
    options: dict[str, list[str]]
    due: bool


Choice = tuple[str, dict[str, Any]]  # an action's name and its arguments
# What adopting a proposal (its number, as offered) now would change of the player's own
# score: the self-interested bot's question, answered by the dry run.
Gain = Callable[[str], float]


class Bot:
    def __init__(self, strategy: str, seed: str) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.rng = random.Random(seed)  # a text seed: the same on every run and machine
        self.written = 0
        # Whether the last choice has a parameter no value is offered for (a text, a
        # number the rules ask of a player): a guess, which the rules may rightly refuse.
        self.guessed = False
        self.wrong_guesses: set[str] = set()  # actions whose guess was refused: not again

    def choose(self, offered: list[Offered], players: list[str],
               gain: Gain | None = None) -> Choice | None:
        """The action to take and its arguments, or None (nothing fit, or idle).
        ``gain``: the self-interested bot's dry run (without it, it votes against)."""
        if self.strategy == "idle":
            return None
        playable = [a for a in offered
                    if a.kind not in NEVER_CHOSEN and a.name not in self.wrong_guesses]
        if self.strategy in ("for", "against", "self"):
            for action in playable:
                if action.kind == "vote":
                    args = self._fill(action, players, choice=self._stance(action, gain))
                    if args is not None:
                        return action.name, args
        owed = [a for a in playable if a.due]
        for action in owed + self._shuffled([a for a in playable if a not in owed]):
            args = self._fill(action, players)
            if args is not None:
                return action.name, args
        return None

    def _stance(self, vote: Offered, gain: Gain | None) -> str:
        """"for" or "against": the bot's own, or (self-interested) for the first proposal
        open to this vote exactly when adopting it raises the bot's score."""
        if self.strategy != "self":
            return self.strategy
        proposals = vote.options.get("proposal") or []
        if not proposals or gain is None:
            return "against"
        return "for" if gain(proposals[0]) > 0 else "against"

    def _shuffled(self, actions: list[Offered]) -> list[Offered]:
        """A random order, the seldom kinds mostly last (a weighted draw without return:
        each action's key is u ** (1 / weight), largest first)."""
        keys = [self.rng.random() ** (1 / (1 if a.kind in SELDOM else WEIGHT))
                for a in actions]
        return [actions[i] for _, i in sorted(((k, i) for i, k in enumerate(keys)),
                                              reverse=True)]

    def refused(self, action: str) -> None:
        """The rules refused this bot's last choice: a guess is not tried again."""
        if self.guessed:
            self.wrong_guesses.add(action)

    # --- arguments ----------------------------------------------------------------------
    def _fill(self, action: Offered, players: list[str],
              choice: str | None = None) -> dict[str, Any] | None:
        """Arguments for every required parameter (optional ones only where values are
        offered), or None when a required one cannot be filled."""
        args: dict[str, Any] = {}
        self.guessed = any(name not in action.options
                           and not (action.kind == "vote" and name == "choice")
                           for name in action.params)
        # An action of optional parameters only is given a guess for them all (a number
        # the rules ask of a player, e.g. a penalty): without one it says nothing.
        only_optional = all(t.endswith("?") for t in action.params.values())
        for name, type_ in action.params.items():
            optional = type_.endswith("?")
            value = self._value(action, name, type_.rstrip("?"), players, choice,
                                optional and not only_optional)
            if value is None:
                if not optional:
                    return None
                continue
            args[name] = value
        return args

    def _value(self, action: Offered, name: str, type_: str, players: list[str],
               choice: str | None, optional: bool) -> Any:
        if name in action.options:
            open_values = action.options[name]
            if choice is not None and name == "choice":
                return choice if choice in open_values else None
            if self.strategy == "self" and name == "proposal" and open_values:
                return open_values[0]  # the one its stance was taken on
            return self.rng.choice(open_values) if open_values else None
        if action.kind == "vote" and name == "choice":
            return choice or self.rng.choice(sorted(set(action.choices.values())))
        if optional:
            return None  # a free optional value (an index, a number asked for): left out
        if type_ in ("int", "number"):
            return self.rng.randint(1, 3)
        if type_ == "bool":
            return self.rng.random() < 0.5
        if type_ == "player":
            return self.rng.choice(players) if players else None
        if type_ == "changes":
            return [{"enact": {"title": self._text("Rule"), "text": self._text("Be kind")}}]
        if type_ == "list":
            return []
        if type_ in ("str", "any") or type_.startswith("asset"):
            return self._text("Note")
        return None  # a rule, case, proposal or event with no open value: not this action

    def _text(self, word: str) -> str:
        self.written += 1
        return f"{word} {self.written}"

"""Bots that play by the rules: each turn a bot is shown what its player may do now (the
actions the rules would not refuse, with the values open for their parameters) and picks
one, seeded, or nothing.

Strategies: ``random`` (the moves owed first, else any available action, opening a case
seldom: a bot that sues at every turn buries the game in its docket; any open value),
``for`` / ``against`` (vote that way whenever a vote is open, otherwise act as
``random``), ``idle`` (never acts). No bot leaves the game on its own: a game of
leavers shows nothing about its rules.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

STRATEGIES = ("random", "for", "against", "idle")
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

    def choose(self, offered: list[Offered], players: list[str]) -> Choice | None:
        """The action to take and its arguments, or None (nothing fit, or idle)."""
        if self.strategy == "idle":
            return None
        playable = [a for a in offered
                    if a.kind not in NEVER_CHOSEN and a.name not in self.wrong_guesses]
        if self.strategy in ("for", "against"):
            for action in playable:
                if action.kind == "vote":
                    args = self._fill(action, players, choice=self.strategy)
                    if args is not None:
                        return action.name, args
        owed = [a for a in playable if a.due]
        for action in owed + self._shuffled([a for a in playable if a not in owed]):
            args = self._fill(action, players)
            if args is not None:
                return action.name, args
        return None

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
        for name, type_ in action.params.items():
            optional = type_.endswith("?")
            value = self._value(action, name, type_.rstrip("?"), players, choice, optional)
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

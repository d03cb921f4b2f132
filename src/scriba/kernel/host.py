"""What the kernel needs from whoever runs rule code (the sandbox, in production).

The kernel stays pure: it hands rule code and plain data to a :class:`RuleHost` and
gets plain data back. :mod:`scriba.rulecode.host` implements it with a worker pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scriba.kernel.view import GameView


@dataclass(frozen=True)
class CodeInfo:
    """What a piece of rule code defines: its hooks and its declarations."""

    hooks: frozenset[str] = frozenset()
    declarations: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # set when the code does not compile, with line and reason
    # The error says nothing about the code (a worker died, the server was too busy):
    # never cached, asked again next time.
    transient: bool = False


@dataclass
class HookResult:
    rule_id: str
    value: Any = None
    error: str | None = None  # why the call was aborted (budget, memory, error, killed)
    hook: str | None = None  # set for a nested call: the hook that was called
    # The rule was not called: it had already spent what it may in this command, or been
    # stopped (recorded once per rule and hook in a command).
    stopped: bool = False
    # The aborted calls of other rules' hooks this call made (``transform``): each its
    # own rule's abort, never this call's.
    aborts: list[HookResult] = field(default_factory=list)


RuleRef = tuple[str, str]  # (rule id, code)


class RuleHost(Protocol):
    def inspect(self, code: str) -> CodeInfo: ...

    def call(self, order: list[RuleRef], targets: list[str], hook: str,
             view: GameView | dict[str, Any], args: list[Any]) -> list[HookResult]: ...

    def call_many(self, order: list[RuleRef],
                  calls: list[tuple[list[str], str, GameView | dict[str, Any], list[Any]]]
                  ) -> list[list[HookResult]] | None:
        """Several calls (targets, hook, view, args) in one go, in order; None if they
        could not be made (the kernel then makes them one by one)."""
        ...

    def warm(self, view: GameView) -> None:
        """Take ``view`` ahead of the calls that will use it (a host may do nothing)."""
        ...

    def seal(self, view: GameView | dict[str, Any]) -> GameView | dict[str, Any]:
        """The view, no longer depending on the state it was built from."""
        ...

    def transform(self, order: list[RuleRef], name: str, view: GameView | dict[str, Any],
                  value: Any, context: Any) -> tuple[Any, list[HookResult]]: ...

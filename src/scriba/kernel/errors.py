"""Why a command is refused.

Kernel refusals carry a message id and parameters, translated into the game's language
by the service (Babel catalogs); refusals written by rule code are already in the
ruleset's language and travel as literal text.
"""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    def __init__(self, message_id: str, literal: bool = False, **params: Any) -> None:
        super().__init__(message_id)
        self.message_id = message_id
        self.literal = literal
        self.params = params

    @classmethod
    def by_rule(cls, text: str, rule_id: str | None = None) -> Refused:
        refusal = cls(text, literal=True)
        refusal.params = {"rule": rule_id} if rule_id else {}
        return refusal


class InvalidEffect(Exception):
    """Rule code returned an effect the kernel cannot apply."""

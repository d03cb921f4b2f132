"""The letter a command came in, as the rules see it (``command["letter"]``).

Seeds count letters, not commands: a player sends "up to two letters of up to two
proposals" and gives "the votes on one letter's proposals in one letter". An interface that
receives several commands at once (an e-mail, a form's submission) passes each of them the
same letter: ``{"id": KEY, "commands": [{"action", "args"}, ...]}``, the commands in the
order written. It is kept with each command, so a replay decides the same; the kernel only
passes it on. A letter's commands keep their short arguments only (a proposal's text and
lists are left out: the rules need which action and which proposal, not the text again),
so that a letter of many commands stays small in each of them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from scriba.service.errors import InvalidInput

LETTER_COMMANDS_MAX = 50  # commands of one letter (the mail intake reads no more)
SHORT_ARG = 200  # characters of a string argument a letter's command keeps
_ID_MAX = 64


def letter_id(key: str) -> str:
    """A stable id for a letter from its interface's key (a Message-ID, a form's request
    id): the same letter always has the same id, which tells nothing of the key."""
    return hashlib.sha256(key.encode("utf-8", "backslashreplace")).hexdigest()[:24]


def make_letter(key: str, commands: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The letter of ``commands`` (action, args), in order, known by ``key``."""
    return letter({"id": letter_id(key),
                   "commands": [{"action": a, "args": args} for a, args in commands]})


def letter(raw: Any) -> dict[str, Any]:
    """A letter checked and trimmed to what the rules read (see the module's docstring)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) \
            or not 0 < len(raw["id"]) <= _ID_MAX or not raw["id"].isprintable() \
            or not isinstance(raw.get("commands"), list):
        raise InvalidInput("A letter is {id, commands}.", field="letter")
    commands = []
    for item in raw["commands"][:LETTER_COMMANDS_MAX]:
        if not isinstance(item, dict) or not isinstance(item.get("action"), str):
            raise InvalidInput("A letter's command is {action, args}.", field="letter")
        args = item.get("args") if isinstance(item.get("args"), dict) else {}
        commands.append({"action": item["action"][:64], "args": _short(args)})
    return {"id": raw["id"], "commands": commands}


def _short(args: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for name, value in list(args.items())[:32]:
        if not isinstance(name, str):
            continue
        short = isinstance(value, str) and len(value) <= SHORT_ARG
        if short or isinstance(value, bool | int | float):
            kept[name[:64]] = value
    return kept

"""What the service accepts from outside: checked once here, for every interface.

Interfaces hand the service ``str`` (or ``bytes``) as they received them; this module
refuses what could break a game or fool its players, and normalises the rest:

- text must be valid UTF-8 (``bytes`` decoded strictly; a ``str`` holding lone surrogates —
  what Python makes of undecodable argv or file names — is refused);
- text is normalised to NFC, so that one name is stored one way;
- names carry no control or format characters (Cc, Cf: ANSI escapes, zero-width spaces,
  bidi overrides), no surrounding space, are not blank and are short;
- no two players of a game look alike: their Unicode TS #39 confusable skeletons (ICU's
  spoof checker) differ;
- titles, texts, rule code, argument values, the number of changes in a proposal and the
  nesting of argument values are bounded (:data:`LIMITS`).

Every refusal is :class:`~scriba.service.errors.InvalidInput` with a sentence in the game's
language (messages in ``locale/*/scriba.po``, section "validation").
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from scriba.service.errors import InvalidInput
from scriba.service.messages import translate

# The limits, stated once; README's "Limits" table is written from these.
NAME_MAX = 64            # characters in a player's name (or an actor, an office holder)
GAME_ID_MAX = 64         # characters in a game id
GAME_NAME_MAX = 200      # characters in a game's display name
TITLE_MAX = 200          # characters in a rule's or a proposal's title
TEXT_MAX = 100_000       # characters in a rule's or a proposal's text
CODE_MAX = 100_000       # characters of a rule's code
ARG_TEXT_MAX = 100_000   # characters in one string argument value
ARGS_MAX = 32            # arguments of one command
KEY_MAX = 64             # characters in an argument's or an action's name
CHANGES_MAX = 50         # rule changes in one proposal
DEPTH_MAX = 8            # nesting of lists and dicts in an argument value
ITEMS_MAX = 10_000       # values (leaves, lists, dicts) in one command's arguments
COMMAND_MAX = 1_000_000  # characters in one command, all its arguments together

LIMITS: dict[str, tuple[int, str]] = {
    "name": (NAME_MAX, "characters in a player's name"),
    "game_id": (GAME_ID_MAX, "characters in a game id (letters, digits, - and _)"),
    "game_name": (GAME_NAME_MAX, "characters in a game's name"),
    "title": (TITLE_MAX, "characters in a rule's or proposal's title"),
    "text": (TEXT_MAX, "characters in a rule's or proposal's text"),
    "code": (CODE_MAX, "characters of a rule's code"),
    "arg_text": (ARG_TEXT_MAX, "characters in one argument value"),
    "args": (ARGS_MAX, "arguments in one command"),
    "key": (KEY_MAX, "characters in an action's or argument's name"),
    "changes": (CHANGES_MAX, "rule changes in one proposal"),
    "depth": (DEPTH_MAX, "levels of nesting in an argument value"),
    "items": (ITEMS_MAX, "values in one command's arguments"),
    "command": (COMMAND_MAX, "characters in one command, all arguments together"),
}

# The English sentences; translations in locale/<lang>/LC_MESSAGES/scriba.po ("validation").
MESSAGES: dict[str, str] = {
    "not_utf8": "The {field} is not valid UTF-8 text (check the terminal's or file's "
                "encoding).",
    "not_text": "The {field} must be text.",
    "blank": "The {field} is empty.",
    "too_long": "The {field} is too long: {length} characters, at most {limit}.",
    "surrounding_space": "The {field} begins or ends with a space.",
    "invisible": "The {field} contains an invisible or control character ({char}).",
    "look_alike": "The name {name} looks like {other}, who already plays in this game; "
                  "choose a name that cannot be mistaken for it.",
    "bad_game_id": "'{value}' cannot be a game id: use 1 to {limit} letters, digits, - "
                   "or _, beginning with a letter or digit.",
    "bad_key": "'{value}' cannot be the name of {field}: use 1 to {limit} letters, "
               "digits, -, _ or .",
    "too_many_args": "Too many arguments: {count}, at most {limit}.",
    "too_many_changes": "Too many rule changes in one proposal: {count}, at most {limit}.",
    "too_deep": "The value of {field} is nested too deeply (at most {limit} levels).",
    "too_big": "The command is too big: at most {limit} values or characters.",
    "bad_duration": "'{value}' is not a duration (write e.g. 90s, 45m, 12h, 3d or 1w).",
    "game_exists": "There is already a game {game}.",
    "no_game": "There is no game {game}.",
    "bad_value": "The value of {field} is not allowed (text, numbers, yes/no, lists and "
                 "tables only).",
}

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# Format characters refused even in long texts: bidi embeddings, overrides and isolates
# reorder what a reader sees ("Trojan source"); the others (soft hyphen, joiners) are kept
# in texts, where scripts and emoji need them, and refused only in names.
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_TEXT_WHITESPACE = {"\n", "\t", "\r"}


def refuse(message_id: str, language: str, field: str | None = None,
           **params: object) -> InvalidInput:
    """The :class:`InvalidInput` for ``message_id``, in ``language``."""
    field_text = translate(field, language) if field else ""
    text = translate(MESSAGES[message_id], language, field=field_text, **params)
    return InvalidInput(text, field=field)


def _visible(char: str) -> str:
    return f"U+{ord(char):04X}"


# --- plain text -----------------------------------------------------------------------

def decode(value: Any, field: str, language: str) -> str:
    """``value`` as a ``str`` that is valid Unicode: bytes decoded strictly as UTF-8,
    a string with lone surrogates refused."""
    if isinstance(value, bytes | bytearray | memoryview):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise refuse("not_utf8", language, field) from None
    if not isinstance(value, str):
        raise refuse("not_text", language, field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: undecodable bytes smuggled into a str
        raise refuse("not_utf8", language, field) from None
    return value


def text(value: Any, field: str, language: str, limit: int = TEXT_MAX,
         blank: bool = True) -> str:
    """A text (rule text, title, argument value): UTF-8, NFC, bounded, no terminal
    control characters besides newline, tab and carriage return, no bidi overrides."""
    value = decode(value, field, language)
    if len(value) > 4 * limit:  # before normalising: NFC of a huge string costs time
        raise refuse("too_long", language, field, length=len(value), limit=limit)
    value = unicodedata.normalize("NFC", value)
    if len(value) > limit:
        raise refuse("too_long", language, field, length=len(value), limit=limit)
    if not blank and not value.strip():
        raise refuse("blank", language, field)
    for char in value:
        category = unicodedata.category(char)
        if (category == "Cc" and char not in _TEXT_WHITESPACE) or char in _BIDI \
                or category in ("Cs", "Co"):
            raise refuse("invisible", language, field, char=_visible(char))
    return value


def name(value: Any, language: str, field: str = "name") -> str:
    """A player's name: UTF-8, NFC, 1..NAME_MAX characters, no control or format
    characters, no line breaks or unassigned code points, no surrounding space."""
    value = decode(value, field, language)
    if len(value) > 4 * NAME_MAX:
        raise refuse("too_long", language, field, length=len(value), limit=NAME_MAX)
    value = unicodedata.normalize("NFC", value)
    if not value.strip() or not "".join(c for c in value
                                        if unicodedata.category(c) not in ("Cf", "Zs")):
        raise refuse("blank", language, field)
    if len(value) > NAME_MAX:
        raise refuse("too_long", language, field, length=len(value), limit=NAME_MAX)
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or \
                (char.isspace() and char != " "):
            raise refuse("invisible", language, field, char=_visible(char))
    if value != value.strip():
        raise refuse("surrounding_space", language, field)
    return value


def game_id(value: Any, language: str = "en") -> str:
    """A game id: a slug that is safe in URLs, file names and mail addresses."""
    value = decode(value, "game id", language)
    if len(value) > GAME_ID_MAX or not _GAME_ID.fullmatch(value):
        raise refuse("bad_game_id", language, "game id", value=_clip(value),
                     limit=GAME_ID_MAX)
    return value


def key(value: Any, field: str, language: str) -> str:
    """An action's or argument's name: an identifier."""
    value = decode(value, field, language)
    if len(value) > KEY_MAX or not _KEY.fullmatch(value):
        raise refuse("bad_key", language, field, value=_clip(value), limit=KEY_MAX)
    return value


def _clip(value: str, width: int = 40) -> str:
    shown = "".join(c if unicodedata.category(c)[0] != "C" else _visible(c) for c in value)
    return shown if len(shown) <= width else shown[:width] + "…"


# --- look-alike names -----------------------------------------------------------------

@lru_cache(maxsize=1)
def _spoof_checker() -> Any:
    import icu  # PyICU: ICU's implementation of Unicode TS #39

    return icu.SpoofChecker()


@lru_cache(maxsize=4096)
def skeleton(value: str) -> str:
    """The TS #39 confusable skeleton of a name: two names with the same skeleton look
    alike ("Anna" with a Cyrillic А, "rn" and "m", "I" and "l")."""
    return str(_spoof_checker().getSkeleton(0, value))


def look_alike(candidate: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` (other than ``candidate`` itself) that looks like it: the
    same skeleton as written, or once both are case-folded ("anna" and "ANNA")."""
    marks = {skeleton(candidate), skeleton(candidate.casefold())}
    for other in others:
        if other != candidate and {skeleton(other), skeleton(other.casefold())} & marks:
            return other
    return None


def new_player(value: Any, players: Iterable[str], language: str) -> str:
    """A name for a new player: a valid name that looks like none of ``players``."""
    checked = name(value, language)
    other = look_alike(checked, players)
    if other is not None:
        raise refuse("look_alike", language, name=checked, other=other)
    return checked


def player_list(values: Iterable[Any], language: str) -> list[Any]:
    """Initial players (names, or ``{"name": ..., "vars": ...}``), checked against each
    other."""
    result: list[Any] = []
    seen: list[str] = []
    for value in values:
        raw = value.get("name") if isinstance(value, Mapping) else value
        checked = new_player(raw, seen, language)
        seen.append(checked)
        result.append({**value, "name": checked} if isinstance(value, Mapping) else checked)
    return result


# --- commands -------------------------------------------------------------------------

class _Budget:
    def __init__(self) -> None:
        self.items = 0
        self.chars = 0


def value(raw: Any, field: str, language: str, depth: int = 0,
          budget: _Budget | None = None, limit: int = ARG_TEXT_MAX) -> Any:
    """An argument value: JSON data only (text, finite numbers, booleans, null, lists and
    string-keyed tables), bounded in nesting, count and size; strings checked as text."""
    budget = budget or _Budget()
    budget.items += 1
    if budget.items > ITEMS_MAX:
        raise refuse("too_big", language, limit=ITEMS_MAX)
    if raw is None or isinstance(raw, bool | int):
        if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) > 2**63:
            raise refuse("bad_value", language, field)
        return raw
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise refuse("bad_value", language, field)
        return raw
    if isinstance(raw, str | bytes):
        checked = text(raw, field, language, limit=limit)
        budget.chars += len(checked)
        if budget.chars > COMMAND_MAX:
            raise refuse("too_big", language, limit=COMMAND_MAX)
        return checked
    if depth >= DEPTH_MAX:
        raise refuse("too_deep", language, field, limit=DEPTH_MAX)
    if isinstance(raw, list | tuple):
        return [value(item, field, language, depth + 1, budget) for item in raw]
    if isinstance(raw, Mapping):
        result = {}
        for k, item in raw.items():
            if not isinstance(k, str):
                raise refuse("bad_value", language, field)
            checked_key = text(k, field, language, limit=KEY_MAX)
            result[checked_key] = value(item, field, language, depth + 1, budget,
                                        _limit_for(checked_key))
        return result
    raise refuse("bad_value", language, field)


def _limit_for(field: str) -> int:
    return {"title": TITLE_MAX, "code": CODE_MAX, "text": TEXT_MAX}.get(field, ARG_TEXT_MAX)


def changes(raw: Any, language: str) -> Any:
    """A proposal's rule changes: at most CHANGES_MAX, each with bounded title, text and
    code. Their shape is the kernel's to judge (it refuses with its own messages)."""
    if isinstance(raw, list) and len(raw) > CHANGES_MAX:
        raise refuse("too_many_changes", language, count=len(raw), limit=CHANGES_MAX)
    return raw


def command(actor: Any, action: Any, args: Mapping[str, Any] | None,
            language: str) -> tuple[str | None, str, dict[str, Any]]:
    """A command's actor, action and arguments, checked and normalised."""
    checked_actor = None if actor is None else name(actor, language, "player")
    checked_action = key(action, "action", language)
    args = dict(args or {})
    if len(args) > ARGS_MAX:
        raise refuse("too_many_args", language, count=len(args), limit=ARGS_MAX)
    budget = _Budget()
    checked: dict[str, Any] = {}
    for raw_key, raw_value in args.items():
        arg = key(raw_key, "argument", language)
        checked[arg] = value(raw_value, arg, language, budget=budget, limit=_limit_for(arg))
        if arg == "changes":
            checked[arg] = changes(checked[arg], language)
    return checked_actor, checked_action, checked


def rule(raw: Mapping[str, Any], language: str) -> None:
    """A rule as given to a new game: bounded title, text and code, valid text."""
    text(raw.get("title") or "", "title", language, TITLE_MAX)
    text(raw.get("text") or "", "text", language, TEXT_MAX)
    text(raw.get("code") or "", "code", language, CODE_MAX)


# --- what the service calls -------------------------------------------------------------

def new_game(language: str, game: Any, game_name: Any, players: Any,
             rules: Any) -> tuple[str | None, str | None, list[Any] | None]:
    """A new game's id, name, initial players and rules, checked."""
    checked_id = None if game is None else game_id(game, language)
    checked_name = None if game_name is None else \
        text(game_name, "name", language, GAME_NAME_MAX, blank=False)
    checked_players = None if players is None else player_list(players, language)
    for each in rules or []:
        rule(each, language)
    return checked_id, checked_name, checked_players


def command_for(state: Any, actor: Any, action: Any,
                args: Mapping[str, Any] | None) -> tuple[str | None, str, dict[str, Any]]:
    """A command checked for the game ``state``: valid input, and an actor who is not a
    player cannot pose as one by a look-alike name (e.g. when joining)."""
    checked = command(actor, action, args, state.language)
    if checked[0] is not None and checked[0] not in state.players:
        other = look_alike(checked[0], state.players)
        if other is not None:
            raise refuse("look_alike", state.language, name=checked[0], other=other)
    return checked


def raw(value: str) -> str:
    """An inbound message kept as received: undecodable parts made visible, never
    refused (the raw input is evidence and must be storable)."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "backslashreplace")
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def game_exists(game: str, language: str = "en") -> str:
    return translate(MESSAGES["game_exists"], language, game=game)


def no_game(game: str, language: str = "en") -> str:
    return translate(MESSAGES["no_game"], language, game=_clip(game))


def moment(value: Any, field: str, language: str = "en") -> str:
    """A time given by a person (``2026-03-04`` or ``2026-03-04T10:00:00Z``), normalised
    to UTC; anything else is refused in one sentence."""
    from scriba.kernel.timeutil import normalize

    checked = decode(value, field, language)
    try:
        return normalize(checked)
    except (ValueError, TypeError, OverflowError):
        raise InvalidInput(translate(
            "{value} is not a date (write e.g. 2026-03-04 or 2026-03-04T10:00:00Z).",
            language, value=_clip(checked)), field=field) from None


def duration(value: Any, field: str, language: str = "en") -> int:
    """Seconds in a duration given by a person: ``90``, ``45m``, ``3d``, ``1w 2d``."""
    from scriba.kernel.timeutil import parse_duration

    checked = decode(value, field, language)
    try:
        seconds = parse_duration(int(checked) if checked.strip().isdigit() else checked)
    except (ValueError, OverflowError):
        raise InvalidInput(translate(MESSAGES["bad_duration"], language,
                                     value=_clip(checked)), field=field) from None
    if seconds > 100 * 366 * 86400:
        raise InvalidInput(translate(MESSAGES["bad_duration"], language,
                                     value=_clip(checked)), field=field)
    return seconds

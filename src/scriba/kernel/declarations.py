"""What rules declare (actions, variables, offices, the events they react to): checked
when the code is proposed.

A malformed declaration — an action without a name, a parameter of an unknown type, a
``who`` that is not a list of ``player`` / ``anyone`` / ``office:NAME`` — is a fault in
the proposed code, refused with a sentence saying what is wrong, the same way a syntax
error is. Refused then, it can never break the vote that would adopt it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scriba.kernel.registry import reacts_to_error
from scriba.kernel.values import BadValue, check_value

ACTION_KINDS = ("plain", "propose", "vote", "join", "leave", "case", "judge", "appeal")
# case: an existing case's number; rule: the id of a rule, in force or not; event: the
# sequence number of an event of the game's log.
PARAM_TYPES = ("str", "int", "number", "bool", "player", "proposal", "changes", "list",
               "dict", "any", "case", "rule", "event")
# A parameter naming one of the game's assets of a kind ("asset:judgment"): given as its
# key; the page offers the keys that exist (the rules' checks say which are open).
ASSET_TYPE = "asset:"


def param_type_known(type_: str) -> bool:
    base = type_.rstrip("?")
    return base in PARAM_TYPES or (base.startswith(ASSET_TYPE) and len(base) > len(ASSET_TYPE))
VARIABLE_SCOPES = ("player", "game")


@dataclass
class Declarations:
    actions: dict[str, dict[str, Any]]
    variables: dict[tuple[str, str], dict[str, Any]]
    offices: dict[str, dict[str, Any]]
    # rule id -> its reacts_to() filters: event type -> field -> values that interest it
    reacts: dict[str, dict[str, dict[str, list[Any]]]] = field(default_factory=dict)

    def initials(self) -> dict[tuple[str, str], Any]:
        return {key: decl.get("initial", 0) for key, decl in self.variables.items()}


def declaration_error(declared: dict[str, Any]) -> str | None:
    """Why these declarations cannot be used, or None when they are well formed."""
    try:
        for hook in ("actions", "variables", "offices"):
            if hook in declared:
                _check_list(hook, declared[hook])
    except BadValue as bad:
        return str(bad)
    return reacts_to_error(declared.get("reacts_to"))


def _check_list(hook: str, items: Any) -> None:
    if items is None:
        return
    if not isinstance(items, list):
        raise BadValue(f"{hook}() must return a list, not {_kind(items)}")
    check_value(items, f"{hook}()")
    for index, item in enumerate(items, start=1):
        where = f"{hook}() entry {index}"
        if hook == "offices" and isinstance(item, str):
            _name(item, where)
            continue
        if not isinstance(item, dict):
            raise BadValue(f"{where} must be a dict, not {_kind(item)}")
        _name(item.get("name"), where)
        where = f"{hook}() entry {index} ({item['name']})"
        if hook == "actions":
            _check_action(item, where)
        elif hook == "variables" and item.get("scope", "player") not in VARIABLE_SCOPES:
            raise BadValue(f"{where}: scope must be \"player\" or \"game\", "
                           f"not {item.get('scope')!r}")
        # sealed (an action) and private (a variable): what readers may see, not a rule
        flag = "sealed" if hook == "actions" else "private" if hook == "variables" else None
        if flag and not isinstance(item.get(flag, False), bool):
            raise BadValue(f"{where}: {flag} must be True or False, not {item[flag]!r}")


def _check_action(action: dict[str, Any], where: str) -> None:
    kind = action.get("kind", "plain")
    if kind not in ACTION_KINDS:
        raise BadValue(f"{where}: kind must be one of {', '.join(ACTION_KINDS)}, "
                       f"not {kind!r}")
    params = action.get("params")
    if params is not None:
        if not isinstance(params, dict):
            raise BadValue(f"{where}: params must be a dict of name to type, "
                           f"not {_kind(params)}")
        for name, type_ in params.items():
            if not isinstance(type_, str) or not param_type_known(type_):
                raise BadValue(f"{where}: parameter {name!r} has type {type_!r}; "
                               f"types are {', '.join(PARAM_TYPES)} or asset:KIND "
                               f"(with ? if optional)")
    who = action.get("who", "player")
    for option in who if isinstance(who, list) else [who]:
        if not isinstance(option, str) or not (
                option in ("player", "anyone") or
                (option.startswith("office:") and len(option) > 7)):
            raise BadValue(f"{where}: who must be \"player\", \"anyone\", \"office:NAME\" "
                           f"or a list of these, not {option!r}")
    choices = action.get("choices")
    if choices is not None and (not isinstance(choices, dict) or
                                not all(isinstance(v, str) for v in choices.values())):
        raise BadValue(f"{where}: choices must map the ruleset's words to outcomes "
                       "(for, against, abstain, ...) as text")


def _name(name: Any, where: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise BadValue(f"{where} has no name (a non-empty \"name\" text is required)")


def _kind(value: Any) -> str:
    return {list: "a list", dict: "a dict", str: "a text", type(None): "None"}.get(
        type(value), f"a {type(value).__name__}")

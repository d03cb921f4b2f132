"""Checking a command against the declarations before any rule is asked.

Who may take the action, which arguments it takes and of which types, whether a vote's
proposal is open and its word is one the ruleset knows, whether proposed rule changes
apply and their code compiles. A failed check is a :class:`Refused` with a message id.
"""

from __future__ import annotations

from typing import Any

from scriba.kernel import changes as rule_changes
from scriba.kernel.declarations import ASSET_TYPE
from scriba.kernel.errors import Refused
from scriba.kernel.in_force import RulesInForce
from scriba.kernel.state import ACTIVE, GameState
from scriba.kernel.values import BadValue, check_value

CANONICAL_CHOICES = ("for", "against", "abstain")
KIND_PARAMS: dict[str, dict[str, str]] = {
    "propose": {"changes": "changes", "label": "str?", "title": "str?", "text": "str?"},
    "vote": {"proposal": "proposal", "choice": "any"},
    # Cases (kernel/cases.py): a case's further params of type rule, proposal, player or
    # event are what it concerns, a list "parties" its parties, the others its data.
    "case": {"question": "str"},
    # rules: a list of rule ids, or them in a text ("212, 101"), as a form or letter has it
    "judge": {"case": "case", "judgment": "any", "reasons": "str?", "rules": "any?"},
    "appeal": {"case": "case", "reasons": "str?"},
}
# A judgment's word, where the action declares no choices: any text up to this long.
MAX_JUDGMENT = 200


def check_actor(state: GameState, actor: str | None, action_name: str,
                action: dict[str, Any]) -> None:
    who = action.get("who", "player")
    allowed = who if isinstance(who, list) else [who]
    is_player = actor in state.players and state.players[actor]["status"] == ACTIVE
    kind = action.get("kind", "plain")
    if kind == "join" and is_player:
        raise Refused("already_player", player=actor)
    for option in allowed:
        if option == "anyone" or (option == "player" and is_player):
            return
        if option.startswith("office:") and state.offices.get(option[7:]) == actor \
                and actor is not None:
            return
    offices = [o[7:] for o in allowed if o.startswith("office:")]
    if offices:
        raise Refused("not_office_holder", actor=actor or "?", action=action_name,
                      office=", ".join(offices))
    raise Refused("not_a_player", actor=actor or "?")


def check_args(rules: RulesInForce, state: GameState, action_name: str, raw: dict[str, Any],
               action: dict[str, Any], actor: str | None = None) -> dict[str, Any]:
    kind = action.get("kind", "plain")
    params = {**KIND_PARAMS.get(kind, {}), **(action.get("params") or {})}
    args = dict(raw)
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise Refused("unknown_argument", action=action_name, argument=", ".join(unknown),
                      expected=", ".join(params) or "-")
    try:  # arguments are stored with the command: they must not poison the log
        check_value(args, "an argument")
    except BadValue as bad:
        raise Refused("argument_not_plain", action=action_name, reason=str(bad)) from None
    for name, type_ in params.items():
        optional = type_.endswith("?")
        type_ = type_.rstrip("?")
        if args.get(name) is None:
            if not optional:
                raise Refused("missing_argument", action=action_name, argument=name)
            args.pop(name, None)
            continue
        args[name] = coerce(state, action_name, name, type_, args[name])
    for name, type_ in params.items():
        if type_.rstrip("?") == "changes" and name in args:
            args[name] = check_changes(rules, state, args[name])
    if kind == "propose" and args.get("label") and state.proposal_by_label(str(args["label"])):
        raise Refused("label_taken", label=args["label"])
    if kind == "vote":
        proposal = state.proposals[str(args["proposal"])]
        if proposal["status"] != "open":
            raise Refused("proposal_closed", proposal=proposal.get("label") or
                          proposal["number"], status=proposal["status"])
        args["choice"] = choice(action, args["choice"])
    if kind in ("case", "judge", "appeal"):
        check_case_args(state, kind, actor, action_name, args, action)
    return args


def check_case_args(state: GameState, kind: str, actor: str | None, action_name: str,
                    args: dict[str, Any], action: dict[str, Any]) -> None:
    """What the kernel itself refuses of a case's commands: judging a case not open or
    not one's own, appealing a case not judged, a judgment word the ruleset does not know,
    a rule that does not exist, a party who does not play."""
    if kind == "case":
        if not str(args["question"]).strip():
            raise Refused("missing_argument", action=action_name, argument="question")
        if "parties" in args and (action.get("params") or {}).get("parties", "").rstrip(
                "?") == "list":
            args["parties"] = list(dict.fromkeys(
                coerce(state, action_name, "parties", "player", p) for p in args["parties"]))
        return
    case = state.cases[str(args["case"])]
    if kind == "appeal":
        if case["status"] != "judged":
            raise Refused("case_not_judged", case=case["number"], status=case["status"])
        return
    if case["status"] != "open":
        raise Refused("case_not_open", case=case["number"], status=case["status"])
    if case["judge"] is not None and case["judge"] != actor:
        raise Refused("not_the_judge", case=case["number"], judge=case["judge"],
                      actor=actor or "?")
    args["judgment"] = judgment_word(action, args["judgment"], action_name)
    if "rules" in args:
        named = args["rules"]
        if isinstance(named, str | int) and not isinstance(named, bool):
            named = str(named).replace(",", " ").split()
        if not isinstance(named, list):
            raise Refused("bad_argument", action=action_name, argument="rules",
                          expected="list", value=repr(named)[:200])
        args["rules"] = list(dict.fromkeys(
            coerce(state, action_name, "rules", "rule", r) for r in named))


def judgment_word(action: dict[str, Any], word: Any, action_name: str) -> str:
    """The judgment as the ruleset words it: with ``choices``, the declared word the
    player's matches like a vote's (case and spaces aside), or the first declared word
    for the meaning they wrote; without, their text, trimmed, up to MAX_JUDGMENT."""
    declared = action.get("choices") or {}
    text = "yes" if word is True else "no" if word is False else str(word).strip()
    if not declared:
        if not text or len(text) > MAX_JUDGMENT:
            raise Refused("bad_judgment_text", action=action_name, limit=MAX_JUDGMENT)
        return text
    key = " ".join(text.lower().split())
    for name in declared:
        if " ".join(str(name).lower().split()) == key:
            return str(name)
    for name, meaning in declared.items():
        if str(meaning).lower() == key:
            return str(name)
    raise Refused("bad_judgment", judgment=text[:MAX_JUDGMENT],
                  accepted=", ".join(map(str, declared)))


def check_changes(rules: RulesInForce, state: GameState, raw: Any) -> list[dict[str, Any]]:
    """Proposed changes, normalised; refused unless each applies after the ones before
    it and all the code in them compiles with well-formed declarations."""
    if not isinstance(raw, list) or not raw:
        raise Refused("changes_empty")
    changes = [rule_changes.normalize_change(c) for c in raw]
    # Changes touch a rule's fields, attributes and history: a copy of those suffices.
    scratch = {rid: {**r, "attributes": dict(r["attributes"]), "history": []}
               for rid, r in state.rules.items()}
    for change in changes:
        for code in rule_changes.codes_in(change):
            error = rules.info(code).error
            if error:
                raise Refused("rule_code_invalid", rule=change.get("rule") or "new", code=code,
                              error=error)
        if change["type"] != "enact" or change.get("rule"):
            rule_changes.check_change_applies(scratch, change)
        if change["type"] != "enact":
            rule_changes.apply_change(scratch, change, {}, state.time or "0000-00-00")
    return changes


def coerce(state: GameState, action: str, name: str, type_: str, value: Any) -> Any:
    def bad() -> Refused:
        return Refused("bad_argument", action=action, argument=name, expected=type_,
                       value=repr(value)[:200])
    if type_ == "int":
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
        raise bad()
    if type_ == "number":
        try:
            return float(value) if not isinstance(value, int) else value
        except (TypeError, ValueError):
            raise bad() from None
    if type_ == "bool":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "yes", "1", "false", "no", "0"):
            return str(value).lower() in ("true", "yes", "1")
        raise bad()
    if type_ == "player":
        if str(value) not in state.players:
            raise Refused("unknown_player", player=str(value))
        return str(value)
    if type_ == "proposal":
        proposal = state.proposals.get(str(value)) or state.proposal_by_label(str(value))
        if proposal is None:
            raise Refused("unknown_proposal", proposal=str(value))
        return proposal["number"]
    if type_ == "case":
        case = state.cases.get(str(value).strip().lstrip("#")) \
            if not isinstance(value, bool | dict | list) else None
        if case is None:
            raise Refused("unknown_case", case=str(value)[:200])
        return case["number"]
    if type_ == "rule":
        if isinstance(value, bool | dict | list) or str(value).strip() not in state.rules:
            raise Refused("unknown_rule", rule=str(value)[:200])
        return str(value).strip()
    if type_ == "event":
        text = str(value).strip()
        if isinstance(value, bool | dict | list) or not text.isdigit() \
                or not 1 <= int(text) <= state.seq:
            raise Refused("unknown_event", event=str(value)[:200])
        return int(text)
    if type_ == "str" or type_.startswith(ASSET_TYPE):
        # An asset's key is kept as text; whether that asset exists, and is open to this
        # action, the rules' checks say in their own words.
        if isinstance(value, dict | list):
            raise bad()
        return str(value)
    if type_ == "list" and not isinstance(value, list):
        raise bad()
    if type_ == "dict" and not isinstance(value, dict):
        raise bad()
    return value


def choice(action: dict[str, Any], word: Any) -> str:
    words = {str(k).lower(): v for k, v in (action.get("choices") or {}).items()}
    if isinstance(word, bool):  # YAML reads an unquoted yes/no as a boolean
        yes_no = "yes" if word else "no"
        word = yes_no if yes_no in words else ("for" if word else "against")
    key = str(word).strip().lower()
    if key in words:
        return str(words[key])
    if key in CANONICAL_CHOICES or key in words.values():
        return key
    accepted = list(action.get("choices") or {}) + list(CANONICAL_CHOICES)
    raise Refused("bad_choice", choice=word, accepted=", ".join(accepted))

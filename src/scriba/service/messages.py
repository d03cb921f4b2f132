"""The kernel's refusal messages, in English; translations live in locale/<lang>/*.po.

Messages written by rule code are already in the ruleset's language and pass through.
"""

from __future__ import annotations

from scriba.kernel.errors import Refused
from scriba.service import catalogs
from scriba.service.codeerrors import explain

MESSAGES: dict[str, str] = {
    "unknown_action": "There is no action '{action}' in the rules in force "
                      "(available: {available}).",
    "not_a_player": "{actor} is not a player of this game.",
    "not_office_holder": "Only the holder of the office {office} may do '{action}'; "
                         "{actor} does not hold it.",
    "already_player": "{player} is already a player.",
    "unknown_argument": "'{action}' does not take {argument} (it takes: {expected}).",
    "missing_argument": "'{action}' needs {argument}.",
    "bad_argument": "'{action}': {argument} must be {expected}, not {value}.",
    "argument_not_plain": "'{action}': {reason}.",
    "unknown_player": "There is no player named {player}.",
    "unknown_proposal": "There is no proposal {proposal}.",
    "proposal_closed": "Proposal {proposal} is closed ({status}): no more votes.",
    "bad_choice": "'{choice}' is not a vote; write one of: {accepted}.",
    "unknown_case": "There is no case {case}.",
    "unknown_rule": "There is no rule {rule}.",
    "unknown_event": "There is no event {event} in this game's record.",
    "case_not_open": "Case {case} is not open: it cannot be judged now.",
    "not_the_judge": "Case {case} is for its judge, {judge}, to judge; not for {actor}.",
    "case_not_judged": "Case {case} has no judgment to appeal now.",
    "bad_judgment": "'{judgment}' is not a judgment; write one of: {accepted}.",
    "bad_judgment_text": "'{action}' needs a judgment of at most {limit} characters.",
    "label_taken": "There is already a proposal labelled {label}.",
    "changes_empty": "A proposal needs at least one rule change.",
    "change_malformed": "A rule change must look like {{enact: {{...}}}}, not {change}.",
    "change_unknown_type": "Unknown kind of rule change '{type}' (known: {known}).",
    "change_needs_rule": "The change '{type}' must name a rule.",
    "change_enact_empty": "A new rule needs a text or code.",
    "change_needs_paragraph": "Amending a paragraph needs the paragraph.",
    "change_needs_target": "Renumbering needs the new number.",
    "change_rule_missing": "Rule {rule} is not in force, so '{type}' cannot apply to it.",
    "change_rule_exists": "Rule {rule} already exists.",
    "change_reenact_in_force": "Rule {rule} is in force: only a repealed rule can be "
                               "re-enacted.",
    "change_paragraph_missing": "There is no paragraph {paragraph} in that rule.",
    # The error told to its author follows (service.codeerrors): sentences, and the line
    # with a caret under it as a block indented by four spaces (pages show it preformatted).
    "rule_code_invalid": "The code of rule {rule} does not compile:\n{error}",
    "rule_code_invalid_new": "The new rule's code does not compile:\n{error}",
    "runaway_reactions": "The rules kept reacting to each other beyond {count} events; "
                         "the command was refused and nothing was changed.",
    "game_ended": "The game is over.",
    "internal_error": "Scriba failed on this command ({error}); nothing was changed and "
                      "your message is kept. Please tell the game's officer.",
}


def translate(message_id: str, language: str, **params: object) -> str:
    template = catalogs.lookup("scriba", language, MESSAGES.get(message_id, message_id))
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):
        return template


def refusal_text(refusal: Refused, language: str) -> str:
    if refusal.literal:
        return refusal.message_id
    if refusal.message_id == "rule_code_invalid":
        return _compile_error(refusal.params, language)
    return translate(refusal.message_id, language, **refusal.params)


def _compile_error(params: dict[str, object], language: str) -> str:
    """A compile error of proposed code: which rule's ("new": the rule a proposal enacts,
    not yet numbered), then the error told to its author (service.codeerrors)."""
    code = params.get("code")
    error = explain(str(params.get("error") or ""), language,
                    code if isinstance(code, str) else None)
    rule = params.get("rule")
    if rule in (None, "", "new"):
        return translate("rule_code_invalid_new", language, error=error)
    return translate("rule_code_invalid", language, rule=rule, error=error)

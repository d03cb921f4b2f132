"""How one command is decided on a game's state: the kernel's answer, or a refusal kept
as a ``command_refused`` event (a refusal of the rules, or a fault of ours, so that no
input is lost). Pure: nothing here reads or writes the store; :mod:`.commands` does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriba.kernel.engine import Command, Engine
from scriba.kernel.errors import Refused
from scriba.kernel.events import Event, apply_event, make_event
from scriba.kernel.journal import trial
from scriba.kernel.state import GameState
from scriba.service import validation
from scriba.service.errors import InvalidInput
from scriba.service.inputs import Outcome
from scriba.service.messages import refusal_text, translate
from scriba.service.words import Words, ruleset_words

Decide = Callable[[GameState, str], tuple[list[Event], Outcome]]


def decider(engine: Engine, command: dict[str, Any], raw: str) -> Decide:
    """How a kept command is decided: admitting a player or performing an action."""
    shapes = {"perform": ("actor", "action", "args"), "add_player": ("name",)}
    if not all(key in command for key in shapes.get(command.get("op"), ("-",))):
        return fault(command, raw, ValueError("malformed stored command"))
    if command["op"] == "add_player":
        return lambda state, now: admit(engine, state, command["name"], now)
    letter = command.get("letter")  # kept with the command: a replay decides the same
    return lambda state, now: decide_command(
        engine, state,
        Command(command["actor"], command["action"], dict(command["args"] or {}),
                letter if isinstance(letter, dict) else None), now, raw)


def fault(command: dict[str, Any], raw: str, error: Exception) -> Decide:
    """A decision that records the command as refused for an internal error."""
    def decide(state: GameState, now: str) -> tuple[list[Event], Outcome]:
        message = translate("internal_error", state.language, error=f"{error!r}"[:300])
        refused = make_event("command_refused", now, command.get("actor"),
                             action=command.get("action", command.get("op")),
                             args=command.get("args", {}), raw=raw, message=message,
                             reason="internal_error")
        return [refused], Outcome(False, message, [refused])
    return decide


def decide_command(engine: Engine, state: GameState, command: Command, now: str,
                   raw: str) -> tuple[list[Event], Outcome]:
    """Fire the timers the clock has passed, then let the kernel decide the command."""
    fired = engine.fire_due_timers(state, now)
    try:
        with trial(state):  # the timers' events, undone after: no whole-state copy
            for event in fired:
                apply_event(state, event)
            events = engine.handle(state, command, now)
        return fired + events, Outcome(True, "", events)
    except Refused as refusal:
        _in_words(refusal, state)
        message = refusal_text(refusal, state.language)
        reason = refusal.message_id
        # the rule that refused, for the refused player's receipt
        rule = refusal.params.get("rule") if refusal.literal else None
    except Exception as error:  # noqa: BLE001 - a fault of ours must not lose the input
        message = translate("internal_error", state.language, error=f"{error!r}"[:300])
        reason, rule = "internal_error", None
    refused = make_event("command_refused", now, command.actor, action=command.action,
                         args=command.args, raw=raw, message=message, reason=reason,
                         **({"rule": str(rule)} if rule else {}))
    return fired + [refused], Outcome(False, message, [refused])


# A parameter's type, as a refusal tells the player what was expected.
TYPE_WORDS = {
    "int": "a whole number", "number": "a number", "bool": "yes or no",
    "player": "a player's name", "proposal": "a proposal's number", "case": "a case's number",
    "rule": "a rule's number", "event": "an event's number", "str": "a text",
    "list": "a list", "dict": "a set of values",
}

# The fields the kernel gives an action of a kind, as the forms title them and a refusal
# names them where the ruleset gives them no label of their own (translated in the scriba
# catalog; the pages ask field_word, so a field is named in one place).
FIELD_WORDS = {
    "label": "Label of the proposal", "title": "Title of the proposal",
    "text": "Text of the proposal", "proposal": "Proposal", "choice": "Your vote",
    "question": "Question", "case": "Case", "judgment": "Judgment", "reasons": "Reasons",
    "rules": "Rules it interprets", "parties": "Parties",
}


def field_word(name: str, language: str) -> str | None:
    """A field the kernel gives an action (:data:`FIELD_WORDS`) as a form titles it and a
    refusal names it, in ``language``; None for a parameter that is not one of them."""
    english = FIELD_WORDS.get(name)
    return translate(english, language) if english is not None else None


def _in_words(refusal: Refused, state: GameState) -> None:
    """What a refusal names — an office, an action, its parameters, a type — said with the
    ruleset's labels ("Re", "Poni il Veto", "la domanda"), not by their internal names
    ("King", "veto", "question"): a player reads it."""
    params = refusal.params
    if "action" not in params or refusal.literal:
        return
    words = ruleset_words(state)
    if refusal.message_id == "unknown_action":  # as the player wrote it; the others by label
        params["available"] = ", ".join(
            _label(words, name) for name in str(params.get("available", "")).split(", "))
        return
    action = str(params["action"])
    told = words.action(action)
    params["action"] = _label(words, action)

    def param(name: str) -> str:  # quoted like the action: a label is a field's title
        label = told.params.get(name, (None, None))[0]
        if label is not None:
            return f"'{label.text}'"
        if name in FIELD_WORDS:
            return f"'{field_word(name, state.language)}'"
        return f"'{name.replace('_', ' ')}'"

    if refusal.message_id == "not_office_holder":
        offices = str(params.get("office", "")).split(", ")
        params["office"] = ", ".join(words.office(office) for office in offices)
    elif refusal.message_id in ("missing_argument", "bad_argument"):
        params["argument"] = param(str(params.get("argument", "")))
    if refusal.message_id == "unknown_argument":
        expected = str(params["expected"])
        params["expected"] = ", ".join(param(p) for p in expected.split(", ")) \
            if expected != "-" else expected  # "-": it takes nothing
    elif refusal.message_id == "bad_argument":
        expected = str(params.get("expected", ""))
        params["expected"] = translate(TYPE_WORDS[expected], state.language) \
            if expected in TYPE_WORDS else expected


def _label(words: Words, action: str) -> str:
    said = words.action(action).label
    return said.text if said is not None else action.replace("_", " ")


def admit(engine: Engine, state: GameState, name: str, now: str
          ) -> tuple[list[Event], Outcome]:
    """Admit a player (the officer's act), checked again on the state it is decided on."""
    if state.ended:
        return [], Outcome(False, translate("game_ended", state.language))
    if name in state.players and state.players[name]["status"] == "active":
        return [], Outcome(False, translate("already_player", state.language, player=name))
    try:  # checked before it was kept; a look-alike may have joined meanwhile
        validation.new_player(name, state.players, state.language)
    except InvalidInput as refused:
        return [], Outcome(False, str(refused))
    events = engine.admit(state, name, now)
    return events, Outcome(True, "", events)

"""What a letter's receipt says of one of its commands: the command as understood, in the
game's words (an action's and its parameters' labels, never their internal names); for a
proposal, the text of each change as it was recorded, quoted whole, so that its author can
check it and withdraw or correct it; for a refusal, the word "refused" in the reader's
language with the rule that refused and its reason."""

from __future__ import annotations

from typing import Any

from scriba.service.letters import mail_text
from scriba.service.words import Words, change_phrase, key_word, show_value

_TEXT = {
    "refused": "Refused: {what} \u2014 {reason}",
    "refused_rule": "Refused: {what} \u2014 rule {rule}: {reason}",
    "recorded": "Recorded text of proposal {number}:",
    "code": "Code:",
    "quoted": "\u201c{text}\u201d",
}


def _say(key: str, language: str, **params: Any) -> str:
    return mail_text(_TEXT[key], language).format(**params)


def action_label(words: Words, action: str) -> str:
    said = words.action(action).label
    return said.text if said is not None else action.replace("_", " ")


def param_label(words: Words, action: str, param: str) -> str:
    said = words.action(action).params.get(param, (None, None))[0]
    return said.text if said is not None else key_word(param, words.language)


def understood(action: str, args: dict[str, Any], words: Words) -> str:
    """A command as Scriba read it: “Cedi Nomica” (A: Carla, Quanti N: 100); a proposal by
    its title, a vote by its proposal and vote word."""
    label = _say("quoted", words.language, text=action_label(words, action))
    args = dict(args or {})
    if "changes" in args:  # a proposal: its title says it; its text is quoted apart
        title = args.get("title") or next(
            (c.get("title") for c in _changes(args["changes"]) if c.get("title")), None)
        return f"{label} {_say('quoted', words.language, text=title)}" if title else label
    shown = []
    for key, value in args.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            value = "; ".join(", ".join(f"{show_value(x, words.language)}"
                                        for x in v.values()) for v in value)
        shown.append(f"{param_label(words, action, key)}: "
                     f"{show_value(value, words.language)}")
    return f"{label} ({', '.join(shown)})" if shown else label


def refusal(event: dict[str, Any], message: str, words: Words) -> str:
    """ "Refused: “Vota” (Proposta: 9, …) — rule 1700: …" in the reader's language."""
    payload = event.get("payload") or {}
    what = understood(str(payload.get("action") or "?"), payload.get("args") or {}, words)
    rule = payload.get("rule")
    key = "refused_rule" if rule else "refused"
    return _say(key, words.language, what=what, rule=rule, reason=message or "?")


def _changes(changes: Any) -> list[dict[str, Any]]:
    """Changes as ``{"type": …, …}`` whichever way they were written."""
    out = []
    for change in changes if isinstance(changes, list) else []:
        if not isinstance(change, dict):
            continue
        if "type" in change:
            out.append(change)
        elif len(change) == 1 and isinstance(next(iter(change.values())), dict):
            kind, body = next(iter(change.items()))
            out.append({"type": kind, **body})
    return out


def recorded(events: list[dict[str, Any]], language: str) -> str:
    """The text of each proposal the events submitted, quoted whole as it was kept."""
    blocks = []
    for event in events:
        if event.get("type") != "proposal_submitted":
            continue
        payload = event.get("payload") or {}
        lines = [_say("recorded", language, number=payload.get("number", "?"))]
        for change in _changes(payload.get("changes")):
            lines.append(f"* {change_phrase(change, language)}")
            for key in ("text", "code"):
                text = str(change.get(key) or "").rstrip()
                if text:
                    if key == "code":
                        lines.append(_say("code", language))
                    lines += [f"> {line}".rstrip() for line in text.split("\n")]
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def answer(described: str, outcome: Any, words: Words | None) -> str:
    """A command's answer in its receipt: the refusal said as one, or what was accepted
    followed by each proposal's recorded text."""
    events = list(getattr(outcome, "events", None) or [])
    if not outcome.accepted:
        refused = next((e for e in events if e.get("type") == "command_refused"), None)
        if refused is not None and words is not None:
            return refusal(refused, outcome.message, words)
        return described
    quoted = recorded(events, words.language if words is not None else "en")
    return f"{described}\n{quoted}" if quoted else described


def receipt_words(reads: Any, state: Any, language: str) -> Words | None:
    """The game's words for a receipt, from a state at hand (no read of the store: the
    outbox asks inside the decision's transaction)."""
    from scriba.service.words import declared_words  # noqa: PLC0415 - kept light

    if state is None:
        return None
    try:
        return declared_words(state, reads.engine.declarations(state), language)
    except Exception:  # noqa: BLE001 - a failing rule must not lose the receipt
        return None

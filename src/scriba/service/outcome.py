"""The reply to a command: what was accepted, what it changed (told by the
:class:`~scriba.service.narrate.Narrator`), and what comes next — the deadlines of the
proposals it touched; or the refusal."""

from __future__ import annotations

from typing import Any

from scriba.service.narrate import Event, Narrator, bookkeeping
from scriba.service.words import Words, _, base_words, time_in_words


def _next_steps(state: Any, events: list[Event], words: Words) -> list[str]:
    """What comes next: the deadlines of the proposals the command touched."""
    touched = {str(e["payload"].get("proposal", e["payload"].get("number")))
               for e in events if e["type"] in ("vote_cast", "proposal_submitted")}
    lines = []
    for number in sorted(touched):
        proposal = state.proposals.get(number)
        if proposal is None or proposal["status"] != "open":
            continue
        deadline = _proposal_deadline(state, proposal)
        label = words.proposal(number)
        if deadline:
            lines.append(_("Proposal {label} is open until {time}.", words.language,
                           label=label, time=time_in_words(deadline, words.language)))
        else:
            lines.append(_("Proposal {label} is open.", words.language, label=label))
    return lines


def _proposal_deadline(state: Any, proposal: dict[str, Any]) -> str | None:
    numbers = {proposal["number"], str(proposal["number"]), proposal.get("label")}
    later = [t for t in state.timers.values() if t["at"] > state.time]
    tied = [t["at"] for t in later
            if isinstance(t.get("data"), dict) and t["data"].get("proposal") in numbers]
    if tied:
        return min(tied)
    # Else the next deadline of the game (a period's end may close its votes).
    upcoming = sorted(t["at"] for t in later)
    return upcoming[0] if upcoming else None


def describe_outcome(outcome: Any, language: str | None = None,
                     words: Words | None = None, separator: str = " ") -> str:
    """The reply to a command: what was accepted, what it changed, what comes next; or the
    refusal (the rules' own message, already in the game's language).

    ``words`` (from ``Reads.words(game)``) brings the ruleset's vote words and declared
    labels; without it the state's own labels are used. ``separator`` goes between its
    sentences: a space on a page, a new line in a letter.
    """
    state = outcome.state
    if not outcome.accepted:
        return outcome.message
    if state is None:
        return _("Accepted.", language or "en")
    words = words or base_words(state, language)
    language = language or words.language
    words.language = language
    events = outcome.events or []
    narrator = Narrator(words)
    told = [text for event in events
            if (text := narrator.tell(event)) and not bookkeeping(event)]
    head = _("Accepted:", language) if not events or events[0]["type"] not in (
        "vote_cast", "proposal_submitted") else (
        _("Vote recorded:", language) if events[0]["type"] == "vote_cast"
        else _("Proposal recorded:", language))
    lines = [head + " " + told[0]] + told[1:] if told else [head]
    return separator.join(lines + _next_steps(state, events, words))

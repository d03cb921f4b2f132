"""A letter's commands as the front acts on them: what the writer wrote (prose passed
over), the forwarded letter when it holds the letter's only command, and the one friendly
note on what was not understood, in the game's words (never an action's internal name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scriba.mail.cleanup import split_forward
from scriba.mail.commands import Command, Grammar, Preference, Unclear, parse
from scriba.mail.courts import court_kind
from scriba.mail.replies import say
from scriba.mail.vocabulary import MODE_WORDS

MAX_NOTED = 10  # lines listed in the note; a letter of nonsense gets a short one
MAX_WEIGHED = 300  # prose lines looked at for a command misspelt


@dataclass
class Reading:
    items: list[Command | Preference]
    grammar: Grammar
    unclear: list[Unclear] = field(default_factory=list)  # lines meant as commands
    forward_skipped: bool = False


def read_commands(text: str, subject: str, actions: list[Any], labels: dict[str, Any],
                  language: str, attachments: dict[str, str] | None = None,
                  author: str = "", limit: int = 50) -> Reading:
    """The letter's commands (at most ``limit`` are read), the lines meant as commands
    and not understood, and whether a forwarded letter was skipped."""
    own, forwarded = split_forward(text)
    mode = subject.strip().lower()
    if mode in MODE_WORDS:  # List-Unsubscribe's mailto: the word is the subject
        own = f"{mode}\n{own}"
    grammar = Grammar(actions, labels, language)
    parsed = parse(own, actions, attachments, labels, language, author, limit)
    items = [i for i in parsed if isinstance(i, Command | Preference)]
    reading = Reading(items, grammar, _meant(parsed, grammar))
    if forwarded is not None:
        inside = [i for i in parse(forwarded, actions, None, labels, language, limit=1)
                  if isinstance(i, Command)]
        if len(inside) == 1 and not items:
            reading.items = list(inside)  # the forward holds the letter's only command
        elif inside:
            reading.forward_skipped = True
    return reading


def _meant(parsed: list[Any], grammar: Grammar) -> list[Unclear]:
    """The lines not understood that were meant as commands, each with the action it
    comes closest to ("votta 3 contrario": a vote, misspelt); prose is passed over. Only
    the first lines are weighed: a megabyte of prose costs no more than a page."""
    meant: list[Unclear] = []
    weighed = 0
    for item in parsed:
        if not isinstance(item, Unclear) or len(meant) > MAX_NOTED:
            continue
        if item.why != "line":
            meant.append(item)
            continue
        weighed += 1
        if weighed > MAX_WEIGHED or not grammar.looks_like_command(item.text):
            continue
        item.action = grammar.nearest(item.text)
        if item.action is not None and grammar.vote_action(item.action) is \
                grammar.actions.get(item.action):
            item.why = "vote"
        meant.append(item)
    return meant


def note(reading: Reading, language: str) -> str:
    """The one note on what was not understood (and a forward skipped), or ""."""
    parts: list[str] = []
    if reading.unclear:
        lines = [say("unclear_head", language)]
        for item in reading.unclear[:MAX_NOTED]:
            hint = _hint(item, reading.grammar, language)
            line = item.text if len(item.text) <= 120 else item.text[:119] + "…"
            quoted = say("quoted", language, text=line)
            lines.append(f"- {quoted}" + (f" \u2014 {hint}" if hint else ""))
        if len(reading.unclear) > MAX_NOTED:
            lines.append("- …")
        parts.append("\n".join(lines))
    if reading.forward_skipped:
        parts.append(say("forward_skipped", language))
    return "\n".join(parts)


def _hint(item: Unclear, grammar: Grammar, language: str) -> str:
    label = grammar.label(item.action) if item.action else ""
    if item.why in ("choice", "vote"):
        words = ", ".join(grammar.game_choices(grammar.vote_action(item.action or "vote")))
        key = "votes_with" if item.why == "choice" else "vote_form"
        return say(key, language, words=words,
                   example=say("vote_example", language,
                               choice=words.split(", ")[0]))
    if item.why == "values" and court_kind(item.action or "", grammar) == "judge":
        choices = grammar.choices(grammar.actions.get(item.action or ""))
        words = list(dict.fromkeys(choices)) or ["\u2026"]
        return say("judge_form", language, words=", ".join(words), action=label,
                   word=words[0])
    if item.why == "values":
        names = [grammar.param_label(item.action or "", p)
                 for p in grammar.params(item.action or "")]
        return say("takes", language, action=label, params=", ".join(names) or "—")
    return say("did_you_mean", language, action=label) if label else ""


def how_to_write(grammar: Grammar, language: str, only: set[str] | None = None) -> str:
    """What a player of this game may write, in its words: a vote, a proposal, and the
    other actions (``only`` those, when given: what the writer may do) by their labels."""
    words = grammar.game_choices(grammar.vote_action("vote"))
    others = [grammar.label(name) for name, action in grammar.actions.items()
              if name != grammar.propose and grammar.vote_action(name) is not action
              and (only is None or name in only)]
    return say("how_to_write", language,
               vote=say("vote_example", language, choice=words[0]),
               propose=say("propose_example", language),
               actions=", ".join(say("quoted", language, text=a) for a in others[:12])
               or "—")

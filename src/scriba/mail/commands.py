"""The commands in a letter's text, read against the actions the rules declare and the
words they are called by (:mod:`.vocabulary`).

Three forms, several per letter, in order:

- a vote on one line: ``vota 12 favorevole`` / ``Ich stimme mit Ja für 12`` / ``vote 12
  for``, more parameters as ``key=value`` (``rating=8``, ``gradimento=8``); the vote words
  are the ruleset's (``choices`` of the vote action, or an abbreviation: ``fav.``) or the
  English for/against/abstain;
- a proposal as a block: ``proposta: TITLE`` (``Antrag:``, ``Vorschlag:``, the propose
  action's label), then ``key: value`` lines for its parameters by name or label
  (``lettera: 2``, ``Brief 2``) or the change (``class: R``, ``amend: 305``, ``abroga:
  305``), then the rule's text up to its boundary (:mod:`.boundaries`), and its code in a
  fenced ``` block or a ``.star`` attachment;
- a case opened (``CFJ: …``) or judged (``giudica 3 VERO perché …``): :mod:`.courts`;
- any action the rules declare, by its label in any language ("Cedi Nomica", "Presse:")
  or its name: values for its parameters in order, or after their labels ("a Carla"), or
  ``key=value`` on the line, or ``key: value`` lines below it.

Lines that are none of these come back as :class:`Unclear`; the front answers those that
look like commands (:meth:`Vocabulary.looks_like_command`) and passes over prose.
"""

from __future__ import annotations

from typing import Any

from scriba.mail import boundaries, courts
from scriba.mail.grammar import Grammar, _vote
from scriba.mail.items import (
    _INLINE_PAIR,
    _KEY_LINE,
    Command,
    Item,
    Preference,
    Unclear,
    _value,
)
from scriba.mail.vocabulary import AMEND_KEYS, REPEAL_KEYS, Head, fold, tokens

# What a letter's lines become and the grammar that reads them are imported from here
# (scriba.mail.reading, scriba.mail.performing, tests).
__all__ = ["Command", "Grammar", "Item", "Preference", "Unclear", "parse"]

_CHANGE_KEYS = {"class", "rule", "number", "kind"}
_CHANGE_ALIASES = {"klasse": "class", "classe": "class"}  # "Klasse: R"


def parse(text: str, actions: list[Any], attachments: dict[str, str] | None = None,
          labels: dict[str, Any] | None = None, language: str = "en",
          author: str = "", limit: int = 10000) -> list[Item]:
    """The letter's items in order; ``author``: the writer's name, which signs it. Reading
    stops after ``limit`` commands (more are not acted on)."""
    grammar = Grammar(actions, labels, language)
    lines = text.split("\n")
    items: list[Item] = []
    stars = [code for name, code in sorted((attachments or {}).items())]
    i = counted = commands = 0
    while i < len(lines) and commands <= limit:
        commands += sum(not isinstance(x, Unclear) for x in items[counted:])
        counted = len(items)
        line = lines[i].strip()
        if not line:
            i += 1
            continue
        words = line.split()
        if fold(words[0]) == "as" and len(words) == 2 and not items:  # officer's "as NAME"
            i += 1
            continue
        head = grammar.head(line)
        if head is None or boundaries.is_end_line(line):
            items.append(Unclear(i + 1, line))  # prose, or a command misspelt
            i += 1
        elif head.kind == "propose" and (head.colon or not head.rest
                                         or words[0] == grammar.propose):
            command, i = _proposal(lines, i, head, grammar, stars, author)
            items.append(command)
        elif head.kind == "propose":  # "Propongo di andare a cena": prose
            items.append(Unclear(i + 1, line, action=grammar.propose))
            i += 1
        elif head.kind == "mode":
            items.append(Preference(i + 1, line, head.name))
            i += 1
        elif head.kind == "vote":
            items += _vote(i + 1, line, head, grammar)
            i += 1
        elif (court := courts.court_kind(head.name, grammar)) \
                and (court == "case" or "=" not in head.rest):
            read = courts.case_args if court == "case" else courts.judge_args
            args, end = read(lines, i, head.rest, head.name, grammar)
            items.append(Command(i + 1, line, head.name, args) if args is not None
                         else Unclear(i + 1, line, "values", head.name))
            i = end
        elif not head.rest and grammar.list_param(head.name):
            command, i = _vote_list(lines, i, head.name, grammar)
            items.append(command)
        else:
            command, i = _action(lines, i, head, grammar)
            items.append(command)
    return items


def _vote_list(lines: list[str], i: int, name: str, grammar: Grammar) -> tuple[Item, int]:
    """``vote_letter`` then one vote per line: the votes go together in one command."""
    number, first = i + 1, lines[i].strip()
    ballots: list[dict[str, Any]] = []
    i += 1
    while i < len(lines) and lines[i].strip():
        head = grammar.head(lines[i].strip())
        if head is None or head.kind != "vote":
            break
        votes = _vote(i + 1, lines[i].strip(), head, grammar)
        if isinstance(votes[0], Unclear):
            return votes[0], i + 1
        ballots += [dict(vote.args) for vote in votes if isinstance(vote, Command)]
        i += 1
    param = grammar.list_param(name) or "votes"
    if not ballots:
        return Unclear(number, first, "vote", name), i
    return Command(number, first, name, {param: ballots}), i


def _action(lines: list[str], i: int, head: Head, grammar: Grammar) -> tuple[Item, int]:
    line = lines[i].strip()
    name, rest, number = head.name, head.rest, i + 1
    args: dict[str, Any] = {}
    pairs = _INLINE_PAIR.findall(rest)
    if pairs:
        for key, value in pairs:
            found = grammar.param(name, tokens(key))
            args[found[0] if found else key] = _value(value)
    elif rest:
        keyed = grammar.key(name, rest)
        if keyed is not None:
            args[keyed[0]] = _value(keyed[1])
        else:
            values = _positional(rest, name, grammar)
            if values is None:
                return Unclear(number, line, "values", name), i + 1
            args.update(values)
    i += 1
    while i < len(lines) and lines[i].strip():
        keyed = grammar.key(name, lines[i])
        if keyed is None:
            break
        args[keyed[0]] = _value(keyed[1])
        i += 1
    return Command(number, line, name, args), i


def _positional(rest: str, name: str, grammar: Grammar) -> dict[str, Any] | None:
    """Values after an action's words: each after its parameter's label ("a Carla"), the
    others in the parameters' order; one parameter takes the whole rest."""
    slots = grammar.required(name) or grammar.params(name)
    if len(slots) <= 1 and not _labelled(rest, name, grammar):
        return {slots[0]: _value(rest)} if slots else None
    raw = rest.split()
    said: dict[str, list[str]] = {}
    loose: list[str] = []
    k = 0
    while k < len(raw):  # a label takes the one word after it ("a Carla")
        found = grammar.param(name, tokens(" ".join(raw[k:k + 4])))
        if found is not None and k + found[1] < len(raw):
            said[found[0]] = [raw[k + found[1]].strip(",")]
            k += found[1] + 1
            continue
        loose.append(raw[k].strip(","))
        k += 1
    free = [s for s in slots if s not in said]
    if len(loose) > len(free):
        return None
    values = {slot: _value(v) for slot, v in zip(free, loose, strict=False)}
    values.update({key: _value(" ".join(words)) for key, words in said.items()})
    return values


def _labelled(rest: str, name: str, grammar: Grammar) -> bool:
    found = grammar.param(name, tokens(" ".join(rest.split()[:4])))
    return found is not None and len(rest.split()) > found[1]


def _proposal(lines: list[str], i: int, head: Head, grammar: Grammar,
              stars: list[str], author: str) -> tuple[Item, int]:
    first = lines[i].strip()
    number = i + 1
    title = head.rest.strip()
    propose = grammar.propose
    params = set(grammar.params(propose)) or {"label", "title", "letter"}
    args: dict[str, Any] = {}
    change: dict[str, Any] = {}
    kind, target = "enact", None
    i += 1
    while i < len(lines):
        match = _KEY_LINE.match(lines[i].strip())
        key = fold(match.group(1)) if match else ""
        key = _CHANGE_ALIASES.get(key, key)
        value = match.group(2) if match else ""
        if key in AMEND_KEYS or key in REPEAL_KEYS:
            kind, target = ("amend" if key in AMEND_KEYS else "repeal"), _value(value)
        elif key == "code" and value.strip().endswith(".star"):
            pass  # the attachment named: taken below
        elif key == "changes":
            args["changes"] = _value(value)
        elif key in _CHANGE_KEYS:
            change[key] = _value(value)
        elif (keyed := grammar.key(propose, lines[i])) is not None and keyed[0] in params:
            args[keyed[0]] = _value(keyed[1])
        else:
            break
        i += 1
    told = boundaries.body(lines, i, lambda j: grammar.strong(lines[j]),
                           lambda j: grammar.weak(lines[j]), author)
    text = "\n".join(told.text).strip()
    code = "\n".join(told.code) + "\n" if told.code else None
    if code is None and stars:
        code = stars.pop(0)  # the letter's .star attachments, in name order
    if "changes" not in args:
        if kind == "repeal":
            args["changes"] = [{"repeal": {"rule": str(target)}}]
        else:
            body: dict[str, Any] = {**change}
            if kind == "amend":
                body["rule"] = str(target)
            if title:
                body["title"] = title
            if text:
                body["text"] = text
            if code:
                body["code"] = code
            args["changes"] = [{kind: body}]
    if title and "title" in params and "title" not in args:
        args["title"] = title
    return Command(number, first, propose, args), told.end

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

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from scriba.mail import boundaries, courts
from scriba.mail.vocabulary import AMEND_KEYS, REPEAL_KEYS, Head, Vocabulary, fold, tokens

_CHANGE_KEYS = {"class", "rule", "number", "kind"}
_CHANGE_ALIASES = {"klasse": "class", "classe": "class"}  # "Klasse: R"
_MAX_VALUE = 20000
_KEY_LINE = re.compile(r"^([^\W\d][\w' .-]{0,40}?)\s*:\s*(.*)$")
_INLINE_PAIR = re.compile(r"([^\W\d][\w-]{0,40})=(\"[^\"]*\"|'[^']*'|\S+)")
_REF = re.compile(r"#?[A-Za-z]{0,3}\d{1,9}")


@dataclass
class Command:
    line: int
    text: str
    action: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Unclear:
    """A line not understood: ``why`` is ``choice`` (a vote word the game does not use),
    ``values`` (more values than the action takes), ``vote`` (no proposal or no vote
    word) or ``line``; ``action`` the action it comes closest to, if any."""

    line: int
    text: str
    why: str = "line"
    action: str | None = None


@dataclass
class Preference:
    line: int
    text: str
    mode: str


Item = Command | Unclear | Preference


def _attr(info: Any, name: str, default: Any = None) -> Any:
    if isinstance(info, dict):
        return info.get(name, default)
    return getattr(info, name, default)


def _value(text: str) -> Any:
    """A parameter's value: numbers, booleans and lists as YAML reads them, else text."""
    text = text.strip()[:_MAX_VALUE]
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if re.fullmatch(r"-?\d{1,12}", text):
        return int(text)
    if text[:1] in "[{":
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return text
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


class Grammar(Vocabulary):
    """The words of one game's actions, for reading its letters."""

    def vote_action(self, name: str) -> Any | None:
        if name in self.actions and _attr(self.actions[name], "kind") == "vote":
            return self.actions[name]
        plain = [a for a in self.actions.values() if _attr(a, "kind") == "vote"
                 and "votes" not in (_attr(a, "params") or {})]
        named = [a for a in plain if _attr(a, "name") == "vote"]
        return (named or plain or [None])[0]

    def params(self, action: str) -> list[str]:
        info = self.actions.get(action)
        return list((_attr(info, "params") or {}).keys()) if info is not None else []

    def required(self, action: str) -> list[str]:
        info = self.actions.get(action)
        return [name for name, kind in (_attr(info, "params") or {}).items()
                if not str(kind).endswith("?")] if info is not None else []

    def list_param(self, action: str) -> str | None:
        """The one list parameter of an action that takes only that (``vote_letter``'s
        ``votes``): vote lines under the action's name fill it."""
        info = self.actions.get(action)
        params = dict(_attr(info, "params") or {}) if info is not None else {}
        if len(params) == 1 and str(next(iter(params.values()))).rstrip("?") == "list":
            return next(iter(params))
        return None

    def key(self, action: str, line: str) -> tuple[str, str] | None:
        """A ``key: value`` line for ``action``: the parameter by its name or label."""
        match = _KEY_LINE.match(line.strip())
        if match:
            said = tokens(match.group(1))
            found = self.param(action, said)
            if found is not None and found[1] == len(said):
                return found[0], match.group(2)
            return None
        words = line.split()  # "Brief 2": a label and a number, without the colon
        if len(words) >= 2 and re.fullmatch(r"\d{1,9}", words[-1]):
            said = tokens(" ".join(words[:-1]))
            found = self.param(action, said)
            if found is not None and found[1] == len(said):
                return found[0], words[-1]
        return None

    def strong(self, line: str) -> bool:
        """A line that is a command wherever it stands, even right under a proposal's
        text: a proposal or an action named with a colon ("Presse: …"), a whole vote,
        an action by its name with values ("nomic_number 5")."""
        head = self.head(line)
        if head is None or head.kind == "mode":
            return False
        if head.kind == "vote":
            return all(isinstance(x, Command) for x in _vote(0, line, head, self))
        if head.colon or "=" in head.rest:
            return True
        return head.kind == "action" and line.split()[0] == head.name

    def weak(self, line: str) -> bool:
        """A line that is a command when a blank line comes before it."""
        head = self.head(line)
        return head is not None and (head.kind != "mode" or not head.rest)


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


def _vote(number: int, line: str, head: Head, grammar: Grammar) -> list[Item]:
    """The votes of a line, their words in any order: proposals (a number or label) and
    vote words ("vota 1 favorevole, 2 contrario", "Ja für 3 und 4"), ``key=value`` pairs
    for all of them; other small words ("per", "für", "la proposta") pass."""
    action = grammar.vote_action(head.name)
    name = str(_attr(action, "name")) if action is not None else "vote"
    marks: list[tuple[str, str]] = []  # ("ref" | "choice", value), in the line's order
    stray = None
    for word in _INLINE_PAIR.sub(" ", head.rest).split():
        word = word.strip(".,;:!?()«»\"“”")
        if not word:
            continue
        if _REF.fullmatch(word):
            marks.append(("ref", word.lstrip("#")))
            continue
        found = grammar.choice(action, word)
        if found is not None:
            marks.append(("choice", found))
        elif stray is None and fold(word) not in _FILLER:
            stray = word
    pairs = _pairs(marks)
    if not pairs:
        has_ref = any(kind == "ref" for kind, _ in marks)
        return [Unclear(number, line, "choice" if has_ref and stray else "vote", name)]
    extra = {}
    for key, value in _INLINE_PAIR.findall(head.rest):
        found_key = grammar.param(name, tokens(key))
        extra[found_key[0] if found_key else key] = _value(value)
    return [Command(number, line, name, {"proposal": _value(ref), "choice": choice, **extra})
            for ref, choice in pairs]


def _pairs(marks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Proposals with their vote words: a word before any proposal goes with those after
    it ("favorevole 1 e 2"); else with those before it ("1 e 2 favorevole, 3 contrario").
    A proposal left without a word is not voted on ("… perché la regola 3 …")."""
    pairs: list[tuple[str, str]] = []
    waiting: list[str] = []
    choice_first = bool(marks) and marks[0][0] == "choice"
    current: str | None = None
    for kind, value in marks:
        if kind == "choice" and choice_first:
            current = value
        elif kind == "choice":
            pairs += [(ref, value) for ref in waiting]
            waiting = []
        elif choice_first and current is not None:
            pairs.append((value, current))
        else:
            waiting.append(value)
    return list(dict.fromkeys(pairs))


# Small words a vote line may hold around its proposal and vote word.
_FILLER = {"su", "sulla", "alla", "la", "per", "proposta", "proposal", "on", "to", "with",
           "mit", "fur", "zu", "zum", "uber", "antrag", "vorschlag", "den", "dem", "the",
           "il", "mio", "voto", "ist", "e", "is", "di", "del", "della", "n", "nr", "no."}


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

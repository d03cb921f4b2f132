"""The words of one game's actions, for reading its letters (:class:`Grammar`), and a vote
written on one line (``vota 12 favorevole``, ``favorevole 1 e 2, 3 contrario``)."""

from __future__ import annotations

import re
from typing import Any

from scriba.mail.items import _INLINE_PAIR, _KEY_LINE, _REF, Command, Item, Unclear, _attr, _value
from scriba.mail.vocabulary import Head, Vocabulary, fold, tokens


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

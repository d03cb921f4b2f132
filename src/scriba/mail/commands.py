"""The commands in a letter's text, read against the actions the rules declare.

Three forms, several per letter, in order:

- a vote on one line: ``vote 12 for`` / ``vota 12 favorevole`` / ``Stimme 12 Ja``, more
  parameters after it as ``key=value`` (``rating=8``); the vote words are the ruleset's
  (``choices`` of the vote action) or the English for/against/abstain;
- a proposal as a block: ``propose: TITLE`` (``proposta:``, ``Vorschlag:``), then
  ``key: value`` lines for the action's parameters or the change (``label: p1``,
  ``class: R``, ``amend: 305``, ``repeal: 305``), then the rule's text, and its code in a
  fenced ``` block or a ``.star`` attachment;
- any action the rules declare: its name, positional values for its parameters in order
  (``veto p2``, ``nomic_number 17``) or ``key=value`` on the line, or ``key: value`` lines
  below it.

Lines that are none of these come back as :class:`Unclear` with what was expected.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

VOTE_VERBS = {"vote", "votes", "vota", "voto", "voti", "votare", "stimme", "stimmen",
              "abstimmen", "abstimmung"}
PROPOSE_VERBS = {"propose", "proposal", "proposta", "propongo", "proporre", "vorschlag",
                 "antrag", "vorschlagen", "regelvorschlag"}
MODE_WORDS = {"unsubscribe": "none", "disiscrivi": "none", "abbestellen": "none",
              "digest": "digest", "each": "each"}
CANONICAL = {"for": "for", "yes": "for", "against": "against", "no": "against",
             "abstain": "abstain"}
_CHANGE_KEYS = {"class", "rule", "number", "kind"}
_MAX_VALUE = 20000
_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]{0,40})\s*:\s*(.*)$")
_INLINE_PAIR = re.compile(r"([A-Za-z_][\w-]{0,40})=(\"[^\"]*\"|'[^']*'|\S+)")


@dataclass
class Command:
    line: int
    text: str
    action: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Unclear:
    line: int
    text: str
    expected: str


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


class Grammar:
    """The words of one game's actions, for reading its letters."""

    def __init__(self, actions: list[Any]) -> None:
        self.actions = {str(_attr(a, "name")): a for a in actions}
        self.vote_actions = [a for a in actions if _attr(a, "kind") == "vote"]
        self.propose = next((str(_attr(a, "name")) for a in actions
                             if _attr(a, "kind") == "propose"), "propose")

    def vote_action(self, verb: str) -> Any | None:
        if verb in self.actions and _attr(self.actions[verb], "kind") == "vote":
            return self.actions[verb]
        plain = [a for a in self.vote_actions if "votes" not in (_attr(a, "params") or {})]
        named = [a for a in plain if _attr(a, "name") == "vote"]
        return (named or plain or [None])[0]

    def choice(self, action: Any | None, word: str) -> str | None:
        choices = dict(_attr(action, "choices") or {}) if action is not None else {}
        folded = word.casefold()
        for name in choices:
            if str(name).casefold() == folded:
                return str(name)
        canonical = CANONICAL.get(folded)
        if canonical is not None:
            for name, meaning in choices.items():
                if meaning == canonical:
                    return str(name)
            if not choices:
                return word
        return None if choices else word

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

    def looks_like_command(self, line: str) -> bool:
        """Whether a line not understood was meant as a command (its first word is, or is
        close to, a command word; or it sets ``key=value``) rather than prose ("Cari
        amici,", "Un saluto, Carla"), which is passed over without a word."""
        words = line.split()
        if not words or "=" in line:
            return bool(words)
        head = _action_name(words[0])
        known = VOTE_VERBS | PROPOSE_VERBS | set(MODE_WORDS) | set(self.actions)
        if head in known:
            return True
        return len(head) > 3 and bool(difflib.get_close_matches(head, known, n=1, cutoff=0.8))

    def expected(self) -> str:
        names = ", ".join(sorted(self.actions)) or "-"
        return f"vote <proposal> <choice> | propose: <title> | one of: {names}"


def _action_name(word: str) -> str:
    return word.strip().rstrip(":").replace("-", "_").casefold()


def parse(text: str, actions: list[Any], attachments: dict[str, str] | None = None,
          ) -> list[Item]:
    grammar = Grammar(actions)
    lines = text.split("\n")
    items: list[Item] = []
    stars = [code for name, code in sorted((attachments or {}).items())]
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        if not line:
            i += 1
            continue
        words = line.split()
        head = _action_name(words[0])
        if head == "as" and len(words) == 2 and not items:  # an officer's "as NAME"
            i += 1
            continue
        if head in PROPOSE_VERBS or (head == grammar.propose and head not in VOTE_VERBS):
            command, i = _proposal(lines, i, grammar, stars)
            items.append(command)
            continue
        if head in MODE_WORDS and len(words) == 1:
            items.append(Preference(i + 1, line, MODE_WORDS[head]))
            i += 1
            continue
        if head in VOTE_VERBS or (head in grammar.actions and
                                  _attr(grammar.actions[head], "kind") == "vote"
                                  and "votes" not in grammar.params(head)):
            items.append(_vote(i + 1, line, words, head, grammar))
            i += 1
            continue
        if len(words) == 1 and grammar.list_param(head):
            command, i = _vote_list(lines, i, head, grammar)
            items.append(command)
            continue
        if head in grammar.actions or (len(words) > 1 and "=" in line
                                       and re.fullmatch(r"[a-z_]\w*", head)):
            command, i = _action(lines, i, head, grammar)
            items.append(command)
            continue
        items.append(Unclear(i + 1, line, grammar.expected()))
        i += 1
    return items


def _vote(number: int, line: str, words: list[str], head: str, grammar: Grammar) -> Item:
    action = grammar.vote_action(head)
    name = str(_attr(action, "name")) if action is not None else (
        head if head not in VOTE_VERBS else "vote")
    rest = [w for w in words[1:] if "=" not in w]
    pairs = dict(_INLINE_PAIR.findall(line))
    words_expected = ", ".join(str(c) for c in (_attr(action, "choices") or {})) or \
        "for, against, abstain"
    if len(rest) < 2:
        return Unclear(number, line, f"vote <proposal> <choice> ({words_expected})")
    ref = rest[0].lstrip("#").rstrip(":,")
    choice = grammar.choice(action, rest[1].rstrip(".,;"))
    if choice is None:
        return Unclear(number, line, f"vote {ref} <{words_expected}>")
    args: dict[str, Any] = {"proposal": _value(ref), "choice": choice}
    args.update({k: _value(v) for k, v in pairs.items()})
    return Command(number, line, name, args)


def _vote_list(lines: list[str], i: int, head: str, grammar: Grammar) -> tuple[Item, int]:
    """``vote_letter`` then one vote per line: the votes go together in one command."""
    number, first = i + 1, lines[i].strip()
    ballots: list[dict[str, Any]] = []
    i += 1
    while i < len(lines) and lines[i].strip():
        words = lines[i].strip().split()
        verb = _action_name(words[0])
        if verb not in VOTE_VERBS:
            break
        vote = _vote(i + 1, lines[i].strip(), words, verb, grammar)
        if isinstance(vote, Unclear):
            return vote, i + 1
        ballots.append(vote.args)
        i += 1
    param = grammar.list_param(head) or "votes"
    if not ballots:
        return Unclear(number, first, f"{head}, then one line per vote: vote <proposal> "
                       "<choice>"), i
    return Command(number, first, head, {param: ballots}), i


def _action(lines: list[str], i: int, head: str, grammar: Grammar) -> tuple[Item, int]:
    line = lines[i].strip()
    number = i + 1
    args: dict[str, Any] = {}
    rest = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
    pairs = _INLINE_PAIR.findall(rest)
    if pairs:
        args.update({k: _value(v) for k, v in pairs})
    elif rest.strip():
        match = _KEY_LINE.match(rest.strip())
        if match and match.group(1) in grammar.params(head):
            args[match.group(1)] = _value(match.group(2))
        else:
            slots = grammar.required(head) or grammar.params(head)
            values = rest.split() if len(slots) > 1 else [rest.strip()]
            if len(values) > len(slots):
                expected = " ".join(f"<{s}>" for s in slots) or "no values"
                return Unclear(number, line, f"{head} {expected}"), i + 1
            args.update({slot: _value(v) for slot, v in zip(slots, values, strict=False)})
    i += 1
    known = set(grammar.params(head))
    while i < len(lines):
        match = _KEY_LINE.match(lines[i].strip())
        if not match or (known and match.group(1) not in known):
            break
        args[match.group(1)] = _value(match.group(2))
        i += 1
    return Command(number, line, head, args), i


def _proposal(lines: list[str], i: int, grammar: Grammar,
              stars: list[str]) -> tuple[Item, int]:
    first = lines[i].strip()
    number = i + 1
    title = first.split(None, 1)[1].strip() if len(first.split(None, 1)) > 1 else ""
    title = title.lstrip(":").strip()
    params = set(grammar.params(grammar.propose)) or {"label", "title", "letter"}
    args: dict[str, Any] = {}
    change: dict[str, Any] = {}
    kind, target = "enact", None
    i += 1
    while i < len(lines):
        match = _KEY_LINE.match(lines[i].strip())
        if not match:
            break
        key, value = match.group(1), match.group(2)
        if key in ("amend", "repeal"):
            kind, target = key, _value(value)
        elif key == "code" and value.strip().endswith(".star"):
            change["_code_file"] = value.strip()
        elif key in params and key != "changes":
            args[key] = _value(value)
        elif key == "changes":
            args["changes"] = _value(value)
        elif key in _CHANGE_KEYS:
            change[key] = _value(value)
        else:
            break
        i += 1
    text_lines: list[str] = []
    code_lines: list[str] | None = None
    fenced = False
    while i < len(lines):
        line = lines[i]
        bare = line.strip()
        if bare.startswith("```"):
            if fenced:
                fenced = False
            else:
                fenced, code_lines = True, []
            i += 1
            continue
        if fenced:
            assert code_lines is not None
            code_lines.append(line)
            i += 1
            continue
        if not bare and _starts_command(lines, i + 1, grammar):
            break
        text_lines.append(line.rstrip())
        i += 1
    text = "\n".join(text_lines).strip()
    code = "\n".join(code_lines) + "\n" if code_lines else None
    change.pop("_code_file", None)
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
    return Command(number, first, grammar.propose, args), i


def _starts_command(lines: list[str], i: int, grammar: Grammar) -> bool:
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return True
    head = _action_name(lines[i].split()[0])
    return head in VOTE_VERBS or head in PROPOSE_VERBS or head in grammar.actions \
        or head in MODE_WORDS

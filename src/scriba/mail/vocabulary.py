"""The words a letter's commands are written in: a game's actions by their declared labels
(``[labels.actions]`` in every language the ruleset gives), by their names and in English,
and the verbs players write for voting and proposing in Italian, German and English.

Everything is compared folded: case, accents and punctuation aside ("Cedi Nomica",
"cedi nomica:", "CEDI NOMICA" are one), so that "Abstimmung" and "abstimmung" or "Grüße"
and "grusse" meet.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any

# Verbs and nouns opening a vote line, folded ("ich stimme", "io voto", "meine stimme").
VOTE_WORDS = ("vote", "votes", "voting", "i vote", "my vote", "vota", "voto", "voti",
              "votare", "votiamo", "io voto", "il mio voto", "stimme", "stimmen",
              "ich stimme", "meine stimme", "abstimmen", "abstimmung", "abst", "vot")
# Words opening a proposal block ("proposta: Cortesia", "Antrag:", "Ich schlage vor:").
PROPOSE_WORDS = ("propose", "proposal", "i propose", "new proposal", "proposta", "propongo",
                 "proporre", "nuova proposta", "prop", "vorschlag", "antrag", "vorschlagen",
                 "regelvorschlag", "neuer antrag", "ich schlage vor", "ich beantrage",
                 "vorschl")
# Words opening a case, before a colon ("CFJ: is a hat a rule?", "giudizio: …", "Klage:
# …"): the ruleset's one action of kind "case", whatever it calls it.
CASE_WORDS = ("cfj", "call for judgment", "case", "caso", "giudizio", "richiesta di giudizio",
              "klage", "fall", "anfrage")
MODE_WORDS = {"unsubscribe": "none", "disiscrivi": "none", "abbestellen": "none",
              "digest": "digest", "each": "each"}
# English vote words every game understands, by meaning.
CANONICAL = {"for": "for", "yes": "for", "against": "against", "no": "against",
             "abstain": "abstain"}
# A proposal's change named in a key line, in the three languages.
AMEND_KEYS = ("amend", "emenda", "emendamento", "modifica", "andere", "anderung")
REPEAL_KEYS = ("repeal", "abroga", "abrogazione", "aufheben", "streiche", "streichung")

_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=8192)
def fold(text: str) -> str:
    """Lower case, without accents ("Grüße" → "grusse", "Sì" → "si")."""
    plain = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in plain if not unicodedata.combining(c))


@lru_cache(maxsize=8192)
def _folded_word(word: str) -> str:
    return "".join(_WORD.findall(fold(word)))


def words_at(text: str, limit: int = 1000) -> list[tuple[str, int]]:
    """The first ``limit`` folded words of ``text`` (as NFC), with where each ends in it
    (a long line costs no more than its first words)."""
    return [(_folded_word(m.group(0)), m.end())
            for m in islice(_WORD.finditer(text), limit)]


def tokens(text: str, limit: int = 1000) -> list[str]:
    """The folded words of ``text`` ("give_nomica:" → ["give", "nomica"])."""
    return [word for word, _ in words_at(unicodedata.normalize("NFC", text), limit)]


def _attr(info: Any, name: str, default: Any = None) -> Any:
    if isinstance(info, dict):
        return info.get(name, default)
    return getattr(info, name, default)


def _kind(action: Any) -> str:
    """How a line naming ``action`` is read: a vote, a proposal block, or an action."""
    kind = _attr(action, "kind")
    if kind == "vote" and "votes" not in (_attr(action, "params") or {}):
        return "vote"
    return "propose" if kind == "propose" else "action"


@dataclass
class Head:
    """What a line starts with: the ``kind`` of command (vote, propose, action, mode), the
    action's name for an action, and the rest of the line after the words matched."""

    kind: str
    name: str
    rest: str
    colon: bool  # the words were followed by ":" ("Presse: …", "proposta: …")


class Vocabulary:
    """One game's command words, for reading its letters in ``language``."""

    def __init__(self, actions: list[Any], labels: dict[str, Any] | None = None,
                 language: str = "en") -> None:
        self.language = language
        self.labels = labels or {}
        self.actions = {str(_attr(a, "name")): a for a in actions}
        self.propose = next((name for name, a in self.actions.items()
                             if _attr(a, "kind") == "propose"), "propose")
        phrases: dict[tuple[str, ...], tuple[str, str]] = {}
        for word in VOTE_WORDS:
            phrases[tuple(word.split())] = ("vote", "vote")
        for word in PROPOSE_WORDS:
            phrases[tuple(word.split())] = ("propose", self.propose)
        firsts: dict[str, set[str]] = {}
        for name, action in self.actions.items():
            kind = _kind(action)
            for text in self._texts(name, "label"):
                words = tuple(tokens(text))
                if words:
                    phrases.setdefault(words, (kind, name))
                    firsts.setdefault(words[0], set()).add(name)
            phrases[tuple(tokens(name))] = (kind, name)
        # The words for a case, where the ruleset's own do not use them; taken only before
        # a colon ("Fall" and "case" open sentences too).
        cases = [name for name, a in self.actions.items() if _attr(a, "kind") == "case"]
        self.case_words = {tuple(w.split()) for w in CASE_WORDS
                           if len(cases) == 1 and tuple(w.split()) not in phrases}
        for words in self.case_words:
            phrases[words] = ("action", cases[0])
        # A label's first word alone ("Deposita 500") when it names one action only;
        # taken only before a number, a colon or key=value: "Einen schönen Tag!" is not
        # "Einen Fall entscheiden".
        self.shortcuts: set[tuple[str, ...]] = set()
        for word, names in firsts.items():
            if len(names) == 1 and len(word) > 3 and (word,) not in phrases:
                name = next(iter(names))
                phrases[(word,)] = (_kind(self.actions[name]), name)
                self.shortcuts.add((word,))
        self.phrases = phrases
        self.longest = max((len(p) for p in phrases), default=1)
        self.firsts = {p[0] for p in phrases}  # most lines are prose: one look decides
        self._params_said: dict[str, list[tuple[str, list[str]]]] = {}

    def _texts(self, action: str, key: str, param: str | None = None) -> list[str]:
        """An action's (or its parameter's) label in every language given."""
        told = self.labels.get(action) or {}
        if param is not None:
            told = (told.get("params") or {}).get(param) or {}
        texts = told.get(key) or {}
        return [str(t) for t in texts.values()] if isinstance(texts, dict) else [str(texts)]

    def label(self, action: str) -> str:
        """An action as the reader's language calls it, else as the ruleset does, else
        its name in words ("give_nomica" is never shown: "give nomica" at worst)."""
        texts = (self.labels.get(action) or {}).get("label") or {}
        for lang in (self.language, "", "en"):
            if isinstance(texts, dict) and texts.get(lang):
                return str(texts[lang])
        if isinstance(texts, dict) and texts:
            return str(next(iter(texts.values())))
        return action.replace("_", " ")

    def param_label(self, action: str, param: str) -> str:
        """A parameter as the reader's language calls it, else its name in words."""
        told = ((self.labels.get(action) or {}).get("params") or {}).get(param) or {}
        texts = told.get("label") or {}
        for lang in (self.language, "", "en"):
            if isinstance(texts, dict) and texts.get(lang):
                return str(texts[lang])
        return param.replace("_", " ")

    def head(self, line: str) -> Head | None:
        """The command words ``line`` starts with (the longest match), if any."""
        line = unicodedata.normalize("NFC", line)
        first = _WORD.search(line)
        if first is None or _folded_word(first.group(0)) not in self.firsts:
            bare = line.strip()
            mode = MODE_WORDS.get(fold(bare)) if len(bare) < 20 else None
            return Head("mode", mode, "", False) if mode else None
        spans = words_at(line, self.longest)
        for size in range(min(self.longest, len(spans)), 0, -1):
            key = tuple(word for word, _ in spans[:size])
            found = self.phrases.get(key)
            if found is None:
                continue
            after = line[spans[size - 1][1]:]
            if after[:1] and (after[0].isalnum() or after[0] in "_'’"):
                continue  # inside a longer word
            stripped = after.lstrip()
            colon = stripped.startswith(":")
            rest = stripped[1:].strip() if colon else stripped.strip()
            if key in self.shortcuts and not (colon or rest[:1].isdigit() or "=" in rest):
                continue
            if key in self.case_words and not colon:
                continue
            return Head(found[0], found[1], rest, colon)
        bare = line.strip()
        mode = MODE_WORDS.get(fold(bare)) if len(bare) < 20 else None
        return Head("mode", mode, "", False) if mode else None

    def param(self, action: str, words: list[str]) -> tuple[str, int] | None:
        """The parameter ``words`` (folded) start with, by its name or a label: (its name,
        how many words it took)."""
        best: tuple[str, int] | None = None
        for name, said in self._param_words(action):
            if words[:len(said)] == said and (best is None or len(said) > best[1]):
                best = (name, len(said))
        return best

    def _param_words(self, action: str) -> list[tuple[str, list[str]]]:
        """Each parameter's name and labels as folded words, worked out once."""
        known = self._params_said.get(action)
        if known is None:
            info = self.actions.get(action)
            names = list((_attr(info, "params") or {}).keys()) if info is not None else []
            known = [(name, said) for name in names
                     for text in [name, *self._texts(action, "label", name)]
                     if (said := tokens(text))]
            self._params_said[action] = known
        return known

    def choices(self, action: Any | None) -> dict[str, str]:
        return {str(k): str(v) for k, v in (_attr(action, "choices") or {}).items()} \
            if action is not None else {}

    def choice(self, action: Any | None, word: str) -> str | None:
        """The vote word a player wrote, as the game declares it: the word itself, its
        abbreviation ("fav." for "favorevole"), or its meaning in English ("for")."""
        choices = self.choices(action)
        folded = fold(word).rstrip(".")
        if not folded:
            return None
        for name in choices:
            if fold(name) == folded:
                return name
        canonical = CANONICAL.get(folded)
        if canonical is not None:
            for name, meaning in choices.items():
                if meaning == canonical:
                    return name
            return word if not choices else None
        if len(folded) >= 3:
            started = [n for n in choices if fold(n).startswith(folded)]
            if len({choices[n] for n in started}) == 1:
                return started[0]
        return None

    def game_choices(self, action: Any | None) -> list[str]:
        """The game's own vote words, one per meaning ("favorevole, contrario")."""
        shown: dict[str, str] = {}
        for name, meaning in self.choices(action).items():
            if fold(name) not in CANONICAL or fold(name) != meaning:
                shown.setdefault(meaning, name)
        return list(shown.values()) or list(self.choices(action)) or ["for", "against"]

    def nearest(self, line: str) -> str | None:
        """The action a line not understood comes closest to, by its label."""
        words = tokens(line)
        if not words:
            return None
        candidates: dict[str, str] = {}
        for phrase, (kind, name) in self.phrases.items():
            if kind != "propose" or name == self.propose:
                candidates[" ".join(phrase)] = name
        for size in range(min(self.longest, len(words)), 0, -1):
            said = " ".join(words[:size])
            close = difflib.get_close_matches(said, list(candidates), n=1, cutoff=0.8)
            if close:
                return candidates[close[0]]
        return None

    def looks_like_command(self, line: str) -> bool:
        """Whether a line not understood was meant as a command (it starts with command
        words or words close to them, or sets ``key=value``) rather than prose ("Cari
        amici,", "Un saluto, Carla"), which is passed over without a word."""
        words = tokens(line)
        if not words:
            return False
        if "=" in line or self.head(line) is not None:
            return True
        first = words[0]
        known = {p[0] for p in self.phrases if len(p) == 1 and len(p[0]) > 3}
        return len(first) > 3 and bool(difflib.get_close_matches(first, known, n=1,
                                                                 cutoff=0.8))

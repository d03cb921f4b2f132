"""Requests anyone may send by mail, player or not: the ruleset, one rule, the open
proposals, the standings, and (for someone who does not play yet) to join.

Consulted before the command parser: a line of a letter that is one request, whole
("regolamento", "Regel G.6", "classifica", "prova 12", "iscrivimi come Elena"), is
answered as text, and the parser never sees it. Each request is one entry of
:data:`REQUESTS`: its words in Italian, German and English (compared without case and
accents; a polite "please" or "send me" before them is allowed) and the function that
answers it. A player's letter's command named like a request stays a command
(:func:`split` is told the game's action words). The answers' sentences are English
here, Italian and German in ``mail.po``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scriba.mail.labtest import lab_reply
from scriba.mail.recipes import template_reply
from scriba.service import Service
from scriba.service.errors import ServiceError
from scriba.service.letters import LetterContext, mail_text
from scriba.service.proposaltext import proposal_in_full, quoted

Answer = Callable[[Service, str, str, str], str]  # (service, game, language, argument)
# An answer that needs the letter (who asked, where to mail a later answer): "test 12"
LetterAnswer = Callable[[Service, str, str, str, LetterContext], str]


@dataclass(frozen=True)
class Request:
    name: str
    words: tuple[str, ...]  # folded (see _fold); "NAME" where the argument goes
    answer: Answer | None = None  # None: the intake handles it (join)
    letter_answer: LetterAnswer | None = None  # instead of ``answer``: given the letter
    # Only with its argument: a lone "test" (a subject people write to try an address)
    # or "prova" is no request.
    needs_argument: bool = False


@dataclass(frozen=True)
class Asked:
    request: Request
    argument: str
    line: str


REQUESTS: dict[str, Request] = {}


def register(request: Request) -> Request:
    """Add a request (a later entry of the same name replaces the earlier one)."""
    REQUESTS[request.name] = request
    return request


_POLITE = ("please", "per favore", "per piacere", "bitte", "send me", "mandami", "inviami",
           "schick mir", "schicke mir", "sende mir", "vorrei", "i would like", "i'd like",
           "ich mochte", "ich hatte gern")
_TRIM = " \t.!?:;,"


def _fold(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return " ".join(plain.lower().replace("\u2019", "'").split()).strip(_TRIM)


def _match(line: str) -> tuple[Request, str] | None:
    folded = _fold(line).replace(",", " ").split()
    original = line.strip().strip(_TRIM).replace(",", " ").split()
    for polite in _POLITE:  # "per favore, mandami il regolamento"
        size = len(polite.split())
        if folded[:size] == polite.split():
            folded, original = folded[size:], original[size:]
    for request in REQUESTS.values():
        for words in request.words:
            head, named, _ = words.partition(" NAME")
            size = len(head.split())
            if folded == head.split() and not request.needs_argument:
                return request, ""
            if named and folded[:size] == head.split() and len(folded) > size:
                return request, " ".join(original[size:])
    return None


def split(text: str, taken: frozenset[str] | set[str] = frozenset(), stranger: bool = False,
          limit: int = 10) -> tuple[list[Asked], str]:
    """The requests among the letter's own lines (not quoted ones) and the letter without
    them. ``taken``: the game's action names and labels, folded: a line naming one is a
    command, not a request."""
    asked: list[Asked] = []
    rest: list[str] = []
    for line in text.split("\n"):
        found = None if line.lstrip().startswith(">") or len(line) > 200 else _match(line)
        if found is not None and (stranger or found[0].name != "join") \
                and len(asked) < limit and _fold(line).split(" ")[0] not in taken:
            asked.append(Asked(found[0], found[1][:100], line.strip()))
        else:
            rest.append(line)
    return asked, "\n".join(rest)


def answer(service: Service, game: str, language: str, asked: Asked,
           letter: LetterContext | None = None) -> str:
    try:
        if asked.request.letter_answer is not None and letter is not None:
            return asked.request.letter_answer(service, game, language, asked.argument,
                                               letter)
        if asked.request.answer is None:
            return ""
        return asked.request.answer(service, game, language, asked.argument)
    except ServiceError as error:
        return str(error)


def _say(english: str, language: str, **params: Any) -> str:
    return mail_text(english, language).format(**params)


# --- the answers --------------------------------------------------------------------
def _rule_text(rule: dict[str, Any], language: str) -> str:
    head = _say("Rule {rule}", language, rule=rule["id"])
    title = f" {quoted(rule['title'], language)}" if rule.get("title") else ""
    return f"{head}{title}\n\n{str(rule.get('text') or '').strip()}"


def _ruleset(service: Service, game: str, language: str, argument: str) -> str:
    rules = [r for r in service.reads.rules_at(game) if r["in_force"]]
    lines = [_say("The rules in force in the game {game} ({count}):", language, game=game,
                  count=len(rules))]
    return "\n\n".join(lines + [_rule_text(r, language) for r in rules])


def _rule(service: Service, game: str, language: str, argument: str) -> str:
    wanted = argument.strip().strip("«»\"'“”„").lower()
    for rule in service.reads.rules_at(game):
        if rule["in_force"] and rule["id"].lower() == wanted:
            return _rule_text(rule, language)
    return _say("There is no rule {id} in force in the game {game}.", language,
                id=argument[:40], game=game)


def _proposals(service: Service, game: str, language: str, argument: str) -> str:
    proposals = service.reads.proposals(game, status="open")
    if not proposals:
        return _say("No proposal is open in the game {game}.", language, game=game)
    words = service.reads.words(game, language)
    rules = {r["id"]: r for r in service.reads.rules_at(game) if r["in_force"]}
    blocks = [_say("The open proposals of the game {game} ({count}):", language, game=game,
                   count=len(proposals))]
    blocks += [proposal_in_full(p, rules, words)[0] for p in proposals]
    return "\n\n".join(blocks)


def _standings(service: Service, game: str, language: str, argument: str) -> str:
    status = service.reads.status(game, language)
    head = _say("The standings of the game {game}", language, game=game)
    head += f" ({status['period']})" if status.get("period") else ""
    lines = [head + ":"]
    scores = status.get("scores") or {}
    for player in status.get("players") or []:
        values = ", ".join(f"{label} {value}" for label, value in
                           (scores.get(player) or {}).items())
        lines.append(f"{player}: {values}" if values else player)
    if status.get("text"):
        lines += ["", str(status["text"])]
    return "\n".join(lines)


register(Request("ruleset", ("rules", "the rules", "ruleset", "regole", "le regole",
                             "regolamento", "il regolamento", "regeln", "die regeln",
                             "regelwerk", "das regelwerk"), _ruleset))
register(Request("rule", ("rule NAME", "regola NAME", "la regola NAME", "legge NAME",
                          "la legge NAME", "regel NAME", "die regel NAME", "gesetz NAME"),
                 _rule))
register(Request("proposals", ("proposals", "open proposals", "pending proposals",
                               "proposte", "le proposte", "proposte aperte",
                               "proposte in attesa", "vorschlage", "offene vorschlage",
                               "antrage", "offene antrage"), _proposals))
register(Request("standings", ("standings", "scores", "the standings", "classifica",
                               "la classifica", "punteggi", "i punteggi", "stand",
                               "punktestand", "spielstand", "wertung"), _standings))
# a recipe of the cookbook, filled in and ready to propose (mail/recipes.py)
register(Request("template", ("template", "templates", "template NAME", "recipes",
                              "recipe NAME", "modello", "modelli", "modello NAME", "ricette",
                              "ricetta NAME", "vorlage", "vorlagen", "vorlage NAME",
                              "rezepte", "rezept NAME"), template_reply))
# a proposal tested by the lab; its report follows by mail (mail/labtest.py)
# ("prova la proposta 12", "prüfe Vorschlag 12": the number is the last word)
register(Request("test", ("test NAME", "prova NAME", "teste NAME", "prufe NAME"),
                 letter_answer=lab_reply, needs_argument=True))
# to join: answered by the intake (service.joins); "NAME" is the player's name they ask for
register(Request("join", ("join", "join NAME", "join as NAME", "i want to join",
                          "i want to play", "let me join as NAME", "partecipare",
                          "vorrei partecipare", "voglio partecipare", "chiedo di partecipare",
                          "partecipo come NAME", "iscrivimi", "iscrivimi come NAME",
                          "gioco come NAME", "mitspielen", "ich will mitspielen",
                          "mitspielen als NAME", "teilnehmen", "teilnehmen als NAME",
                          "beitreten", "beitreten als NAME", "anmeldung")))

_AS = re.compile(r"^(?:as|come|als)\s+", re.IGNORECASE)


def join_name(asked: Asked) -> str:
    """The name asked for in a join request ("come Elena" → "Elena"), or ""."""
    return _AS.sub("", asked.argument).strip()

"""Letters of people who do not play (yet), and the requests of players' letters with no
command: the rules, one rule, the open proposals, the standings, to join
(:mod:`scriba.mail.requests`), answered in one reply in the game's language.

A stranger is answered at most ``SCRIBA_STRANGER_LIMITS`` times (and a game answers
strangers at most 200 times a day): past that their letters are kept, not answered. A
request to join must be signed by the sender's domain (DKIM): a forged From must not
make an account and a request in someone else's name; the sender is told so otherwise.
"""

from __future__ import annotations

from typing import Any

from scriba.mail.auth import verified_signature
from scriba.mail.letter import Letter
from scriba.mail.replies import say
from scriba.mail.requests import Asked, answer, join_name, split
from scriba.service.errors import ServiceError
from scriba.service.letters import LetterContext

Intake = Any  # scriba.mail.intake.Intake, which imports this module


def answer_requests(intake: Intake, context: LetterContext, game: str,
                    asked: list[Asked]) -> str:
    """The answers to a letter's requests other than joining, one after another."""
    return "\n\n".join(answer(intake.service, game, context.language, item, context)
                       for item in asked if item.request.name != "join")


def stranger(intake: Intake, letter_id: int, context: LetterContext,
             letter: Letter) -> str | None:
    """Answer a stranger's requests: how the letter ended (``decided``, or ``ignored``
    past the limit); None when it holds none (the intake answers "unknown sender")."""
    game = str(context.game_id)
    asked, rest = split(f"{letter.subject}\n{letter.text}", stranger=True)
    if not asked:
        return None
    service, finish = intake.service, intake.mailroom.finish
    try:
        service.accounts.limits.stranger(letter.sender, game)
    except ServiceError:  # too many: kept, not answered (no mail bomb through us)
        finish(letter_id, "ignored", "a stranger's requests: over the limit", game)
        return "ignored"
    parts = [text for text in [answer_requests(intake, context, game, asked)] if text]
    joining = next((item for item in asked if item.request.name == "join"), None)
    if joining is not None:
        parts.insert(0, _join(intake, letter_id, context, letter, joining, rest))
    else:
        finish(letter_id, "answered", ", ".join(a.line[:60] for a in asked)[:500], game)
    intake.outbox.reply(context, "requests", "\n\n".join(parts),
                        key=f"requests:{letter.message_id}")
    return "decided"


def _join(intake: Intake, letter_id: int, context: LetterContext, letter: Letter,
          joining: Asked, rest: str) -> str:
    game, language = str(context.game_id), context.language
    raw = intake.mailroom.envelope(letter_id)[0]
    if verified_signature(raw, letter.sender.rpartition("@")[2], intake.dnsfunc) is None:
        intake.mailroom.finish(letter_id, "refused", "a request to join, not signed", game)
        return say("join_unsigned", language, game=game)
    name = join_name(joining) or letter.sender_name.strip() \
        or letter.sender.partition("@")[0]
    prose = "\n".join(line for line in rest.split("\n") if not line.startswith(">")).strip()
    try:
        asked = intake.service.joins.ask(game, letter_id, letter.sender, name, prose,
                                         request_id=f"{letter.message_id}#join")
    except ServiceError as error:
        intake.mailroom.finish(letter_id, "refused", str(error)[:500], game)
        return say("join_refused", language, game=game, reason=str(error))
    if asked.way == "queued":
        return say("join_queued", language, game=game, player=asked.player)
    if asked.way == "refused":
        return say("join_refused", language, game=game, reason=asked.reason)
    told = intake.service.reads.describe_outcome(game, asked.outcome, language) \
        if asked.outcome is not None else ""
    return "\n".join(t for t in (say("join_rules", language, game=game, player=asked.player),
                                 told) if t)

"""``test 12`` by mail (``prova 12``, ``teste 12``, ``prüfe 12``): the lab tests a proposal
(:mod:`scriba.service.proposaltests`) as the proposal page's button does. The letter's
answer says the test has started and what it plays; the report follows by mail when it is
done (the service queues it in the outbox, threaded under the letter). A test of the game
as it stands already running or done is told at once instead. Only the game's players
may ask: testing runs rule code many times.

The sentences are English here, Italian and German in ``mail.po``; the report's are the
service's (``scriba.po``), in the reader's language with the game's words.
"""

from __future__ import annotations

from typing import Any

from scriba.service.errors import ServiceError, told
from scriba.service.letters import LetterContext, mail_text


def _t(english: str, language: str, **params: object) -> str:
    return mail_text(english, language).format(**params)


def lab_reply(service: Any, game_id: str, language: str, rest: str,
               letter: LetterContext) -> str:
    """The answer to ``test`` + ``rest`` (ending with the proposal's number)."""
    words = rest.split()
    number = words[-1].lstrip("#") if words else ""
    if not letter.player:
        return _t("Only the players of the game {game} may test a proposal.", language,
                  game=game_id)
    if not number.isdigit() or len(number) > 9:
        return _t("Write the number of the proposal to test, for example: test 12.",
                  language)
    tests = service.proposal_tests
    try:
        proposal = service.reads.proposal(game_id, int(number))
        name = service.reads.words(game_id, language).proposal(proposal["number"])
        seq = service.reads.load(game_id).seq
        known = tests.get(game_id, proposal["number"])
        if known is not None and known.at_seq == seq and known.status != "failed":
            head = _t("Proposal {proposal} was already tested from the game as it stands "
                      "now:", language, proposal=name)
            return "\n".join([head, *tests.told(known, language)])
        test = tests.start(game_id, proposal["number"], by=letter.player, notify=letter)
    except ServiceError as error:
        return told(error, language)
    if test.status != "running":  # finished at once (a small bound): told with its report
        return "\n".join([_t("Proposal {proposal} was tested:", language, proposal=name),
                          *tests.told(test, language)])
    return _t("The test of proposal {proposal} has started ({bound}). Its report will "
              "follow by mail.", language, proposal=name,
              bound=tests.bound(language).rstrip("."))

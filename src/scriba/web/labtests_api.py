"""Test this proposal in the JSON API (``/api/v1``, beside :mod:`scriba.web.api`): ``POST
…/games/{game}/proposals/{n}/test`` starts the lab on the proposal from the game's state
now (or answers the test of that state already asked for), ``GET`` the same reads the
newest test: its status, progress, the report as data and as sentences in the reader's
language (:mod:`scriba.service.proposaltests`). Testing runs rule code many times: for the
game's players and officer, as the dry run is; reading a test is public, as the game is.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse

from scriba.web import sessions
from scriba.web.api import AUTH_PROBLEMS, PROBLEMS, _caller, _language, require_seat

router = APIRouter(prefix="/api/v1", tags=["games"], responses=PROBLEMS)


def as_json(service: Any, test: Any, language: str | None) -> dict[str, Any]:
    """A test as the API answers it: the data, and in sentences."""
    return {"game": test.game, "proposal": test.proposal, "at_seq": test.at_seq,
            "status": test.status, "done_turns": test.done_turns,
            "total_turns": test.total_turns, "started": test.started,
            "finished": test.finished, "bounds": test.bounds, "report": test.report,
            "findings": test.differences,
            "sentences": service.proposal_tests.told(test, language)}


def _number(proposal: str) -> int:
    if not proposal.isdigit() or len(proposal) > 9:
        raise HTTPException(404, f"There is no proposal {proposal[:40]!s}.")
    return int(proposal)


@router.post("/games/{game}/proposals/{proposal}/test", status_code=202,
             summary="Test the proposal: bots play the game on from now with it and "
                     "without it (for the game's players and officer)",
             responses=AUTH_PROBLEMS)
def start_test(request: Request, game: str, proposal: str,
               lang: str | None = None) -> Any:
    require_seat(request, game)
    account, player = _caller(request, game, "Sign in first.")
    service = sessions.get_service(request)
    if player is None:  # a session: the player it sits as, or the officer
        player = service.seats.role(account.id, game).player or "officer"
    test = service.proposal_tests.start(game, _number(proposal), by=player)
    language = _language(request, lang)
    return JSONResponse(as_json(service, test, language), status_code=202)


@router.get("/games/{game}/proposals/{proposal}/test",
            summary="The proposal's newest test: status, progress, findings")
def read_test(request: Request, game: str, proposal: str, lang: str | None = None) -> Any:
    service = sessions.get_service(request)
    service.reads.status(game)  # an unknown game: its refusal
    test = service.proposal_tests.get(game, _number(proposal))
    if test is None:
        raise HTTPException(404, f"Proposal {proposal} of {game} has not been tested.")
    return as_json(service, test, _language(request, lang))

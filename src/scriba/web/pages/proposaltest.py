"""The "Test this proposal" button of a proposal's page: a player or the officer asks the
lab to play the game on from now with the proposal and without it
(:mod:`scriba.service.proposaltests`); the page then shows the progress, refreshing itself
(no JavaScript), and the findings in sentences beside the dry run."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from scriba.service import errors
from scriba.web import i18n
from scriba.web.pages import common
from scriba.web.pages.game import open_game

router = APIRouter()
REFRESH_S = 3  # a page showing a running test reloads itself this often


def lab_view(service: Any, game_id: str, proposal: dict[str, Any], seated: bool,
             language: str) -> dict[str, Any]:
    """What the page shows of the proposal's test: its sentences, the bound, whether the
    button is offered (to the game's players and officer while the proposal is open)."""
    test = service.proposal_tests.get(game_id, proposal["number"])
    return {"offered": seated and proposal.get("status") == "open"
            and (test is None or test.status != "running"),
            "status": test.status if test is not None else None,
            "sentences": service.proposal_tests.told(test, language) if test else [],
            "bound": service.proposal_tests.bound(language),
            "refresh": REFRESH_S if test is not None and test.status == "running" else None}


@router.post("/games/{game_id}/proposals/{ref}/test")
async def test_post(request: Request, game_id: str, ref: str) -> Response:
    form = await request.form()
    # From the thread pool: starting a test exports the game's record.
    return await run_in_threadpool(_start, request, game_id, ref, form)


def _start(request: Request, game_id: str, ref: str, form: Any) -> Response:
    back = common.game_path(game_id, "proposals", ref)
    try:
        service, _status, reader = open_game(request, game_id)
        _ = i18n.gettext_for(reader.language)
        if not reader.signed_in or not (reader.player or reader.officer):
            refusal = _("Only the game's players and its officer may test a proposal.")
            raise errors.NotAllowed(refusal)
        common.check_csrf(request, form)
        number = service.reads.proposal(game_id, ref)["number"]
        service.proposal_tests.start(game_id, number, by=reader.player or "officer")
    except errors.ServiceError as error:
        return common.error_page(request, common.reader_for(request), error)
    # No fragment (#h-lab): the page's refresh would then only scroll, never reload.
    return common.redirect_with_flash(back, _("The test has started."), True)

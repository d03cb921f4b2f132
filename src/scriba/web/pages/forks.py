"""The "Fork this game" button: a player or the officer makes a copy of the game, as it
stands or as it stood on a day, to try things on without touching the original
(:mod:`scriba.service.forks`). Whoever forks it becomes the fork's officer, so that they
can seat players in it and move its clock; the answer is the fork's officer page."""

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
_FIELD = 1000  # characters kept of a field: the service refuses what is still too long


@router.post("/games/{game_id}/fork")
async def fork_post(request: Request, game_id: str) -> Response:
    form = await request.form()
    # The service is called from the thread pool: forking writes a whole game.
    return await run_in_threadpool(_fork, request, game_id, form)


def _fork(request: Request, game_id: str, form: Any) -> Response:
    back = common.game_path(game_id)
    try:
        service, _status, reader = open_game(request, game_id)
        _ = i18n.gettext_for(reader.language)
        if not reader.signed_in or not (reader.player or reader.officer):
            raise errors.NotAllowed(_("Only the game's players and its officer may fork it."))
        common.check_csrf(request, form)
    except errors.ServiceError as error:
        return common.error_page(request, common.reader_for(request), error)
    name = str(form.get("name") or "").strip()[:_FIELD] or None
    at = str(form.get("at") or "").strip()[:_FIELD] or None
    try:
        state = service.forks.fork(game_id, at=at, name=name)
    except errors.ServiceError as error:
        return common.redirect_with_flash(back, str(error), False)
    service.seats.set_officer(state.game_id, reader.account.id)
    told = service.forks.told(state.game_id, reader.language) or ""
    return common.redirect_with_flash(common.game_path(state.game_id, "officer"), told, True)

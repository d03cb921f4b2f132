"""Starting a game from the browser: any signed-in account picks a bundled ruleset and
becomes the new game's officer (the Scriba, the Poeta, the GM), who then invites players.
An account starts at most ``SCRIBA_GAMES_PER_DAY`` games a day this way (default 10; see
:mod:`scriba.service.ratelimit`); the officer's CLI (``scriba new``) is not limited."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from scriba.service import errors
from scriba.service.ratelimit import RateLimited
from scriba.web import i18n
from scriba.web.pages import common

router = APIRouter()
NEW_GAME = "/new-game"


def _form(request: Request, reader: common.Reader, status_code: int = 200,
          error: str | None = None, values: dict[str, Any] | None = None) -> Response:
    service = common.service_of(request)
    return common.render(request, "start.html", reader, status_code=status_code,
                         rulesets=service.reads.rulesets(), error=error, values=values or {},
                         current="start")


@router.get(NEW_GAME, response_class=HTMLResponse)
def start_page(request: Request) -> Response:
    reader = common.reader_for(request)
    if not reader.signed_in:
        return RedirectResponse(common.Links()("/signin", next=NEW_GAME), status_code=303)
    return _form(request, reader)


@router.post(NEW_GAME)
async def start_game(request: Request) -> Response:
    form = await request.form()
    return await run_in_threadpool(_start, request, form)


def _start(request: Request, form: Any) -> Response:
    reader = common.reader_for(request)
    _ = i18n.gettext_for(reader.language)
    values = {key: str(form.get(key) or "").strip()
              for key in ("ruleset", "game", "name", "clock")}
    try:
        if not reader.signed_in:
            raise errors.NotAllowed(_("Sign in to start a game."))
        common.check_csrf(request, form)
        service = common.service_of(request)
        if values["ruleset"] not in {r["id"] for r in service.reads.rulesets()}:
            raise errors.InvalidInput(_("Choose one of the rulesets."), field="ruleset")
        service.accounts.limits.new_game(reader.account.id)  # counted before it is made
        state = service.commands.create_game(values["ruleset"], game_id=values["game"] or None,
                                             name=values["name"] or None,
                                             clock="simulated" if values["clock"] == "simulated"
                                             else "real")
        service.seats.set_officer(state.game_id, reader.account.id)
    except errors.NotAllowed as refused:
        return common.error_page(request, reader, refused)
    except RateLimited as refused:
        page = _form(request, reader, status_code=429, values=values,
                     error=common.rate_limit_sentence(refused, reader.language))
        page.headers["Retry-After"] = str(refused.retry_after)
        return page
    except errors.ServiceError as refused:  # a name taken, a bad id: the form again
        return _form(request, reader, status_code=common.page_status(refused),
                     error=errors.told(refused, reader.language), values=values)
    # Told in the language of the page it is shown on: the new game's officer page.
    shown_in = common.reader_for(request, state.game_id, state.language).language
    message = i18n.gettext_for(shown_in)(
        "The game %(game)s has started; you are its officer: invite the players.",
        game=state.game_id)
    return common.redirect_with_flash(common.game_path(state.game_id, "officer"), message,
                                      True)

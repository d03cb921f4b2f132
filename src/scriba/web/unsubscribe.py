"""One-click unsubscribe (RFC 8058): the link of a game mail's ``List-Unsubscribe``.

A POST to it (a mail client's "Unsubscribe" button, with no session and no CSRF token:
the link's token proves the seat, :mod:`scriba.service.personal`) stops the reader's mail;
a GET shows a page with one button that does the same, without JavaScript. Not behind
the pages' CSRF check: nothing here acts but on the seat the unguessable token names.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from scriba.service import errors
from scriba.service.personal import UNSUBSCRIBE_PATH
from scriba.web.pages import common

router = APIRouter()


def _seat(request: Request, game_id: str, token: str) -> tuple[Any, str] | None:
    """The seat (account, player) the token names, and the game's language; or None."""
    service = common.service_of(request)
    try:
        player = service.mailroom.player_for_unsubscribe(game_id, token[:64])
        if player is None:
            return None
        seat = next((s for s in service.seats.seats(game_id) if s.player == player), None)
        language = str(service.reads.status(game_id).get("language") or "en")
    except errors.ServiceError:
        return None
    return (seat, language) if seat is not None else None


def _page(request: Request, game_id: str, token: str, found: tuple[Any, str] | None,
          done: bool) -> HTMLResponse:
    language = found[1] if found else None
    reader = common.reader_for(request, game_language=language)
    seat = found[0] if found else None
    return common.render(request, "unsubscribe.html", reader,
                         status_code=200 if seat is not None else 404, game_id=game_id,
                         player=seat.player if seat else None, done=done,
                         action=f"{UNSUBSCRIBE_PATH}/{game_id}/{token}")


@router.get(UNSUBSCRIBE_PATH + "/{game_id}/{token}", response_class=HTMLResponse)
def confirm(request: Request, game_id: str, token: str) -> HTMLResponse:
    return _page(request, game_id, token, _seat(request, game_id, token), done=False)


@router.post(UNSUBSCRIBE_PATH + "/{game_id}/{token}", response_class=HTMLResponse)
def unsubscribe(request: Request, game_id: str, token: str) -> HTMLResponse:
    found = _seat(request, game_id, token)
    if found is not None:
        common.service_of(request).accounts.update_preferences(found[0].account_id,
                                                               mail_mode="none")
    return _page(request, game_id, token, found, done=found is not None)

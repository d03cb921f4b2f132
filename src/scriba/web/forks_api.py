"""Forks in the JSON API (``/api/v1``, beside :mod:`scriba.web.api`): ``POST
…/games/{game}/forks`` makes a new game with the game's history up to a point
(:mod:`scriba.service.forks`). The officer or a player of the game may fork it and becomes
the fork's officer; the fork has the same players in its record and no player's seat
(nobody plays in it until seated).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from scriba.web import sessions
from scriba.web.api import AUTH_PROBLEMS, PROBLEMS, _language, require_seat

router = APIRouter(prefix="/api/v1", tags=["forks"], responses=PROBLEMS)


class ForkIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    game: str = Field(max_length=200, description="The fork's id: a new game's.")
    at: str | None = Field(None, max_length=64, description="Copy every event until this "
                                                            "time (2026-03-04T10:00:00Z).")
    seq: int | None = Field(None, ge=0, le=2**31, description="Or: copy the events up to "
                                                              "this one.")
    name: str | None = Field(None, max_length=1000, description="The fork's name (default: "
                                                                "the game's, “(fork)”).")
    players: list[str] = Field(default_factory=list, max_length=100, description=(
        "Players of the fork's own, besides the copied ones."))


@router.post("/games/{game}/forks", status_code=201, summary="Fork the game (officer or "
             "player): a new game with its history up to a point", responses=AUTH_PROBLEMS)
def fork(request: Request, game: str, body: ForkIn, lang: str | None = None) -> Any:
    account = require_seat(request, game)
    service = sessions.get_service(request)
    state = service.forks.fork(game, new_id=body.game, at=body.at, seq=body.seq,
                               name=body.name, players=body.players)
    if account is not None:  # whoever forks runs the fork (seats, clock), as on the page
        service.seats.set_officer(state.game_id, account.id)
    address = f"{str(request.base_url).rstrip('/')}/games/{quote(state.game_id, safe='')}"
    return JSONResponse({"game": state.game_id, "url": address,
                         "api": f"{router.prefix}/games/{quote(state.game_id, safe='')}",
                         "origin": service.forks.origin(state.game_id),
                         "sentence": service.forks.told(state.game_id,
                                                        _language(request, lang))},
                        status_code=201, headers={"Location": address})

"""``/healthz`` and ``/metrics``, for the operator's monitor: neither names a player, a game
or a secret (an operator may still keep them to the local network at the proxy). The
checks and the figures live in the service (:mod:`scriba.service.health`,
:mod:`scriba.service.metrics`); :class:`CommandTiming` times the write requests."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from scriba.service import health
from scriba.service.metrics import CONTENT_TYPE

router = APIRouter()
# Where the commands come in: the API's and the pages' writes under a game (a vote, a
# proposal, a player admitted). Sign-in and accounts are not commands.
COMMAND_PATHS = ("/api/v1/games/", "/games/")


@router.get("/healthz", include_in_schema=False)
def healthz(request: Request) -> JSONResponse:
    """200 when the database answers, the rule workers can and the outbox is moving;
    503 with what is wrong otherwise."""
    found = health.check(request.app.state.service)
    return JSONResponse(found.as_dict(), status_code=200 if found.ok else 503,
                        headers={"cache-control": "no-store"})


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    return Response(request.app.state.service.metrics.exposition(),
                    media_type=CONTENT_TYPE, headers={"cache-control": "no-store"})


class CommandTiming:
    """ASGI middleware: the time of each command request (a POST under a game), from its
    arrival to the end of its answer, into the service's latency histogram. Timed here
    rather than in the service so that what a player waits for is counted: the wait in
    line for the game, the decision, the commit, the page or JSON built."""

    def __init__(self, app: Any, observe: Any) -> None:
        self.app = app
        self.observe = observe

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith(
                COMMAND_PATHS):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            self.observe(time.perf_counter() - started)

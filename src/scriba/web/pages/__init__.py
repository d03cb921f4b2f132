"""The server-rendered pages; ``install(app)`` mounts them and their static files."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from scriba.web.pages import chronicle, common, game, officer, proposals, rules

router = APIRouter(include_in_schema=False)
# Order matters: /rules/diff before /rules/{rule}.
for module in (game, rules, proposals, chronicle, officer):
    router.include_router(module.router)


def install(app: FastAPI) -> None:
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=str(common.STATIC)), name="static")

"""The docket of a game's cases, and one case: its question, what it concerns, its steps
told in sentences, its judgment and the judgments set aside, and the forms the rules offer
the reader now for it (judge, appeal, …), which come back to the case once sent."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from scriba.web.pages import common
from scriba.web.pages.game import action_forms, game_context, game_info, page

router = APIRouter()


@router.get("/games/{game_id}/cases", response_class=HTMLResponse)
def cases_page(request: Request, game_id: str) -> Response:
    """The docket: the cases waiting for a judgment first; the form to open one."""
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        docket = service.cases.docket(game_id, reader.language)
        forms = []
        if reader.player:
            opening = [a for a in service.reads.actions_for(game_id, reader.player)
                       if a.kind == "case"]
            if opening:
                ctx = game_context(service, game_id, status, reader)
                forms = action_forms(service, game_id, reader, ctx, opening, None)
        back = common.game_path(game_id, "cases")
        return common.render(request, "cases.html", reader, current="cases",
                             game=game_info(status), rule_lang=status.get("language"),
                             cases=docket, forms=forms, back=back, rules=[])
    return page(request, game_id, build)


@router.get("/games/{game_id}/cases/{number}", response_class=HTMLResponse)
def case_page(request: Request, game_id: str, number: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        case = service.cases.case(game_id, number, reader.language)
        forms = []
        if reader.player:
            offered = service.cases.actions(game_id, case["number"], reader.player)
            if offered:
                ctx = game_context(service, game_id, status, reader)
                forms = action_forms(service, game_id, reader, ctx, offered, None)
        back = common.game_path(game_id, "cases", str(case["number"]))
        return common.render(request, "case.html", reader, current="cases",
                             game=game_info(status), rule_lang=status.get("language"),
                             case=case, forms=forms, back=back, rules=[])
    return page(request, game_id, build)

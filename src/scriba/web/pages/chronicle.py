"""The chronicle (the log told as sentences), the per-period reports, and the Atom feed."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from scriba.web.pages import common
from scriba.web.pages.game import game_info, page

router = APIRouter()
FEED_ENTRIES = 50
KINDS = ("proposal_submitted", "vote_cast", "proposal_resolved", "rule_changed",
         "player_joined", "player_left", "timer_fired", "clock_advanced", "action_taken",
         "var_set", "office_set", "asset_set", "command_refused", "winner_declared",
         "game_ended", "rule_code_aborted", "notice")


def in_period(entry: dict[str, Any], period: dict[str, Any] | None) -> bool:
    if period is None:
        return True
    return entry["time"] >= period["start"] and (not period.get("end")
                                                 or entry["time"] <= period["end"])


def chronicle_context(service: Any, game_id: str, reader: common.Reader,
                      player: str | None = None, kind: str | None = None,
                      period: str | None = None) -> dict[str, Any]:
    reports = service.reads.period_reports(game_id, reader.language)
    chosen = None
    if period not in (None, ""):
        try:
            index = int(str(period))
            chosen = reports[index] if index >= 0 else None
        except (ValueError, IndexError):
            chosen = None
    entries = service.reads.chronicle(game_id, reader.language, player=player or None,
                                      kinds=[kind] if kind else None)
    entries = [e for e in entries if in_period(e, chosen)]
    return {"entries": entries, "reports": [chosen] if chosen else reports,
            "all_reports": reports, "filters": {"player": player or "", "kind": kind or "",
                                                "period": period or ""},
            "kinds": KINDS}


@router.get("/games/{game_id}/chronicle", response_class=HTMLResponse)
def chronicle_page(request: Request, game_id: str, player: str | None = None,
                   kind: str | None = None, period: str | None = None) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        ctx = chronicle_context(service, game_id, reader, player, kind, period)
        return common.render(request, "chronicle.html", reader, current="chronicle",
                             game=game_info(status), rule_lang=status.get("language"),
                             players=sorted(service.reads.summary(game_id)["players"]), **ctx)
    return page(request, game_id, build)


def feed_text(service: Any, game_id: str, status: dict[str, Any], reader: common.Reader,
              base: str, links: common.Links | None = None) -> str:
    """The chronicle as Atom 1.0 (RFC 4287): the newest sentences first."""
    entries = service.reads.chronicle(game_id, reader.language)[-FEED_ENTRIES:][::-1]
    updated = entries[0]["time"] if entries else status.get("time")
    ctx = common.context(reader, links, game=game_info(status), entries=entries,
                         updated=updated, base=base.rstrip("/"),
                         rule_lang=status.get("language"))
    return common.render_text("feed.atom", ctx)


@router.get("/games/{game_id}/feed.atom")
def feed(request: Request, game_id: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        body = feed_text(service, game_id, status, reader, str(request.base_url))
        return Response(body, media_type="application/atom+xml; charset=utf-8")
    return page(request, game_id, build)

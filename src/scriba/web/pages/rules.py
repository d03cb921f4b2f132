"""The ruleset now or as it stood, one rule with its history, the ruleset's changes."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from scriba.service import errors
from scriba.web import i18n
from scriba.web.pages import common
from scriba.web.pages.game import game_info, page

router = APIRouter()


def change_names(language: str) -> dict[str, str]:
    _ = i18n.gettext_for(language)
    return {"initial": _("initial rule"), "enact": _("enacted"), "enacted": _("enacted"),
            "amend": _("amended"), "amend_paragraph": _("paragraph amended"),
            "repeal": _("repealed"), "repealed": _("repealed"), "changed": _("changed"),
            "reenact": _("re-enacted"), "transmute": _("transmuted"),
            "renumber": _("renumbered"), "set_attribute": _("attribute set")}


def _seq(value: str | None, language: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(str(value))
    except ValueError:
        _ = i18n.gettext_for(language)
        raise errors.InvalidInput(_("An event number is a whole number from 1."),
                                  field="seq") from None


@router.get("/games/{game_id}/rules", response_class=HTMLResponse)
def rules_page(request: Request, game_id: str, at: str | None = None,
               seq: str | None = None) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        number = _seq(seq, reader.language)
        rules = service.reads.rules_at(game_id, at=at or None, seq=number)
        return common.render(request, "rules.html", reader, current="rules",
                             game=game_info(status), rule_lang=status.get("language"),
                             rules=[r for r in rules if r.get("in_force")],
                             at=at or None, seq=number)
    return page(request, game_id, build)


@router.get("/games/{game_id}/rules/diff", response_class=HTMLResponse)
def ruleset_diff_page(request: Request, game_id: str, since: str = "",
                      until: str | None = None) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        if not since:
            _ = i18n.gettext_for(reader.language)
            raise errors.InvalidInput(_("Give the date to compare from."), field="since")
        changes = service.reads.ruleset_diff(game_id, since, until or None)
        return common.render(request, "ruleset_diff.html", reader, current="rules",
                             game=game_info(status), rule_lang=status.get("language"),
                             changes=changes, since=since, until=until or None,
                             change_names=change_names(reader.language))
    return page(request, game_id, build)


@router.get("/games/{game_id}/rules/{rule_id}", response_class=HTMLResponse)
def rule_page(request: Request, game_id: str, rule_id: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        # An old number (the rule was renumbered since) leads to the rule it became:
        # links in the chronicle, in letters and in bookmarks keep working.
        moved = service.reads.renumbered(game_id, rule_id)
        if moved is not None:
            return RedirectResponse(common.game_path(game_id, "rules", moved), 303)
        history = service.reads.rule_history(game_id, rule_id)
        return common.render(request, "rule.html", reader, current="rules",
                             game=game_info(status), rule_lang=status.get("language"),
                             rule=history, revisions=history.get("revisions") or [],
                             change_names=change_names(reader.language))
    return page(request, game_id, build)

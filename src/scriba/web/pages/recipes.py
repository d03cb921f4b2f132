"""Start from a recipe: the recipes that fit a game, one recipe's blanks as a form, and the
game page's propose form filled with the rule they make and checked (its dry run shown, as
the check button shows it); the author edits, checks again and proposes it there.
Filling proposes nothing, so the blanks' form is a GET: it works without JavaScript, the
browser's Back returns to it, and its address can be shared.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import FormData

from scriba.service import errors
from scriba.web import i18n
from scriba.web.pages import common
from scriba.web.pages.game import checked_form, game_info, page, render_game
from scriba.web.pages.recipeforms import blank_fields, blank_values, fill_recipe, offered, prefilled

router = APIRouter()


@router.get("/games/{game_id}/recipes", response_class=HTMLResponse)
def recipes_page(request: Request, game_id: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        return common.render(request, "recipes.html", reader, current="game",
                             game=game_info(status), rule_lang=status.get("language"),
                             recipes=offered(service, game_id, reader.language),
                             recipe=None)
    return page(request, game_id, build)


@router.get("/games/{game_id}/recipes/{name}", response_class=HTMLResponse)
def recipe_page(request: Request, game_id: str, name: str, fill: str = "") -> Response:
    """The recipe's blanks; with ``fill``: the game page, its propose form filled with the
    rule (or, for a reader who cannot propose now, the rule shown here), or the blanks
    again with the refusal beside the one it names."""
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        fitting = {r.name for r in service.recipes.list(reader.language, game_id)}
        if name not in fitting:
            _ = i18n.gettext_for(reader.language)
            raise errors.NotFound(_("There is no recipe %(name)s for this game.",
                                    name=repr(name[:40])))
        recipe = service.recipes.get(name, reader.language, game_id)
        values = blank_values(request.query_params)
        refused: errors.InvalidInput | None = None
        filled = None
        if fill:
            try:
                filled = fill_recipe(service, name, values, reader.language,
                                     status.get("language") or "en", game_id)
            except errors.InvalidInput as error:
                refused = error
            else:
                propose = _propose_action(service, game_id, reader)
                if propose is not None:
                    # Checked as the check button does: the dry run of the filled rule
                    # is there before the author proposes it (or the refusal, placed).
                    form = FormData(prefilled(propose.name, filled).values)
                    return render_game(request, service, game_id, status, reader,
                                       kept=checked_form(service, game_id, str(reader.player),
                                                         propose.name, form, reader),
                                       started_from=_started_from(recipe, game_id, values))
        fields = blank_fields(recipe, values, reader.language,
                              status.get("language") or "en", refused)
        placed = refused is None or any(f.error for f in fields)
        return common.render(
            request, "recipes.html", reader, current="game", game=game_info(status),
            rule_lang=status.get("language"), recipe=recipe, fields=fields, filled=filled,
            error="" if placed else str(refused),
            status_code=400 if refused is not None else 200)
    return page(request, game_id, build)


def _propose_action(service: Any, game_id: str, reader: common.Reader) -> Any:
    if not reader.player:
        return None
    return next((a for a in service.reads.actions_for(game_id, reader.player)
                 if a.kind == "propose"), None)


def _started_from(recipe: Any, game_id: str, values: dict[str, str]) -> dict[str, str]:
    """The recipe the form was filled from, and the way back to its blanks as written."""
    back = common.Links()(common.game_path(game_id, "recipes", recipe.name),
                          **{f"b_{k}": v for k, v in values.items()})
    return {"title": recipe.title, "href": back}

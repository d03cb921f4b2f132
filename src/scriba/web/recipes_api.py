"""The recipes in the JSON API (``/api/v1``, beside :mod:`scriba.web.api`): the recipes that
fit a game, and one filled in with values — the rule's title, text and code, and the
change to send as a proposal's ``changes``. Public, as reading is: filling writes nothing
and runs no rule code.

A value a blank refuses is answered 422 with a problem document whose ``detail`` names the
blank and says what it allows, in the reader's language (``?lang=``, else the account's,
else the game's), and whose ``field`` is the blank's name.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from scriba.service.errors import InvalidInput
from scriba.web import sessions
from scriba.web.api import PROBLEMS, _language
from scriba.web.pages.recipeforms import fill_recipe
from scriba.web.problems import problem

router = APIRouter(prefix="/api/v1", tags=["recipes"], responses=PROBLEMS)
Value = Annotated[str, StringConstraints(max_length=200)] | int


class BlankOut(BaseModel):
    name: str = Field(description="The key of its value in a fill's `values`")
    label: str
    help: str
    kind: str = Field(description="number, rule, office, choice or text")
    default: str
    minimum: int | None = None
    maximum: int | None = None
    choices: list[dict[str, str]] = Field(
        default_factory=list, description="{value, label}: for a choice the values "
                                          "allowed; the game's rules; its offices (any "
                                          "office's name is allowed)")


class RecipeOut(BaseModel):
    name: str
    title: str
    summary: str
    blanks: list[BlankOut]


class FillIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    values: dict[Annotated[str, StringConstraints(max_length=64)], Value] = Field(
        default_factory=dict, max_length=30,
        description="Each blank's value by its name; a blank left out takes its default.")


class FilledOut(BaseModel):
    title: str
    text: str
    code: str
    change: dict[str, Any] = Field(description="The new rule as one of a proposal's "
                                               "`changes` (the commands' `propose`)")


def _recipe(recipe: Any) -> RecipeOut:
    return RecipeOut(name=recipe.name, title=recipe.title, summary=recipe.summary, blanks=[
        BlankOut(name=b.name, label=b.label, help=b.help, kind=b.kind, default=b.default,
                 minimum=b.minimum, maximum=b.maximum,
                 choices=[{"value": v, "label": label} for v, label in b.choices])
        for b in recipe.blanks])


def _reader_language(request: Request, lang: str | None, game: str) -> str:
    service = sessions.get_service(request)
    return _language(request, lang) or service.reads.status(game).get("language") or "en"


@router.get("/games/{game}/recipes", summary="The recipes that fit the game: rules to fill "
                                             "in, with their blanks")
def recipes(request: Request, game: str, lang: str | None = None) -> list[RecipeOut]:
    service = sessions.get_service(request)
    language = _reader_language(request, lang, game)
    return [_recipe(r) for r in service.recipes.list(language, game)]


@router.post("/games/{game}/recipes/{recipe}",
             summary="A recipe filled in: the rule's title, text and code (nothing is "
                     "proposed)", response_model=FilledOut)
def fill(request: Request, game: str, recipe: str, body: FillIn,
         lang: str | None = None) -> Any:
    service = sessions.get_service(request)
    language = _reader_language(request, lang, game)
    if recipe not in {r.name for r in service.recipes.list(language, game)}:
        return problem(404, "Not found", f"There is no recipe {recipe[:40]!r} for {game}.")
    values = {str(k): str(v) for k, v in body.values.items()}
    try:
        rule = fill_recipe(service, recipe, values, language,
                           service.reads.status(game).get("language") or "en", game)
    except InvalidInput as error:
        return problem(422, "Invalid value", str(error),
                       kind="urn:scriba:problem:invalid-value", field=error.field)
    return FilledOut(title=rule.title, text=rule.text, code=rule.code, change={
        "enact": {"title": rule.title, "text": rule.text, "code": rule.code}})

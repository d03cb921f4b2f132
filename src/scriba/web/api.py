"""The JSON API, ``/api/v1``: everything the pages read and do, for scripts and bots —
here acting and the officer's part, and who acts; reading a game: :mod:`.reads_api`.

Reading is public (Nomic records are). Acting needs ``Authorization: Bearer TOKEN`` (a
personal token from ``scriba token GAME PLAYER`` or the account page) or a signed-in
session plus the ``X-CSRF-Token`` header. The actor is always the token's (or the
session's) player, never a field of the body: a body naming an ``actor`` is refused.

A command the rules refuse is answered 422 with an RFC 9457 problem document whose
``detail`` is the ruleset's refusal, in the game's language; the refusal is recorded in the
game's log like every command. A ``request_id`` is the acting player's own: sent again
with the same command it gets the first answer, with another command a 409 problem.
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from scriba.service.errors import NotAllowed, RequestIdReused
from scriba.web import sessions
from scriba.web.problems import TITLES, problem

LANGUAGES = ("en", "it", "de")
_PROBLEM_DOC = {"content": {"application/problem+json": {"schema": {
    "$ref": "#/components/schemas/Problem"}}}}
PROBLEMS: dict[int | str, dict[str, Any]] = {
    code: {"description": TITLES[code], **_PROBLEM_DOC} for code in (400, 404, 413, 422)}
AUTH_PROBLEMS: dict[int | str, dict[str, Any]] = {
    **PROBLEMS, **{code: {"description": TITLES[code], **_PROBLEM_DOC}
                   for code in (401, 403)}}

router = APIRouter(prefix="/api/v1", tags=["games"], responses=PROBLEMS)


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str


class CommandIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: str = Field(min_length=1, max_length=64,
                        description="An action of the rules in force (see …/actions).")
    args: dict[str, Any] = Field(default_factory=dict,
                                 description="The action's arguments by name.")
    request_id: str | None = Field(default=None, min_length=1, max_length=200,
                                   description="Yours (each player's own), to send a "
                                               "command again safely: the same id with the "
                                               "same command gets the first answer; with "
                                               "another command, 409.")


class CommandOut(BaseModel):
    accepted: bool
    message: str
    seqs: list[int]
    reply: str


class InvitationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    email: str = Field(min_length=3, max_length=320)
    player: str = Field(min_length=1, max_length=64)


class PlayerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    email: str | None = Field(default=None, min_length=3, max_length=320)


def _service(request: Request) -> Any:
    return sessions.get_service(request)


def _language(request: Request, lang: str | None, game_id: str | None = None) -> str | None:
    """The reader's language: ?lang=, else their account's; None means the game's."""
    if lang in LANGUAGES:
        return lang
    account = sessions.current_account(request)
    return getattr(account, "language", None) if account is not None else None


# --- who acts ------------------------------------------------------------------------------
def _caller(request: Request, game_id: str, unsigned: str) -> tuple[Any, str | None]:
    """The caller's account and, with a token, its player: 401 for a bad token or, with
    the ``unsigned`` message, for nobody signed in; 403 for a token of another game or a
    session's unsafe request without the CSRF header."""
    if sessions.bearer_token(request) is not None:
        identity = sessions.token_identity(request)
        if identity is None:
            raise HTTPException(401, "The token is not valid (unknown or revoked).",
                                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        account, token_game, player = identity
        if token_game != game_id:
            raise HTTPException(403, f"This token acts in {token_game}, not in {game_id}.")
        return account, player
    account = sessions.current_account(request)
    if account is None:
        raise HTTPException(401, unsigned, headers={"WWW-Authenticate": "Bearer"})
    if request.method in sessions.UNSAFE_METHODS:
        try:
            sessions.check_csrf(request)
        except NotAllowed as refusal:
            raise HTTPException(403, str(refusal)) from None
    return account, None


def acting_player(request: Request, game_id: str) -> str:
    """The player the caller acts as in ``game_id``: 401 without credentials, 403 for a
    token of another game, a session without the CSRF header, or no seat."""
    account, player = _caller(request, game_id, "Acting needs a token (Authorization: "
                                                "Bearer TOKEN) or signing in.")
    if player is not None:
        return player
    role = _service(request).seats.role(account.id, game_id)
    if role.player is None:
        raise HTTPException(403, f"You have no seat as a player in {game_id}.")
    return role.player


def require_seat(request: Request, game_id: str) -> Any:
    """A seat in ``game_id``: a player's token, or the session of a player or the officer;
    401 without credentials, 403 for anyone else. The caller's account."""
    account, player = _caller(request, game_id, "Sign in, or send a token (Authorization: "
                                                "Bearer TOKEN).")
    if player is None and _service(request).seats.role(account.id, game_id).kind \
            == "reader":
        raise HTTPException(403, f"Only the players and the officer of {game_id} may do "
                                 "this.")
    return account


def require_officer(request: Request, game_id: str) -> Any:
    """The officer's account (session with CSRF header, or the token of their seat)."""
    account, _player = _caller(request, game_id, "Sign in first.")
    if account is None or _service(request).seats.role(account.id, game_id).kind \
            != "officer":
        raise HTTPException(403, f"Only the officer of {game_id} may do this.")
    return account


# --- acting --------------------------------------------------------------------------------
COMMAND_PROBLEMS: dict[int | str, dict[str, Any]] = {
    **AUTH_PROBLEMS, 409: {"description": "The request id was sent before with another "
                                          "command", **_PROBLEM_DOC}}


@router.post("/games/{game}/commands", summary="Act as the token's player",
             response_model=CommandOut, responses=COMMAND_PROBLEMS)
def command(request: Request, game: str, body: CommandIn,
            lang: str | None = None) -> Any:
    return _perform(request, game, acting_player(request, game), body, lang)


@router.post("/games/{game}/check", summary="Check a command as the token's player without "
             "performing it: a proposal's code, the rules' checks, its dry run (recorded "
             "nowhere)", responses=AUTH_PROBLEMS)
def check(request: Request, game: str, body: CommandIn,
          lang: str | None = None) -> dict[str, Any]:
    return _service(request).checks.proposal(game, acting_player(request, game), body.action,
                                             body.args, _language(request, lang))


def _perform(request: Request, game: str, actor: str, body: CommandIn,
             lang: str | None) -> Any:
    """Perform ``body`` as ``actor``: 200, or a 422 problem for a refusal by the rules.
    A request id is the actor's own: sent again with the same command it gets the first
    answer (the service's), with another command a 409 problem in the reader's language."""
    service = _service(request)
    language = _language(request, lang)
    try:
        outcome = service.commands.perform(game, actor, body.action, body.args, channel="api",
                                           request_id=body.request_id)
    except RequestIdReused as refusal:
        return problem(409, TITLES[409], refusal.told(language) if language else str(refusal),
                       kind="urn:scriba:problem:request-id-reused", request_id=body.request_id)
    answer = {"accepted": outcome.accepted, "message": outcome.message,
              "seqs": _seqs(outcome),
              "reply": service.reads.describe_outcome(game, outcome, language)}
    return _command_response(200 if outcome.accepted else 422, answer)


def _command_response(status_code: int, answer: dict[str, Any]) -> Any:
    if status_code == 200:
        # A response, not a dict: FastAPI would check it against CommandOut (which only
        # documents it) on a second trip through the thread pool, for every vote.
        return JSONResponse(answer)
    return problem(422, "Refused by the rules", answer["message"],
                   kind="urn:scriba:problem:refused", accepted=False, seqs=answer["seqs"],
                   reply=answer["reply"])


# --- the officer ---------------------------------------------------------------------------
@router.get("/games/{game}/players", summary="Seats: players' accounts (officer only)",
            responses=AUTH_PROBLEMS)
def players(request: Request, game: str) -> list[dict[str, Any]]:
    require_officer(request, game)
    return [{"player": s.player, "role": s.role, "email": s.email,
             "display_name": s.display_name, "language": s.language,
             "mail_mode": s.mail_mode} for s in _service(request).seats.seats(game)]


@router.post("/games/{game}/players", summary="Add a player, with their address (officer)",
             responses=AUTH_PROBLEMS)
def add_player(request: Request, game: str, body: PlayerIn) -> JSONResponse:
    require_officer(request, game)
    service = _service(request)
    outcome = service.commands.add_player(game, body.name)
    if not outcome.accepted:
        return problem(422, "Refused", outcome.message, kind="urn:scriba:problem:refused")
    if body.email:
        service.seats.seat(game, body.name, body.email)
    return JSONResponse({"accepted": True, "player": body.name}, status_code=201)


@router.post("/games/{game}/invitations", summary="Invite a person by address (officer)",
             responses=AUTH_PROBLEMS)
def invite(request: Request, game: str, body: InvitationIn) -> JSONResponse:
    require_officer(request, game)
    token = _service(request).seats.invite(game, body.email, body.player)
    link = str(request.base_url).rstrip("/") + "/invitations/" + token
    return JSONResponse({"token": token, "url": link, "email": body.email,
                         "player": body.player}, status_code=201)


class AdvanceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    to: str | None = Field(default=None, max_length=64, description="An ISO time")
    by: int | None = Field(default=None, ge=1, le=10 * 366 * 86400, description="Seconds")


@router.post("/games/{game}/officer/commands",
             summary="Act for an office the rules grant (officer): as the office's holder",
             response_model=CommandOut, responses=COMMAND_PROBLEMS)
def officer_command(request: Request, game: str, body: CommandIn,
                    lang: str | None = None) -> Any:
    require_officer(request, game)
    service = _service(request)
    declared = {a.name: a for a in service.reads.officer_actions(game)}
    if body.action not in declared:
        return problem(422, "Refused", f"No office holds the action '{body.action}'.",
                       kind="urn:scriba:problem:refused")
    offices = service.reads.status(game).get("offices") or {}
    holder = next((str(offices[who[7:]]) for who in declared[body.action].who
                   if who.startswith("office:") and offices.get(who[7:])), None)
    if holder is None:
        return problem(422, "Refused", f"Nobody holds the office for '{body.action}'.",
                       kind="urn:scriba:problem:refused")
    return _perform(request, game, holder, body, lang)


@router.post("/games/{game}/advance", summary="Move a simulated clock (officer)",
             response_model=CommandOut, responses=AUTH_PROBLEMS)
def advance(request: Request, game: str, body: AdvanceIn, lang: str | None = None) -> Any:
    require_officer(request, game)
    service = _service(request)
    if service.reads.status(game).get("clock") != "simulated":
        return problem(422, "Refused", "This game runs on the real clock.",
                       kind="urn:scriba:problem:refused")
    if (body.to is None) == (body.by is None):
        return problem(422, "Refused", "Give either 'to' (a time) or 'by' (seconds).")
    outcome = service.commands.advance(game, to=body.to, by=body.by)
    return {"accepted": outcome.accepted, "message": outcome.message, "seqs": _seqs(outcome),
            "reply": service.reads.describe_outcome(game, outcome, _language(request, lang))}


def _seqs(outcome: Any) -> list[int]:
    # The events' own numbers: when another writer decided the command, or others came
    # after it, the game's state is already further on.
    return [event["seq"] for event in outcome.events or [] if "seq" in event]


@router.delete("/token", summary="Revoke the token this request carries", status_code=204,
               responses=AUTH_PROBLEMS)
def revoke_own_token(request: Request) -> Response:
    token = sessions.bearer_token(request)
    if token is None or sessions.token_identity(request) is None:
        raise HTTPException(401, "Send the token to revoke as Authorization: Bearer TOKEN.",
                            headers={"WWW-Authenticate": "Bearer"})
    _service(request).seats.revoke_token(token)
    return Response(status_code=204)


def problem_schema() -> dict[str, Any]:
    return Problem.model_json_schema()


def new_request_id() -> str:
    return secrets.token_urlsafe(16)


def install_openapi(app: Any) -> None:
    """Add the Problem schema the error responses refer to."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {}).setdefault("schemas", {})["Problem"] = \
                problem_schema()
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi

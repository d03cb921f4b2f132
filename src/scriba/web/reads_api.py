"""Reading a game in the JSON API (``/api/v1``, beside :mod:`scriba.web.api`): the games,
a game now, its rules (now, then, each with its history, the differences between two
dates), its period reports, its proposals (and a dry run of one, for its players), its
log told as sentences, and what the caller may do now.

Reading is public (Nomic records are); a reader signed in or sending a token reads as the
player they sit as (their own private values and sealed votes, their refused commands),
the officer as the officer.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import RedirectResponse

from scriba.service.secrets import Seer
from scriba.web import sessions
from scriba.web.api import AUTH_PROBLEMS, PROBLEMS, _caller, _language, _service, require_seat

LOG_LIMIT = 500

router = APIRouter(prefix="/api/v1", tags=["games"], responses=PROBLEMS)


def _jsonable(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


@router.get("/games", summary="The games on this server")
def games(request: Request) -> list[dict[str, Any]]:
    return _service(request).reads.games()


@router.get("/games/{game}", summary="A game now (the same JSON as scenario run --json)")
def game(request: Request, game: str) -> dict[str, Any]:
    return _service(request).reads.summary(game, seen_by=_seer(request, game))


@router.get("/games/{game}/status", summary="Period, next deadline, winners")
def status(request: Request, game: str, lang: str | None = None) -> dict[str, Any]:
    return _service(request).reads.status(game, _language(request, lang))


@router.get("/games/{game}/rules", summary="The rules in force, now or as they stood then")
def rules(request: Request, game: str,
          at: str | None = Query(None, max_length=64, description="An ISO date or time"),
          seq: int | None = Query(None, ge=0, le=2**31)) -> list[dict[str, Any]]:
    return _service(request).reads.rules_at(game, at=at, seq=seq)


@router.get("/games/{game}/rules-diff", summary="Rules enacted, repealed, changed between "
            "two dates")
def rules_diff(request: Request, game: str,
               since: str = Query(..., max_length=64, description="An ISO date or time"),
               until: str | None = Query(None, max_length=64)) -> list[dict[str, Any]]:
    return _service(request).reads.ruleset_diff(game, since, until)


@router.get("/games/{game}/reports", summary="Each period's results (a Giornata, a round)")
def reports(request: Request, game: str, lang: str | None = None) -> list[dict[str, Any]]:
    return _service(request).reads.period_reports(game, _language(request, lang))


@router.get("/games/{game}/rules/{rule}", summary="One rule with its whole history",
            responses={303: {"description": "The rule was renumbered: see the rule it "
                                            "became (Location)"}})
def rule(request: Request, game: str, rule: str) -> Any:
    moved = _service(request).reads.renumbered(game, rule)
    if moved is not None:
        return RedirectResponse(f"{router.prefix}/games/{quote(game, safe='')}/rules/"
                                f"{quote(moved, safe='')}", 303)
    return _service(request).reads.rule_history(game, rule)


@router.get("/games/{game}/proposals", summary="Proposals, optionally by status")
def proposals(request: Request, game: str,
              status: str | None = Query(None, max_length=64)) -> list[dict[str, Any]]:
    return _service(request).reads.proposals(game, status=status,
                                             seen_by=_seer(request, game))


@router.get("/games/{game}/proposals/{proposal}", summary="One proposal, its votes, tally")
def proposal(request: Request, game: str, proposal: str) -> dict[str, Any]:
    return _service(request).reads.proposal(game, proposal,
                                            seen_by=_seer(request, game))


@router.post("/games/{game}/proposals/{proposal}/dry-run",
             summary="What would change if the proposal were adopted now (recorded nowhere; "
                     "for the game's players and officer)", responses=AUTH_PROBLEMS)
def dry_run(request: Request, game: str, proposal: str,
            lang: str | None = None) -> dict[str, Any]:
    require_seat(request, game)  # a dry run runs rule code: not for anyone passing by
    return _service(request).reads.dry_run(game, proposal, _language(request, lang))


def _seer(request: Request, game_id: str) -> Seer:
    """Who reads a game's state (others' private values and sealed votes left out); a
    token of another game reads as the public, as nobody signed in does."""
    try:
        return Seer(*_reading_as(request, game_id))
    except HTTPException as refused:
        if refused.status_code != 403:
            raise
        return Seer()


def _reading_as(request: Request, game_id: str) -> tuple[str | None, bool]:
    """Who reads: the player the caller sits as (None for anyone else) and whether they
    are the officer; nobody signed in reads as the public."""
    if sessions.bearer_token(request) is None and sessions.current_account(request) is None:
        return None, False
    account, player = _caller(request, game_id, "")
    role = _service(request).seats.role(account.id, game_id)
    return player or role.player, role.kind == "officer"


@router.get("/games/{game}/log", summary="The log told as sentences, a page at a time "
                                         "(refused commands: only the caller's own; all of "
                                         "them for the officer)")
def game_log(request: Request, game: str,
             after: int = Query(0, ge=0, le=2**31, description="Entries after this seq"),
             limit: int = Query(100, ge=1, le=LOG_LIMIT),
             player: str | None = Query(None, max_length=64),
             kind: Annotated[list[str] | None, Query(max_length=20)] = None,
             lang: str | None = None) -> dict[str, Any]:
    viewer, officer = _reading_as(request, game)
    entries = _service(request).reads.chronicle(game, _language(request, lang), player=player,
                                                kinds=kind, after_seq=after, limit=limit,
                                                viewer=viewer, officer=officer)
    following = entries[-1]["seq"] if len(entries) == limit else None
    return {"entries": entries, "next_after": following}


@router.get("/games/{game}/actions", summary="What the caller may do now",
            responses=AUTH_PROBLEMS)
def actions(request: Request, game: str) -> dict[str, Any]:
    """What the caller's player may do now: only the actions the rules in force would
    accept, each with ``options`` (per parameter, the values open now; a parameter not
    there is typed freely) and, for a move a rule says is owed, ``due``, ``deadline`` and
    ``due_reason`` — the owed ones first. The officer's actions for the game's officer."""
    service = _service(request)
    player = None
    officer = False
    identity = sessions.token_identity(request) if sessions.bearer_token(request) else None
    if sessions.bearer_token(request) is not None and identity is None:
        raise HTTPException(401, "The token is not valid (unknown or revoked).")
    if identity is not None:
        if identity[1] != game:
            raise HTTPException(403, f"This token acts in {identity[1]}, not in {game}.")
        player = identity[2]
        account = identity[0]
    else:
        account = sessions.current_account(request)
        if account is not None:
            player = service.seats.role(account.id, game).player
    if account is not None:
        officer = service.seats.role(account.id, game).kind == "officer"
    result: dict[str, Any] = {
        "game": game, "player": player,
        "actions": [_jsonable(a) for a in service.reads.actions_for(game, player)]}
    if officer:
        result["officer_actions"] = [_jsonable(a) for a in service.reads.officer_actions(game)]
    return result

"""Cases and corrections in the JSON API (``/api/v1``, beside :mod:`scriba.web.api`).

Reading is public, as the rest of the record is: the docket, one case with its steps told
in sentences, the corrections with their differences. Correcting is the officer's: ``POST
…/corrections`` with ``dry_run`` answers the difference and writes nothing; without it,
and with the ``expected_seq`` the dry run answered, it confirms — refused (409) if the
game moved on meanwhile. Refusals are problem documents, as the API's other refusals are.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from scriba.service.errors import ServiceError
from scriba.web import sessions
from scriba.web.api import AUTH_PROBLEMS, PROBLEMS, _language, require_officer
from scriba.web.problems import TITLES, problem

router = APIRouter(prefix="/api/v1", tags=["cases"], responses=PROBLEMS)


class CorrectionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    correction: dict[str, Any] = Field(
        description='What to correct: {"kind": "annul", "event": SEQ}, {"kind": "add", '
                    '"at": TIME, "actor": NAME, "action": NAME, "args": {...}} or {"kind": '
                    '"set", "at": TIME, "vars": {...}, "players": {...}, "offices": {...}}; '
                    'with its "reason".')
    dry_run: bool = Field(False, description="Only show the difference; write nothing.")
    expected_seq: int | None = Field(
        None, ge=0, le=2**31, description="To confirm: the `expected_seq` the dry run "
                                          "answered (the game as it was looked at).")


def _service(request: Request) -> Any:
    return sessions.get_service(request)


@router.get("/games/{game}/cases", summary="The docket: every case, those waiting first")
def cases(request: Request, game: str, lang: str | None = None) -> list[dict[str, Any]]:
    return _service(request).cases.docket(game, _language(request, lang))


@router.get("/games/{game}/cases/{case}", summary="One case: its steps, judgment, earlier "
                                                  "judgments")
def case(request: Request, game: str, case: str, lang: str | None = None) -> dict[str, Any]:
    return _service(request).cases.case(game, case, _language(request, lang))


@router.get("/games/{game}/corrections", summary="The game's corrections, each with its "
                                                 "difference, oldest first")
def corrections(request: Request, game: str, lang: str | None = None
                ) -> list[dict[str, Any]]:
    service = _service(request)
    language = _language(request, lang)
    return [told(service, game, preview, language)
            for preview in service.corrections.corrections(game)]


@router.post("/games/{game}/corrections", summary="Correct the record (officer): with "
             "dry_run the difference, else confirmed", responses={
                 **AUTH_PROBLEMS, 409: {"description": "The game moved on since the dry "
                                                       "run: look again"}})
def correct(request: Request, game: str, body: CorrectionIn,
            lang: str | None = None) -> Any:
    require_officer(request, game)
    service = _service(request)
    language = _language(request, lang)
    if body.dry_run:
        return told(service, game, service.corrections.preview(game, body.correction, None),
                    language)
    if body.expected_seq is None:
        return problem(422, TITLES[422], "Give the expected_seq of the dry run you looked "
                       "at (send dry_run first).", kind="urn:scriba:problem:refused")
    try:
        preview = service.corrections.confirm(game, body.correction, None, body.expected_seq)
    except ServiceError as refusal:
        if service.reads.load(game).seq != body.expected_seq:  # raced: told apart
            return problem(409, TITLES.get(409, "Conflict"), str(refusal),
                           kind="urn:scriba:problem:moved-on")
        raise
    return told(service, game, preview, language)


def told(service: Any, game: str, preview: Any, language: str | None) -> dict[str, Any]:
    """A correction for the API: its facts, the difference as data and in sentences."""
    difference = preview.difference
    return {
        "number": preview.number, "confirmed": preview.confirmed, "by": preview.by,
        "reason": preview.reason, "case": preview.case, "at": preview.at,
        "correction": preview.correction, "point": preview.point,
        "through": preview.through, "expected_seq": preview.through,
        "sentences": service.corrections.tell(game, preview, language),
        "difference": asdict(difference) if is_dataclass(difference) else difference,
    }

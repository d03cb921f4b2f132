"""The game's corrections: each one, who made it and why, and its difference told in
sentences, with the decisions it superseded linked; and the officer's form — what to
correct (annul a command of the chronicle, add a command that was lost), the reason,
"Show the difference" (nothing written), then "Confirm"."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from scriba.service import errors
from scriba.web import i18n
from scriba.web.pages import common
from scriba.web.pages.game import FormError, _yaml, game_info, open_game, page

router = APIRouter()
FIELDS = ("kind", "event", "at", "actor", "action", "args", "reason")


@router.get("/games/{game_id}/corrections", response_class=HTMLResponse)
def corrections_page(request: Request, game_id: str, annul: str = "") -> Response:
    """The corrections; for the officer, the form (``?annul=N``: a command to annul)."""
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        values = {"kind": "annul", "event": annul[:12]} if annul else {}
        return render(request, service, game_id, status, reader, values)
    return page(request, game_id, build)


def render(request: Request, service: Any, game_id: str, status: dict[str, Any],
           reader: common.Reader, values: dict[str, str], preview: Any = None,
           error: str = "", status_code: int = 200) -> Response:
    language = reader.language
    shown = [told(service, game_id, p, language)
             for p in reversed(service.corrections.corrections(game_id))]
    officer = None
    if reader.officer:
        officer = {"values": values, "error": error, "players": status.get("players") or [],
                   "actions": _actions(service, game_id, language),
                   "preview": told(service, game_id, preview, language) if preview else None}
    return common.render(request, "corrections.html", reader, status_code=status_code,
                         current="corrections", game=game_info(status),
                         rule_lang=status.get("language"), corrections=shown,
                         officer=officer)


def told(service: Any, game_id: str, preview: Any, language: str) -> dict[str, Any]:
    """A correction as the page shows it."""
    return {"number": preview.number, "by": preview.by, "reason": preview.reason,
            "at": preview.at, "case": preview.case, "point": preview.point,
            "through": preview.through, "confirmed": preview.confirmed,
            "sentences": service.corrections.tell(game_id, preview, language)}


def _actions(service: Any, game_id: str, language: str) -> list[tuple[str, str]]:
    """The actions of the rules in force by their label, for a lost command."""
    words = service.reads.words(game_id, language)
    out = []
    for action in service.reads.declared_actions(game_id):
        label = words.action(action.name).label
        out.append((action.name, label.text if label is not None
                    else action.name.replace("_", " ")))
    return out


@router.post("/games/{game_id}/corrections")
async def correct(request: Request, game_id: str) -> Response:
    form = await request.form()
    # The recompute blocks and holds the game's lock: off the event loop.
    return await run_in_threadpool(_correct, request, game_id, form)


def _correct(request: Request, game_id: str, form: Any) -> Response:
    back = common.game_path(game_id, "corrections")
    try:
        service, status, reader = open_game(request, game_id)
    except errors.ServiceError as refusal:
        return common.error_page(request, common.reader_for(request), refusal)
    if not reader.signed_in:
        return RedirectResponse(common.Links()("/signin", next=back), status_code=303)
    _ = i18n.gettext_for(reader.language)
    try:
        common.check_csrf(request, form)
        if not reader.officer:
            raise errors.NotAllowed(_("Only the game's officer may correct the record."))
    except errors.ServiceError as refusal:
        return common.error_page(request, reader, refusal, game=game_info(status))
    values = {key: str(form.get(key) or "")[:20000] for key in FIELDS}
    try:
        correction = correction_of(values, _)
        if form.get("step") == "confirm":
            expected = _number(str(form.get("expected_seq") or ""), _)
            done = service.corrections.confirm(game_id, correction, None, expected)
            return common.redirect_with_flash(
                back, _("Correction %(number)s is made; every player is told of it.",
                        number=done.number), True)
        preview = service.corrections.preview(game_id, correction, None)
    except errors.ServiceError as refusal:
        return render(request, service, game_id, status, reader, values,
                      error=str(refusal), status_code=400)
    return render(request, service, game_id, status, reader, values, preview=preview)


def correction_of(values: dict[str, str], _: Any) -> dict[str, Any]:
    """The correction the form describes (refused, in the reader's words, if it cannot be
    one: the service checks the rest)."""
    reason = values["reason"].strip()
    if not reason:
        raise FormError(_("Say why the record is corrected."), field="reason")
    if values["kind"] == "add":
        if not values["actor"] or not values["action"] or not values["at"].strip():
            raise FormError(_("Say who sent the lost command, what it was and when."))
        args = _yaml(values["args"], _) if values["args"].strip() else {}
        if not isinstance(args, dict):
            raise FormError(_("The arguments must be written one a line, as name: value."),
                            field="args")
        return {"kind": "add", "at": values["at"].strip(), "actor": values["actor"],
                "action": values["action"], "args": args, "reason": reason}
    return {"kind": "annul", "event": _number(values["event"], _), "reason": reason}


def _number(text: str, _: Any) -> int:
    text = text.strip().lstrip("#")
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise FormError(_("An event number is a whole number from 1."), field="event")
    return int(text)

"""The officer's page: invitations, players and their seats, the clock, and the actions
offices hold."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from scriba.service import errors
from scriba.web import i18n
from scriba.web.pages import common
from scriba.web.pages.actionforms import Kept
from scriba.web.pages.game import (
    act_once,
    action_forms,
    attempt,
    game_context,
    game_info,
    kept_form,
    open_game,
    page,
)

router = APIRouter()
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration(text: str) -> int | None:
    """ "3d", "12h", "1d 6h" → seconds; anything else → None."""
    parts = re.findall(r"(\d+)\s*([smhdw])", text.strip().lower())
    if not parts or re.sub(r"[\d\ssmhdw]", "", text.strip().lower()):
        return None
    return sum(int(n) * _UNITS[u] for n, u in parts)


def invitation_link(request: Request, token: str) -> str:
    return str(request.base_url).rstrip("/") + f"/invitations/{token}"


def _holder(action: Any, offices: dict[str, Any]) -> str | None:
    for who in action.who:
        if who.startswith("office:") and offices.get(who[7:]):
            return str(offices[who[7:]])
    return None


@router.get("/games/{game_id}/officer", response_class=HTMLResponse)
def officer_page(request: Request, game_id: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        _ = i18n.gettext_for(reader.language)
        if not reader.officer:
            raise errors.NotAllowed(_("Only the game's officer may open this page."))
        return render_officer(request, service, game_id, status, reader)
    return page(request, game_id, build)


def render_officer(request: Request, service: Any, game_id: str, status: dict[str, Any],
                   reader: common.Reader, kept: Kept | None = None) -> Response:
    """The officer's page; ``kept``: a refused form sent back filled, with its refusal."""
    ctx = game_context(service, game_id, status, reader)
    actions = service.reads.officer_actions(game_id)
    return common.render(
        request, "officer.html", reader, current="officer", **ctx,
        status_code=400 if kept is not None else 200,
        seats=service.seats.seats(game_id), invitations=service.seats.invitations(game_id),
        join_requests=service.joins.queue(game_id),
        holders={a.name: _holder(a, ctx["offices"]) for a in actions},
        forms=action_forms(service, game_id, reader, ctx, actions, kept,
                           lambda name: common.game_path(game_id, "officer", "act", name)),
        new_link=request.query_params.get("invited"),
        attempts=service.reads.outsiders_attempts(game_id, reader.language))


def _refused(request: Request, game_id: str, error: errors.ServiceError) -> Response:
    try:
        _service, status, reader = open_game(request, game_id)
    except errors.ServiceError:
        return common.error_page(request, common.reader_for(request), error)
    return common.error_page(request, reader, error, game=game_info(status))


# An officer's form: (request, game_id, form, service, status, reader, _) → the answer.
OfficerForm = Callable[..., Response]


def _as_officer(request: Request, game_id: str, form: Any, handle: OfficerForm) -> Response:
    """Refuse anyone but the game's officer (and a forged form) as a page, else handle it."""
    try:
        service, status, reader = open_game(request, game_id)
        _ = i18n.gettext_for(reader.language)
        if not reader.signed_in or not reader.officer:
            raise errors.NotAllowed(_("Only the game's officer may do this."))
        common.check_csrf(request, form)
    except errors.ServiceError as error:
        return _refused(request, game_id, error)
    return handle(request, game_id, form, service, status, reader, _)


def officer_post(path: str) -> Callable[[OfficerForm], OfficerForm]:
    """Route POST /games/{game_id}/officer/<path> to an officer's form handler."""
    def register(handle: OfficerForm) -> OfficerForm:
        async def route(request: Request, game_id: str) -> Response:
            form = await request.form()
            # The service is called from the thread pool: it blocks, and it holds a lock.
            return await run_in_threadpool(_as_officer, request, game_id, form, handle)
        router.post("/games/{game_id}/officer/" + path)(route)
        return handle
    return register


@officer_post("invite")
def _invite(request: Request, game_id: str, form: Any, service: Any, status: dict[str, Any],
            reader: common.Reader, _: Any) -> Response:
    try:
        token = service.seats.invite(game_id, str(form.get("email") or ""),
                                     str(form.get("player") or ""))
    except errors.ServiceError as error:
        return common.redirect_with_flash(common.game_path(game_id, "officer"), str(error),
                                          False)
    link = invitation_link(request, token)
    # The link is shown once, on this answer only: it is the invitation's secret.
    return common.render(request, "invited.html", reader, game=game_info(status),
                         link=link, email=str(form.get("email")), player=str(form.get("player")),
                         message=_("Invitation made."))


@officer_post("player")
def _add_player(request: Request, game_id: str, form: Any, service: Any,
                status: dict[str, Any], reader: common.Reader, _: Any) -> Response:
    back = common.game_path(game_id, "officer")
    name = str(form.get("name") or "").strip()
    try:
        outcome = service.commands.add_player(game_id, name)
        message = service.reads.describe_outcome(game_id, outcome, reader.language) \
            if outcome.accepted else outcome.message
        return common.redirect_with_flash(back, message or _("Done."), outcome.accepted)
    except errors.ServiceError as error:
        return common.redirect_with_flash(back, str(error), False)


@officer_post("join")
def _join(request: Request, game_id: str, form: Any, service: Any, status: dict[str, Any],
          reader: common.Reader, _: Any) -> Response:
    """Admit or decline a request to join that came by mail (scriba.service.joining)."""
    back = common.game_path(game_id, "officer")
    number = str(form.get("request") or "")
    if not number.isdigit():
        return common.redirect_with_flash(back, _("There is no such request."), False)
    found = next((r for r in service.joins.queue(game_id) if r["id"] == int(number)), None)
    try:
        if found is None:
            raise errors.NotFound(_("There is no such request."))
        if form.get("answer") == "accept":
            service.joins.accept(game_id, found["id"])
            return common.redirect_with_flash(back, _("%(player)s plays now.",
                                                      player=found["player"]), True)
        service.joins.decline(game_id, found["id"])
    except errors.ServiceError as error:
        return common.redirect_with_flash(back, str(error), False)
    return common.redirect_with_flash(back, _("The request was declined."), True)


@officer_post("seat")
def _seat(request: Request, game_id: str, form: Any, service: Any, status: dict[str, Any],
          reader: common.Reader, _: Any) -> Response:
    """Give a player's seat to another address, or (no address) take it from its account.
    The seat's tokens are revoked and the account that lost it is signed out everywhere
    (scriba.service.accounts)."""
    back = common.game_path(game_id, "officer")
    player = str(form.get("player") or "")
    email = str(form.get("email") or "").strip()
    try:
        if email:
            account = service.seats.seat(game_id, player, email)
            message = _("The seat of %(player)s now belongs to %(email)s.", player=player,
                        email=account.email)
        elif service.seats.unseat(game_id, player):
            message = _("The seat of %(player)s belongs to no account now.", player=player)
        else:
            return common.redirect_with_flash(back, _("No account holds that seat."), False)
    except errors.ServiceError as error:
        return common.redirect_with_flash(back, str(error), False)
    return common.redirect_with_flash(back, message, True)


@officer_post("advance")
def _advance(request: Request, game_id: str, form: Any, service: Any, status: dict[str, Any],
             reader: common.Reader, _: Any) -> Response:
    back = common.game_path(game_id, "officer")
    if status.get("clock") != "simulated":
        return common.redirect_with_flash(back, _("This game runs on the real clock."), False)
    text = str(form.get("by") or "")
    target = str(form.get("to") or "").strip()
    seconds = duration(text) if text.strip() else None
    if target == "deadline":
        target = status.get("deadline") or ""
    if seconds is None and not target:
        return common.redirect_with_flash(
            back, _("Write how long, e.g. 3d or 12h, or move to the next deadline."), False)
    try:
        outcome = service.commands.advance(game_id, to=target or None, by=seconds)
        message = service.reads.describe_outcome(game_id, outcome, reader.language)
    except errors.ServiceError as error:
        return common.redirect_with_flash(back, str(error), False)
    return common.redirect_with_flash(back, message or _("The clock moved."), True)


@officer_post("act/{action}")
def _officer_act(request: Request, game_id: str, form: Any, service: Any,
                 status: dict[str, Any], reader: common.Reader, _: Any) -> Response:
    back = common.game_path(game_id, "officer")
    action = str(request.path_params["action"])

    def act(request_id: str | None) -> tuple[str, bool] | Response:
        declared = {a.name: a for a in service.reads.officer_actions(game_id)}
        if action not in declared:
            return common.redirect_with_flash(back, _("No office holds that action."), False)
        holder = _holder(declared[action], status.get("offices") or {})
        if holder is None:
            return common.redirect_with_flash(back, _("Nobody holds the office for this."),
                                              False)
        message, accepted, concerns = attempt(service, game_id, holder, action,
                                              declared[action], form, reader.language,
                                              request_id, _)
        if accepted:
            return message, accepted
        # Refused: the page again with the form as it was sent (see game._act).
        return render_officer(request, service, game_id, status, reader,
                              kept_form(form, action, message, concerns))
    return act_once(form, back, act)

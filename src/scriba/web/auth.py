"""The sign-in, sign-out, invitation, account and password-reset pages, and the sign-in
rate limit; sessions, tokens and CSRF themselves are :mod:`scriba.web.sessions`.

- Routes here (templates in ``templates/auth/``, rendered through ``pages.common.render``):
  ``GET/POST /signin`` (``?next=`` local paths only), ``POST /signout``,
  ``GET/POST /invitations/{token}``, ``GET/POST /account`` (name, language, time zone, mail
  mode; sets the ``scriba_lang`` cookie), ``POST /account/password``,
  ``POST /account/sessions/end`` and ``…/end-all``, ``POST /account/tokens`` (a new token,
  shown once), ``POST /account/tokens/revoke``, ``GET/POST /password-reset`` and
  ``GET/POST /password-reset/{token}``. Link an invitation as ``/invitations/{token}``.
- ``scriba.web.templating.templates``: a ``Jinja2Templates`` on the pages' environment.

Sign-in attempts are counted in the database per address and per client IP, so every
server process shares the limit.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from scriba.service.errors import InvalidInput, NotAllowed, NotFound, ServiceError
from scriba.service.ratelimit import RateLimited
from scriba.web import i18n
from scriba.web.pages import common
from scriba.web.sessions import (
    accounts_of,
    client_ip,
    csrf_protect,
    csrf_token,
    current_account,
    end_session,
    get_service,
    safe_next,
    start_session,
    web_session,
)

router = APIRouter(include_in_schema=False)


# --- sign-in rate limit --------------------------------------------------------------------
def signin_throttled(request: Request, email: str) -> list[str]:
    """Count this attempt, per address and per client, before any password is checked
    (so attempts racing each other count too): the counters it filled. A 429 saying when
    to try again if it is one too many (scriba.service.ratelimit: growing waits, never
    a lockout)."""
    try:
        return get_service(request).accounts.limits.signin(email, client_ip(request))
    except RateLimited as refusal:
        sentence = common.rate_limit_sentence(refusal, common.reader_language(request))
        raise HTTPException(429, sentence,
                            headers={"Retry-After": str(refusal.retry_after)}) from None


def sign_in(request: Request, email: str, password: str) -> Any:
    """The account, or an HTTPException: 429 when throttled, 401 for a wrong password."""
    counted = signin_throttled(request, email)
    account = get_service(request).accounts.authenticate(email, password)
    if account is None:
        raise HTTPException(401, _gettext(request)("Wrong e-mail address or password."))
    get_service(request).accounts.limits.give_back(counted)  # only failures add up
    start_session(request, account.id)
    return account


# --- pages ---------------------------------------------------------------------------------
def _render(request: Request, template: str, status_code: int = 200,
            **values: Any) -> HTMLResponse:
    reader = common.reader_for(request)
    reader.csrf = csrf_token(request)
    return common.render(request, template, reader, status_code=status_code, **values)


async def _form(request: Request) -> Any:
    await csrf_protect(request)
    return await request.form()


def _text(form: Any, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _gettext(request: Request) -> Any:
    return i18n.gettext_for(common.reader_language(request))


@router.get("/signin", response_class=HTMLResponse)
def signin_page(request: Request, next: str = "/") -> Response:
    return _render(request, "auth/signin.html", next=safe_next(next), error=None, email="")


@router.post("/signin")
async def signin_submit(request: Request) -> Response:
    form = await _form(request)
    email, password = _text(form, "email"), _text(form, "password")
    target = safe_next(_text(form, "next"))
    try:
        await _in_thread(sign_in, request, email, password)
    except HTTPException as refusal:
        page = _render(request, "auth/signin.html", status_code=refusal.status_code,
                       next=target, error=refusal.detail, email=email[:320])
        page.headers.update(refusal.headers or {})
        return page
    return RedirectResponse(target, status_code=303)


@router.post("/signout")
async def signout(request: Request) -> Response:
    await _form(request)
    end_session(request)
    return RedirectResponse("/", status_code=303)


@router.get("/invitations/{token}", response_class=HTMLResponse)
def invitation_page(request: Request, token: str) -> Response:
    try:
        invitation = get_service(request).seats.invitation(token)
    except NotFound as missing:
        return _render(request, "auth/invitation.html", status_code=404, invitation=None,
                       token="", error=str(missing))
    error = "This invitation has already been used." if invitation.used else None
    return _render(request, "auth/invitation.html", invitation=invitation, token=token,
                   error=error, invited_here=_invited_here(request, invitation))


def _invited_here(request: Request, invitation: Any) -> bool:
    """Signed in as the invited address: the seat is taken without the password again."""
    account = current_account(request)
    return account is not None and invitation is not None \
        and account.email == invitation.email


@router.post("/invitations/{token}")
async def invitation_accept(request: Request, token: str) -> Response:
    form = await _form(request)
    seats = get_service(request).seats
    try:
        invitation = seats.invitation(token)
        account = await _in_thread(seats.accept_invitation, token,
                                   _text(form, "password"),
                                   _text(form, "display_name") or None,
                                   common.reader_language(request),
                                   current_account(request))
    except ServiceError as refusal:
        status = 404 if isinstance(refusal, NotFound) else \
            403 if isinstance(refusal, NotAllowed) else 422
        shown = None if isinstance(refusal, NotFound) else seats.invitation(token)
        return _render(request, "auth/invitation.html", status_code=status,
                       invitation=shown, token=token if shown else "", error=str(refusal),
                       invited_here=_invited_here(request, shown))
    start_session(request, account.id)
    return RedirectResponse("/games/" + quote(invitation.game_id, safe=""), status_code=303)


def _to_signin() -> RedirectResponse:
    return RedirectResponse("/signin?next=/account", status_code=303)


async def _account_form(request: Request) -> tuple[Any, Any]:
    """The form (CSRF checked) and the signed-in account (None: send them to sign in)."""
    form = await _form(request)
    return form, current_account(request)


def _account_render(request: Request, account: Any, status_code: int = 200,
                    error: str | None = None, **values: Any) -> HTMLResponse:
    """The account page: its games, each seat's personal tokens, its sessions."""
    this = web_session(request)
    return _render(request, "auth/account.html", status_code=status_code, account=account,
                   error=error, games=get_service(request).seats.games_of(account.id),
                   seats=_seat_tokens(request, account),
                   sessions=accounts_of(request).sessions(account.id),
                   this_session=this.id if this is not None else None, **values)


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request) -> Response:
    account = current_account(request)
    if account is None:
        return _to_signin()
    return _account_render(request, account)


@router.post("/account")
async def account_submit(request: Request) -> Response:
    form, account = await _account_form(request)
    if account is None:
        return _to_signin()
    try:
        updated = get_service(request).accounts.update_preferences(
            account.id, language=_text(form, "language") or None,
            timezone=_text(form, "timezone") or None,
            mail_mode=_text(form, "mail_mode") or None,
            display_name=_text(form, "display_name") or None)
    except InvalidInput as refusal:
        return _account_render(request, account, status_code=422, error=str(refusal))
    response = RedirectResponse("/account", status_code=303)
    # The pages read the reader's language from this cookie first (web/i18n.py).
    response.set_cookie("scriba_lang", updated.language, path="/", samesite="lax",
                        max_age=365 * 86400)
    return response


def _seat_tokens(request: Request, account: Any) -> list[dict[str, Any]]:
    seats = get_service(request).seats
    return [{"game": game, "player": role.player,
             "tokens": [t for t in seats.tokens(game, role.player) if not t["revoked"]]}
            for game, role in seats.games_of(account.id) if role.player]


@router.post("/account/tokens")
async def token_new(request: Request) -> Response:
    """A new personal API token for one of the account's seats, shown once."""
    form, account = await _account_form(request)
    if account is None:
        return _to_signin()
    seats = get_service(request).seats
    game = _text(form, "game")
    role = seats.role(account.id, game) if game else None
    if role is None or role.player is None:
        raise HTTPException(403, "You have no seat as a player in that game.")
    token = seats.new_token(game, role.player, _text(form, "label")[:200])
    return _account_render(request, account, status_code=201,
                           new_token={"game": game, "player": role.player, "token": token})


@router.post("/account/tokens/revoke")
async def token_revoke(request: Request) -> Response:
    form, account = await _account_form(request)
    if account is None:
        return _to_signin()
    try:
        token_id = int(_text(form, "token_id"))
    except ValueError:
        raise HTTPException(400, "Which token?") from None
    mine = {t["id"] for seat in _seat_tokens(request, account) for t in seat["tokens"]}
    if token_id not in mine:
        raise HTTPException(404, "You have no such token.")
    get_service(request).seats.revoke_token(token_id=token_id)
    return RedirectResponse("/account", status_code=303)


# --- sessions and passwords ----------------------------------------------------------------
@router.post("/account/password")
async def password_change(request: Request) -> Response:
    """A new password, the current one given: every other session of the account ends."""
    form, account = await _account_form(request)
    if account is None:
        return _to_signin()
    try:
        # Guessing the current password from a stolen session is a sign-in attempt too.
        counted = await _in_thread(signin_throttled, request, account.email)
    except HTTPException as refusal:
        return _account_render(request, account, status_code=refusal.status_code,
                               password_error=str(refusal.detail))
    try:
        await _in_thread(lambda: accounts_of(request).change_password(
            account.id, _text(form, "current_password"), _text(form, "new_password"),
            common.reader_language(request), web_session(request).id))
    except (InvalidInput, NotAllowed) as refusal:
        return _account_render(request, account, status_code=422, password_error=str(refusal))
    accounts_of(request).limits.give_back(counted)
    _ = _gettext(request)
    done = _("Your password is changed; your other sessions are signed out.")
    return common.redirect_with_flash("/account", done, True)


@router.post("/account/sessions/end")
async def session_end(request: Request) -> Response:
    """Sign out one session of the account (this one too, if it is chosen)."""
    form, account = await _account_form(request)
    if account is None:
        return _to_signin()
    chosen = _text(form, "session_id")
    if chosen == web_session(request).id:
        end_session(request)
        return RedirectResponse("/", status_code=303)
    if not accounts_of(request).end_session(session_id=chosen[:64], account_id=account.id):
        raise HTTPException(404, _gettext(request)("You have no such session."))
    return RedirectResponse("/account", status_code=303)


@router.post("/account/sessions/end-all")
async def sessions_end_all(request: Request) -> Response:
    """Sign out everywhere: every session of the account, this one included."""
    _form_values, account = await _account_form(request)
    if account is None:
        return _to_signin()
    accounts_of(request).end_sessions(account.id)
    end_session(request)
    return RedirectResponse("/", status_code=303)


def _reset_link(request: Request) -> Any:
    """The link's address: $SCRIBA_PUBLIC_URL when set, else the request's own. Set it in
    production: the Host header is the client's to choose, and a link mailed to someone
    else must not point wherever the asker likes."""
    base = (os.environ.get("SCRIBA_PUBLIC_URL") or str(request.base_url)).rstrip("/")
    return lambda token: f"{base}/password-reset/{token}"


@router.get("/password-reset", response_class=HTMLResponse)
def reset_ask_page(request: Request) -> Response:
    return _render(request, "auth/reset_ask.html", sent=False)


@router.post("/password-reset")
async def reset_ask(request: Request) -> Response:
    """Mail a reset link to the address's account, if there is one; the answer is the same
    whether there is or not."""
    form = await _form(request)
    email = _text(form, "email")[:320]
    await _in_thread(lambda: accounts_of(request).request_password_reset(
        email=email, link=_reset_link(request)))
    return _render(request, "auth/reset_ask.html", sent=True)


def _reset_page(request: Request, token: str, status_code: int = 200,
                error: str | None = None) -> Response:
    """The form for a new password, or why the link does not work."""
    try:
        account = accounts_of(request).password_reset(token=token,
                                                    language=common.reader_language(request))
    except (NotFound, NotAllowed) as refusal:
        account, error = None, str(refusal)
        status_code = 404 if isinstance(refusal, NotFound) else 410
    page = _render(request, "auth/reset.html", status_code=status_code, account=account,
                   token=token if account is not None else "", error=error)
    page.headers["Referrer-Policy"] = "no-referrer"  # the link is a secret
    return page


@router.get("/password-reset/{token}", response_class=HTMLResponse)
def reset_page(request: Request, token: str) -> Response:
    return _reset_page(request, token)


@router.post("/password-reset/{token}")
async def reset_submit(request: Request, token: str) -> Response:
    """Set the new password (once): every session of the account ends, this browser is
    signed in anew."""
    form = await _form(request)
    try:
        account = await _in_thread(lambda: accounts_of(request).reset_password(
            token=token, password=_text(form, "password"),
            language=common.reader_language(request)))
    except InvalidInput as refusal:
        return _reset_page(request, token, status_code=422, error=str(refusal))
    except (NotFound, NotAllowed):
        return _reset_page(request, token)
    start_session(request, account.id)
    _ = _gettext(request)
    done = _("Your new password is set; every other session of your account is signed out.")
    return common.redirect_with_flash("/account", done, True)


async def _in_thread(fn: Any, *args: Any) -> Any:
    # Password hashing and database work must not stall the event loop.
    from starlette.concurrency import run_in_threadpool
    return await run_in_threadpool(fn, *args)

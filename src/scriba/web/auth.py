"""Who is asking: sign-in sessions, API tokens, CSRF, sign-in rate limits; the sign-in,
sign-out, invitation and preferences pages.

For the pages — what to use:

- ``get_service(request)`` (alias ``service_from``): the service of this app. It is a
  :class:`~scriba.web.app.LockedService`: every call about a game holds that game's lock,
  so its cached state is never read half-way through a decision; other games go on.
  Call it from sync (``def``) routes, which FastAPI runs in its thread pool.
- ``current_account(request) -> Account | None``: the signed-in account (session cookie) or
  the account behind ``Authorization: Bearer TOKEN``. ``Account`` has ``id, email,
  display_name, language, timezone, mail_mode``. ``service.accounts.role(account.id, game)``
  gives ``Role(kind="officer"|"player"|"reader", player)``.
- ``csrf_token(request) -> str``: the session's CSRF token; put it in every form as
  ``<input type="hidden" name="csrf_token" value="…">``.
- ``check_csrf(request, form)``: raises ``NotAllowed`` when the form's ``csrf_token`` (or
  the ``X-CSRF-Token`` header) is missing or forged. Every router mounted by
  :func:`scriba.web.app.create_app` also runs :func:`csrf_protect` on every POST, PUT,
  PATCH and DELETE, so a form without the token is refused (403) before the route runs.
- ``require_account(request)``: a dependency that answers 401 without a session.
- ``scriba.web.templating.templates``: a ``Jinja2Templates`` on the pages' environment.
- Routes here (templates in ``templates/auth/``, rendered through ``pages.common.render``):
  ``GET/POST /signin`` (``?next=`` local paths only), ``POST /signout``,
  ``GET/POST /invitations/{token}``, ``GET/POST /account`` (name, language, time zone, mail
  mode; sets the ``scriba_lang`` cookie), ``POST /account/tokens`` (a new token, shown
  once), ``POST /account/tokens/revoke``. Link an invitation as ``/invitations/{token}``.

Sessions are Starlette's signed cookies (itsdangerous; HttpOnly, SameSite=Lax, Secure when
served over https), holding only the account id and the CSRF token. Failed sign-ins are
counted in the database per address and per client IP, so every server process shares the
limit.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from scriba.service.errors import InvalidInput, NotAllowed, NotFound, ServiceError

SESSION_ACCOUNT = "account"
SESSION_CSRF = "csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# Failed sign-ins allowed within the window, per address and per client address.
SIGNIN_WINDOW = timedelta(minutes=15)
SIGNIN_PER_EMAIL = 5
SIGNIN_PER_IP = 20

router = APIRouter(include_in_schema=False)


# --- the service and who is asking ---------------------------------------------------------
def get_service(request: Request) -> Any:
    return request.app.state.service


service_from = get_service


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def token_identity(request: Request) -> tuple[Any, str, str] | None:
    """(account or None, game, player) of the request's bearer token, cached per request."""
    if "token_identity" not in request.scope.setdefault("state", {}):
        token = bearer_token(request)
        identity = get_service(request).accounts.token_identity(token) if token else None
        request.scope["state"]["token_identity"] = identity
    return request.scope["state"]["token_identity"]


def _session(request: Request) -> dict[str, Any]:
    # Requests without the session middleware (a bare test app) have no session.
    return request.session if "session" in request.scope else {}


def current_account(request: Request) -> Any:
    """The account of the session, else of the bearer token; None for an anonymous reader."""
    cached = request.scope.setdefault("state", {})
    if "account" in cached:
        return cached["account"]
    account = None
    account_id = _session(request).get(SESSION_ACCOUNT)
    if isinstance(account_id, int):
        try:
            account = get_service(request).accounts.account(account_id)
        except NotFound:  # the account is gone: forget the session
            _session(request).pop(SESSION_ACCOUNT, None)
    if account is None:
        identity = token_identity(request)
        account = identity[0] if identity else None
    cached["account"] = account
    return account


def require_account(request: Request) -> Any:
    account = current_account(request)
    if account is None:
        raise HTTPException(401, "Sign in first.", headers={"WWW-Authenticate": "Bearer"})
    return account


# --- CSRF ----------------------------------------------------------------------------------
def csrf_token(request: Request) -> str:
    session = _session(request)
    token = session.get(SESSION_CSRF)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        if "session" in request.scope:
            session[SESSION_CSRF] = token
    return token


def check_csrf(request: Request, form: Any = None) -> None:
    """Refuse (NotAllowed) a request whose form field or header lacks the session's token."""
    expected = _session(request).get(SESSION_CSRF)
    given = request.headers.get(CSRF_HEADER)
    if given is None and form is not None:
        value = form.get(CSRF_FIELD)
        given = value if isinstance(value, str) else None
    if not isinstance(expected, str) or not given or \
            not secrets.compare_digest(expected.encode(), given.encode("utf-8", "replace")):
        raise NotAllowed("The form has expired or did not come from this site; reload the "
                         "page and try again.")


async def csrf_protect(request: Request) -> None:
    """Dependency for page routers: every unsafe method must carry the CSRF token.

    A request authenticated only by a bearer token is not a browser's form and has no
    ambient credentials to abuse, so it passes."""
    if request.method not in UNSAFE_METHODS:
        return
    if bearer_token(request) is not None and SESSION_ACCOUNT not in _session(request):
        return
    form = None
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        try:
            form = await request.form()
        except Exception as error:  # malformed multipart: a bad request, not our fault
            raise HTTPException(400, "The form could not be read.") from error
    try:
        check_csrf(request, form)
    except NotAllowed as refusal:
        raise HTTPException(403, str(refusal)) from None


# --- sign-in rate limit --------------------------------------------------------------------
def client_ip(request: Request) -> str:
    # uvicorn rewrites request.client from X-Forwarded-For only for trusted proxies
    # (--forwarded-allow-ips), so a client cannot pick its own address here.
    return request.client.host if request.client else "unknown"


def signin_throttled(request: Request, email: str) -> bool:
    accounts = get_service(request).accounts
    return (accounts.recent_failures("email:" + email.strip().lower(), SIGNIN_WINDOW)
            >= SIGNIN_PER_EMAIL or
            accounts.recent_failures("ip:" + client_ip(request), SIGNIN_WINDOW)
            >= SIGNIN_PER_IP)


def sign_in(request: Request, email: str, password: str) -> Any:
    """The account, or an HTTPException: 429 when throttled, 401 for a wrong password."""
    if signin_throttled(request, email):
        raise HTTPException(429, "Too many failed sign-ins; wait a quarter of an hour and "
                                 "try again.", headers={"Retry-After": "900"})
    account = get_service(request).accounts.authenticate(email, password)
    if account is None:
        get_service(request).accounts.note_failure("email:" + email.strip().lower()[:320],
                                                   "ip:" + client_ip(request))
        raise HTTPException(401, "Wrong e-mail address or password.")
    start_session(request, account.id)
    return account


def start_session(request: Request, account_id: int) -> None:
    session = _session(request)
    session.clear()  # a new session id and CSRF token: no fixation across sign-in
    session[SESSION_ACCOUNT] = account_id
    session[SESSION_CSRF] = secrets.token_urlsafe(32)
    request.scope.setdefault("state", {}).pop("account", None)


def safe_next(target: str | None) -> str:
    """Only a path on this site: never ``//evil``, a scheme, or a backslash trick."""
    if not target or not target.startswith("/") or target.startswith("//") \
            or "\\" in target or any(ord(c) < 32 for c in target):
        return "/"
    return target


# --- pages ---------------------------------------------------------------------------------
def _render(request: Request, template: str, status_code: int = 200,
            **values: Any) -> HTMLResponse:
    from scriba.web.pages import common  # the pages' rendering: base layout, language, reader
    reader = common.reader_for(request)
    reader.csrf = csrf_token(request)
    return common.render(request, template, reader, status_code=status_code, **values)


async def _form(request: Request) -> Any:
    await csrf_protect(request)
    return await request.form()


def _text(form: Any, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


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
    _session(request).clear()
    return RedirectResponse("/", status_code=303)


@router.get("/invitations/{token}", response_class=HTMLResponse)
def invitation_page(request: Request, token: str) -> Response:
    try:
        invitation = get_service(request).accounts.invitation(token)
    except NotFound as missing:
        return _render(request, "auth/invitation.html", status_code=404, invitation=None,
                       token="", error=str(missing))
    error = "This invitation has already been used." if invitation.used else None
    return _render(request, "auth/invitation.html", invitation=invitation, token=token,
                   error=error)


@router.post("/invitations/{token}")
async def invitation_accept(request: Request, token: str) -> Response:
    form = await _form(request)
    accounts = get_service(request).accounts
    try:
        invitation = accounts.invitation(token)
        account = await _in_thread(accounts.accept_invitation, token,
                                   _text(form, "password"),
                                   _text(form, "display_name") or None)
    except ServiceError as refusal:
        status = 404 if isinstance(refusal, NotFound) else \
            403 if isinstance(refusal, NotAllowed) else 422
        shown = None if isinstance(refusal, NotFound) else accounts.invitation(token)
        return _render(request, "auth/invitation.html", status_code=status,
                       invitation=shown, token=token if shown else "", error=str(refusal))
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
    """The account page: its games, and each seat's personal tokens."""
    return _render(request, "auth/account.html", status_code=status_code, account=account,
                   error=error, games=get_service(request).accounts.games_of(account.id),
                   seats=_seat_tokens(request, account), **values)


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
    accounts = get_service(request).accounts
    return [{"game": game, "player": role.player,
             "tokens": [t for t in accounts.tokens(game, role.player) if not t["revoked"]]}
            for game, role in accounts.games_of(account.id) if role.player]


@router.post("/account/tokens")
async def token_new(request: Request) -> Response:
    """A new personal API token for one of the account's seats, shown once."""
    form, account = await _account_form(request)
    if account is None:
        return _to_signin()
    accounts = get_service(request).accounts
    game = _text(form, "game")
    role = accounts.role(account.id, game) if game else None
    if role is None or role.player is None:
        raise HTTPException(403, "You have no seat as a player in that game.")
    token = accounts.new_token(game, role.player, _text(form, "label")[:200])
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
    get_service(request).accounts.revoke_token(token_id=token_id)
    return RedirectResponse("/account", status_code=303)


async def _in_thread(fn: Any, *args: Any) -> Any:
    # Password hashing and database work must not stall the event loop.
    from starlette.concurrency import run_in_threadpool
    return await run_in_threadpool(fn, *args)

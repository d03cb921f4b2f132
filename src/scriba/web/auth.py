"""Who is asking: sign-in sessions, API tokens, CSRF, sign-in rate limits; the sign-in,
sign-out, invitation, account and password-reset pages.

For the pages — what to use:

- ``get_service(request)`` (alias ``service_from``): the service of this app. It is a
  :class:`~scriba.web.app.LockedService`: every call about a game holds that game's lock,
  so its cached state is never read half-way through a decision; other games go on.
  Call it from sync (``def``) routes, which FastAPI runs in its thread pool.
- ``current_account(request) -> Account | None``: the signed-in account (the session
  cookie) only. ``Account`` has ``id, email, display_name, language, timezone,
  mail_mode``. ``service.accounts.role(account.id, game)`` gives
  ``Role(kind="officer"|"player"|"reader", player)``. A bearer token is for the API alone
  (:func:`token_identity`, read by :mod:`scriba.web.api`): pages ignore it.
- ``csrf_token(request) -> str``: the CSRF token of the session (or of an anonymous
  visitor: its own cookie); put it in every form as
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
  mode; sets the ``scriba_lang`` cookie), ``POST /account/password``,
  ``POST /account/sessions/end`` and ``…/end-all``, ``POST /account/tokens`` (a new token,
  shown once), ``POST /account/tokens/revoke``, ``GET/POST /password-reset`` and
  ``GET/POST /password-reset/{token}``. Link an invitation as ``/invitations/{token}``.

Sessions are rows in the database (``web_sessions``): the ``scriba_session`` cookie holds
only a random 256-bit key (HttpOnly, SameSite=Lax, Secure when the request came over TLS —
uvicorn takes the scheme from a trusted proxy's X-Forwarded-Proto — or with
``$SCRIBA_HTTPS``), the row the account, the CSRF token and the expiry. Signing out, a
password change and the loss of a seat end the row, so every server process sees the end
at once. An anonymous visitor's CSRF token (the sign-in form's) is a random cookie of its
own, ``scriba_csrf``. :class:`SessionCookies` writes the cookies the routes ask for.
Sign-in attempts are counted in the database per address and per client IP, so every
server process shares the limit.
"""

from __future__ import annotations

import os
import re
import secrets
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import MutableHeaders

from scriba.service.accounts import SESSION_DAYS
from scriba.service.errors import InvalidInput, NotAllowed, NotFound, ServiceError

SESSION_COOKIE = "scriba_session"  # a signed-in browser: the random key of its session
CSRF_COOKIE = "scriba_csrf"        # an anonymous visitor's CSRF token (login CSRF)
_COOKIES = "scriba.cookies"        # in the ASGI scope: the cookies to set on the answer
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

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


def _accounts(request: Request) -> Any:
    """The accounts, without a game's lock: sessions and passwords are no game's (and the
    locked service would name a lock after a call's first text, here a cookie's key)."""
    service = get_service(request)
    return getattr(service, "unlocked", service).accounts


def _state(request: Request) -> dict[str, Any]:
    return request.scope.setdefault("state", {})


def token_identity(request: Request) -> tuple[Any, str, str] | None:
    """(account or None, game, player) of the request's bearer token, cached per request.
    For the API only: a token acts as its one seat (game and player) there, nowhere else."""
    if "token_identity" not in _state(request):
        token = bearer_token(request)
        identity = get_service(request).accounts.token_identity(token) if token else None
        _state(request)["token_identity"] = identity
    return _state(request)["token_identity"]


def web_session(request: Request) -> Any:
    """The live session of the request's cookie (a WebSession), cached per request; None
    without one, or when it was ended (then the browser is told to forget the cookie)."""
    state = _state(request)
    if "web_session" not in state:
        key = request.cookies.get(SESSION_COOKIE)
        found = _accounts(request).web_session(key) if key else None
        if key and found is None:
            _set_cookie(request, SESSION_COOKIE, None)
        state["web_session"] = found
    return state["web_session"]


def current_account(request: Request) -> Any:
    """The signed-in account; None for anyone else. A bearer token is never a sign-in: the
    account pages and every page outside /api/ treat its bearer as anonymous."""
    found = web_session(request)
    return found.account if found is not None else None


def require_account(request: Request) -> Any:
    account = current_account(request)
    if account is None:
        raise HTTPException(401, "Sign in first.", headers={"WWW-Authenticate": "Bearer"})
    return account


# --- cookies -------------------------------------------------------------------------------
def _set_cookie(request: Request, name: str, value: str | None,
                max_age: int | None = None) -> None:
    """Ask :class:`SessionCookies` to set (``None``: delete) a cookie on the answer."""
    request.scope.setdefault(_COOKIES, {})[name] = (value, max_age)


def _cookie_header(name: str, value: str | None, max_age: int | None, secure: bool) -> str:
    carrier = Response()  # Starlette's own Set-Cookie formatting
    if value is None:
        carrier.delete_cookie(name, path="/", secure=secure, httponly=True, samesite="lax")
    else:
        carrier.set_cookie(name, value, max_age=max_age, path="/", secure=secure,
                           httponly=True, samesite="lax")
    return carrier.headers["set-cookie"]


class SessionCookies:
    """ASGI middleware: the cookies the routes asked for (:func:`_set_cookie`) on the
    answer — HttpOnly, SameSite=Lax, Secure when the request came over TLS (the scheme
    uvicorn set, from X-Forwarded-Proto of a trusted proxy) or when ``https_only``."""

    def __init__(self, app: Any, https_only: bool = False) -> None:
        self.app = app
        self.https_only = https_only

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        wanted: dict[str, tuple[str | None, int | None]] = {}
        scope[_COOKIES] = wanted
        secure = self.https_only or scope.get("scheme") == "https"

        async def send_with_cookies(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and wanted:
                headers = MutableHeaders(scope=message)
                for name, (value, max_age) in wanted.items():
                    headers.append("set-cookie", _cookie_header(name, value, max_age, secure))
            await send(message)

        await self.app(scope, receive, send_with_cookies)


# --- CSRF ----------------------------------------------------------------------------------
def _anonymous_csrf(request: Request) -> str | None:
    token = _state(request).get("anonymous_csrf") or request.cookies.get(CSRF_COOKIE)
    return token if isinstance(token, str) and 32 <= len(token) <= 64 else None


def csrf_token(request: Request) -> str:
    """The session's CSRF token; an anonymous visitor's own (made on first need)."""
    found = web_session(request)
    if found is not None:
        return str(found.csrf)
    token = _anonymous_csrf(request)
    if token is None:
        token = secrets.token_urlsafe(32)
        _state(request)["anonymous_csrf"] = token
        _set_cookie(request, CSRF_COOKIE, token)  # for the browser's lifetime
    return token


def check_csrf(request: Request, form: Any = None) -> None:
    """Refuse (NotAllowed) a request whose form field or header lacks the token of its
    session (or, signed out, of its anonymous cookie)."""
    found = web_session(request)
    expected = found.csrf if found is not None else _anonymous_csrf(request)
    given = request.headers.get(CSRF_HEADER)
    if given is None and form is not None:
        value = form.get(CSRF_FIELD)
        given = value if isinstance(value, str) else None
    if not isinstance(expected, str) or not given or \
            not secrets.compare_digest(expected.encode(), given.encode("utf-8", "replace")):
        raise NotAllowed("The form has expired or did not come from this site; reload the "
                         "page and try again.")


async def csrf_protect(request: Request) -> None:
    """Dependency for page routers: every unsafe method must carry the CSRF token (a
    bearer token is no exception: pages are not the API)."""
    if request.method not in UNSAFE_METHODS:
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
    # uvicorn rewrites request.client from X-Forwarded-For only for the proxies named by
    # `scriba serve --forwarded-allow-ips`, so a client cannot pick its own address here.
    return request.client.host if request.client else "unknown"


def signin_throttled(request: Request, email: str) -> list[str]:
    """Count this attempt, per address and per client, before any password is checked
    (so attempts racing each other count too): the counters it filled. A 429 saying when
    to try again if it is one too many (scriba.service.ratelimit: growing waits, never
    a lockout)."""
    from scriba.service.ratelimit import RateLimited
    from scriba.web.app import rate_limit_sentence, reader_language
    try:
        return get_service(request).accounts.limits.signin(email, client_ip(request))
    except RateLimited as refusal:
        raise HTTPException(429, rate_limit_sentence(refusal, reader_language(request)),
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


def start_session(request: Request, account_id: int) -> None:
    """Sign this browser in: a new session (new key, new CSRF token: nothing from before
    carries over, so no fixation); the browser's previous session ends."""
    accounts = _accounts(request)
    previous = web_session(request)
    if previous is not None:
        accounts.end_session(session_id=previous.id)
    key, session = accounts.start_session(account_id, client_of(request))
    _set_cookie(request, SESSION_COOKIE, key, max_age=SESSION_DAYS * 86400)
    _state(request)["web_session"] = session


def end_session(request: Request) -> None:
    """Sign this browser out: its session ends in the database, the cookie goes."""
    found = web_session(request)
    if found is not None:
        _accounts(request).end_session(session_id=found.id)
    _set_cookie(request, SESSION_COOKIE, None)
    _state(request)["web_session"] = None


_BROWSERS = (("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"),
             ("Chrome/", "Chrome"), ("Safari/", "Safari"))
_SYSTEMS = (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
            ("Windows", "Windows"), ("Mac OS X", "macOS"), ("Linux", "Linux"))


def client_of(request: Request) -> str:
    """A short name of the browser ("Firefox, Linux"; "curl/8.5.0") for the list of
    sessions: never the whole User-Agent, which is long and the client's to make up."""
    agent = request.headers.get("user-agent", "")[:512]
    browser = next((name for mark, name in _BROWSERS if mark in agent), None)
    system = next((name for mark, name in _SYSTEMS if mark in agent), None)
    if browser or system:
        return ", ".join(part for part in (browser, system) if part)
    first = re.match(r"[A-Za-z0-9._\-]+(?:/[A-Za-z0-9._\-]+)?", agent)
    return first.group(0)[:60] if first else ""


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


def _reader_language(request: Request) -> str:
    from scriba.web.pages import common
    return str(common.reader_for(request).language)


def _gettext(request: Request) -> Any:
    from scriba.web import i18n
    return i18n.gettext_for(_reader_language(request))


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
                                   _text(form, "display_name") or None,
                                   _reader_language(request))
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
    """The account page: its games, each seat's personal tokens, its sessions."""
    this = web_session(request)
    return _render(request, "auth/account.html", status_code=status_code, account=account,
                   error=error, games=get_service(request).accounts.games_of(account.id),
                   seats=_seat_tokens(request, account),
                   sessions=_accounts(request).sessions(account.id),
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


# --- sessions and passwords ----------------------------------------------------------------
@router.post("/account/password")
async def password_change(request: Request) -> Response:
    """A new password, the current one given: every other session of the account ends."""
    from scriba.web.pages import common
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
        await _in_thread(lambda: _accounts(request).change_password(
            account.id, _text(form, "current_password"), _text(form, "new_password"),
            _reader_language(request), web_session(request).id))
    except (InvalidInput, NotAllowed) as refusal:
        return _account_render(request, account, status_code=422, password_error=str(refusal))
    _accounts(request).limits.give_back(counted)
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
    if not _accounts(request).end_session(session_id=chosen[:64], account_id=account.id):
        raise HTTPException(404, _gettext(request)("You have no such session."))
    return RedirectResponse("/account", status_code=303)


@router.post("/account/sessions/end-all")
async def sessions_end_all(request: Request) -> Response:
    """Sign out everywhere: every session of the account, this one included."""
    _form_values, account = await _account_form(request)
    if account is None:
        return _to_signin()
    _accounts(request).end_sessions(account.id)
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
    await _in_thread(lambda: _accounts(request).request_password_reset(
        email=email, link=_reset_link(request)))
    return _render(request, "auth/reset_ask.html", sent=True)


def _reset_page(request: Request, token: str, status_code: int = 200,
                error: str | None = None) -> Response:
    """The form for a new password, or why the link does not work."""
    try:
        account = _accounts(request).password_reset(token=token,
                                                    language=_reader_language(request))
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
    from scriba.web.pages import common
    form = await _form(request)
    try:
        account = await _in_thread(lambda: _accounts(request).reset_password(
            token=token, password=_text(form, "password"),
            language=_reader_language(request)))
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

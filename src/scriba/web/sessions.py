"""Who is asking: sign-in sessions, API tokens and CSRF, for the API, the pages and the
sign-in pages (:mod:`scriba.web.auth`) alike.

- ``get_service(request)`` (alias ``service_from``): the service of this app (its parts:
  ``commands``, ``reads``, ``accounts``, ``seats``, ...). Its reads keep their own
  states of the games (the last committed version, :mod:`scriba.service.readstate`) and
  never take a game's write lock: a page never holds a vote back.
  Call it from sync (``def``) routes, which FastAPI runs in its thread pool.
- ``current_account(request) -> Account | None``: the signed-in account (the session
  cookie) only. ``Account`` has ``id, email, display_name, language, timezone,
  mail_mode``. ``service.seats.role(account.id, game)`` gives
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

Sessions are rows in the database (``web_sessions``): the ``scriba_session`` cookie holds
only a random 256-bit key (HttpOnly, SameSite=Lax, Secure when the request came over TLS —
uvicorn takes the scheme from a trusted proxy's X-Forwarded-Proto — or with
``$SCRIBA_HTTPS``), the row the account, the CSRF token and the expiry. Signing out, a
password change and the loss of a seat end the row, so every server process sees the end
at once. An anonymous visitor's CSRF token (the sign-in form's) is a random cookie of its
own, ``scriba_csrf``. :class:`SessionCookies` writes the cookies the routes ask for.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import Response
from starlette.datastructures import MutableHeaders

from scriba.service.accounts import SESSION_DAYS
from scriba.service.errors import NotAllowed

SESSION_COOKIE = "scriba_session"  # a signed-in browser: the random key of its session
CSRF_COOKIE = "scriba_csrf"        # an anonymous visitor's CSRF token (login CSRF)
_COOKIES = "scriba.cookies"        # in the ASGI scope: the cookies to set on the answer
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


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


def accounts_of(request: Request) -> Any:
    """The accounts: people, their sessions and passwords."""
    return get_service(request).accounts


def _state(request: Request) -> dict[str, Any]:
    return request.scope.setdefault("state", {})


def token_identity(request: Request) -> tuple[Any, str, str] | None:
    """(account or None, game, player) of the request's bearer token, cached per request.
    For the API only: a token acts as its one seat (game and player) there, nowhere else."""
    if "token_identity" not in _state(request):
        token = bearer_token(request)
        identity = get_service(request).seats.token_identity(token) if token else None
        _state(request)["token_identity"] = identity
    return _state(request)["token_identity"]


def web_session(request: Request) -> Any:
    """The live session of the request's cookie (a WebSession), cached per request; None
    without one, or when it was ended (then the browser is told to forget the cookie)."""
    state = _state(request)
    if "web_session" not in state:
        key = request.cookies.get(SESSION_COOKIE)
        found = accounts_of(request).web_session(key) if key else None
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


# --- the client --------------------------------------------------------------------------
def client_ip(request: Request) -> str:
    # uvicorn rewrites request.client from X-Forwarded-For only for the proxies named by
    # `scriba serve --forwarded-allow-ips`, so a client cannot pick its own address here.
    return request.client.host if request.client else "unknown"


def start_session(request: Request, account_id: int) -> None:
    """Sign this browser in: a new session (new key, new CSRF token: nothing from before
    carries over, so no fixation); the browser's previous session ends."""
    accounts = accounts_of(request)
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
        accounts_of(request).end_session(session_id=found.id)
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

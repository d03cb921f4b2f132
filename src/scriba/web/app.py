"""The web application: pages, the JSON API and sign-in on one service.

``create_app(service_or_db_url)`` builds a FastAPI app. Around it, from the outside in:

- :class:`SecurityHeaders` puts a Content-Security-Policy (no inline script or style, no
  framing), ``X-Frame-Options``, ``Referrer-Policy`` and ``X-Content-Type-Options`` on
  every answer, the error pages and refusals below included;
- :class:`BodyGuard` refuses bodies over the size limit (413), bodies that do not arrive
  within :data:`BODY_SECONDS` (408) and JSON that is not UTF-8 or nests deeper than
  :data:`JSON_DEPTH` (400) before anything parses them;
- :class:`scriba.web.sessions.SessionCookies` sets the cookies of sign-in sessions (a random
  key; the session itself is a row in the database);
- the routers: the API (``/api/v1``, the only part in the OpenAPI document), the sign-in
  pages, and every ``router`` of the modules in :mod:`scriba.web.pages`, each behind the
  CSRF check;
- the deadlines task (``run_deadlines=True``, as ``scriba serve`` does) fires real-clock
  games' timers on time.

Every :class:`~scriba.service.errors.ServiceError` becomes a 4xx: a problem document
(RFC 9457, ``application/problem+json``) under ``/api/``, a short page elsewhere.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import importlib
import logging
import os
import pkgutil
import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from scriba.service import Service, open_service
from scriba.service.errors import (
    GameExists,
    InvalidInput,
    NotAllowed,
    NotFound,
    RequestIdReused,
    ServiceError,
    UnknownGame,
)
from scriba.service.ratelimit import RateLimited
from scriba.web import (
    api,
    auth,
    deadlines,
    health,
    reads_api,
    recipes_api,
    sessions,
    unsubscribe,
)
from scriba.web.cases_api import router as cases_router
from scriba.web.forks_api import router as forks_router
from scriba.web.labtests_api import router as labtests_router
from scriba.web.pages import common
from scriba.web.problems import TITLES, problem

log = logging.getLogger("scriba.web")
BODY_LIMIT = 2 * 1024 * 1024   # bytes of one request body (a command is at most ~1 MB)
JSON_DEPTH = 32                # nesting of a JSON body; the service allows 8 in arguments
BODY_SECONDS = 30.0            # for a whole request body to arrive (a slow one holds a worker)
DOCS_PATH = "/api/v1/docs"
# The pages load only their own style sheet and script; nothing inline, no frames.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
# Swagger UI (the API's docs page, no player data) is served from the files of the
# swagger-ui-bundle-v2 package (works offline, no CDN), with one inline script (allowed by
# its hash); it injects inline styles. This path only.
DOCS_CSP = ("default-src 'self'; script-src 'self' {hashes}; "
            "style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; object-src 'none'; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
DOCS_FILES = "/api/v1/docs-files"  # Swagger UI's script, style sheet and icon
SECURITY_HEADERS = {"x-frame-options": "DENY", "referrer-policy": "same-origin",
                    "x-content-type-options": "nosniff"}
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


# --- hostile bodies ------------------------------------------------------------------------
def json_depth_ok(body: bytes, limit: int = JSON_DEPTH) -> bool:
    """False if brackets outside strings nest deeper than ``limit`` (a linear scan, so a
    crafted body cannot make the JSON parser recurse until it fails)."""
    depth, in_string, escaped = 0, False, False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


class SecurityHeaders:
    """ASGI middleware: the security headers on every answer (a route's own win)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") == DOCS_PATH:
            await self._docs(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _with_security(message.get("headers") or [], CSP)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    async def _docs(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The docs page whole (a kilobyte), so its inline script's hash goes in its CSP."""
        start: dict[str, Any] = {}
        body = bytearray()

        async def keep(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))

        await self.app(scope, receive, keep)
        hashes = " ".join(
            "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
            for script in _INLINE_SCRIPT.findall(bytes(body)))
        start["headers"] = _with_security(start.get("headers") or [],
                                          DOCS_CSP.format(hashes=hashes))
        await send(start)
        await send({"type": "http.response.body", "body": bytes(body)})


def _with_security(headers: Any, policy: str) -> list[tuple[bytes, bytes]]:
    headers = list(headers)
    present = {name.lower() for name, _ in headers}
    wanted = {"content-security-policy": policy, **SECURITY_HEADERS}
    headers += [(name.encode(), value.encode()) for name, value in wanted.items()
                if name.encode() not in present]
    return headers


class BodyGuard:
    """ASGI middleware: bounded bodies that arrive in time; JSON bodies valid UTF-8 and
    shallow. (Uvicorn bounds the time between requests, not the time a body takes.)"""

    def __init__(self, app: Any, limit: int = BODY_LIMIT,
                 seconds: float = BODY_SECONDS) -> None:
        self.app = app
        self.limit = limit
        self.seconds = seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"0")
        try:
            too_big = int(declared) > self.limit
        except ValueError:
            await problem(400, "Bad request", "The Content-Length header is not a number."
                          )(scope, receive, send)
            return
        if too_big:
            await self._too_big(scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.seconds):
                body = await self._read(receive)
        except TimeoutError:
            late = problem(408, "Request timeout", "The request body did not arrive within "
                           f"{self.seconds:g} seconds.")
            late.headers["Connection"] = "close"  # what is still coming is not a request
            await late(scope, receive, send)
            return
        if body is None:  # the client left
            return
        if len(body) > self.limit:
            await self._too_big(scope, receive, send)
            return
        content_type = headers.get(b"content-type", b"").lower()
        if b"json" in content_type and body:
            refusal = None
            try:
                bytes(body).decode("utf-8")
            except UnicodeDecodeError:
                refusal = "The request body is not valid UTF-8 text."
            if refusal is None and not json_depth_ok(bytes(body)):
                refusal = f"The JSON body nests more than {JSON_DEPTH} levels deep."
            if refusal:
                await problem(400, "Bad request body", refusal)(scope, receive, send)
                return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, receive: Any) -> bytearray | None:
        """The body, cut short once it is over the limit; None if the client left."""
        body = bytearray()
        more = True
        while more and len(body) <= self.limit:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            more = message.get("more_body", False)
        return body

    async def _too_big(self, scope: Any, receive: Any, send: Any) -> None:
        await problem(413, "Request body too large",
                      f"A request body may have at most {self.limit} bytes."
                      )(scope, receive, send)


# --- errors --------------------------------------------------------------------------------
def status_of(error: Exception) -> int:
    if isinstance(error, UnknownGame | NotFound):
        return 404
    if isinstance(error, NotAllowed):
        return 403
    if isinstance(error, GameExists | RequestIdReused):
        return 409
    if isinstance(error, InvalidInput):
        return 422
    return 400


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _answer(request: Request, status: int, detail: str,
            headers: dict[str, str] | None = None, **extra: Any) -> Response:
    if _is_api(request):
        response = problem(status, TITLES.get(status, "Error"), detail, **extra)
    else:
        response = _error_page(request, status, detail)
    if headers:
        response.headers.update(headers)
    return response


def _error_page(request: Request, status: int, detail: str) -> Response:
    """The pages' own error page (their layout, the reader's language), else plain text."""
    try:
        reader = common.reader_for(request)
        return common.render(request, "error.html", reader, status_code=status,
                             message=detail, status=status)
    except Exception:  # noqa: BLE001 - an error page must never fail in turn
        return PlainTextResponse(detail, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(request: Request, error: ServiceError) -> Response:
        return _answer(request, status_of(error), str(error))

    @app.exception_handler(RateLimited)
    async def rate_limited(request: Request, error: RateLimited) -> Response:
        sentence = common.rate_limit_sentence(error, common.reader_language(request))
        return _answer(request, 429, sentence,
                       headers={"Retry-After": str(error.retry_after)})

    async def http_error(request: Request, error: Exception) -> Response:
        return _answer(request, getattr(error, "status_code", 400),
                       str(getattr(error, "detail", "")),
                       headers=getattr(error, "headers", None))

    # FastAPI's HTTPException is Starlette's; routing raises Starlette's for 404 and 405.
    app.add_exception_handler(StarletteHTTPException, http_error)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> Response:
        problems = []
        for item in error.errors()[:10]:
            where = ".".join(str(part) for part in item.get("loc", ()))
            problems.append(f"{where}: {item.get('msg', 'invalid')}")
        return _answer(request, 422, "; ".join(problems) or "The request is not valid.",
                       errors=[{"loc": [str(p) for p in item.get("loc", ())],
                                "msg": str(item.get("msg", ""))}
                               for item in error.errors()[:10]])

    @app.exception_handler(RecursionError)
    async def too_deep(request: Request, error: RecursionError) -> Response:
        return _answer(request, 400, "The request is nested too deeply.")

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, error: ValueError) -> Response:
        # A value the service's own parsing refused (a malformed time, say).
        return _answer(request, 422, str(error)[:500] or "A value is not valid.")

    @app.exception_handler(LookupError)
    async def lookup(request: Request, error: LookupError) -> Response:
        # The store's own UnknownGame, should a path reach it unwrapped.
        return _answer(request, 404, "Not found.")


# --- the app -------------------------------------------------------------------------------
def _page_routers() -> list[Any]:
    try:
        package = importlib.import_module("scriba.web.pages")
    except ImportError:
        return []
    routers = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"scriba.web.pages.{info.name}")
        router = getattr(module, "router", None)
        if router is not None and hasattr(router, "routes"):
            routers.append(router)
    return routers


def serve_docs(app: FastAPI) -> None:
    """The API's docs page (Swagger UI) at ``DOCS_PATH``, its files from the installed
    swagger-ui-bundle-v2 package: nothing is loaded from elsewhere."""
    from swagger_ui_bundle import swagger_ui_path

    @app.get(DOCS_PATH, include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "", title="Scriba – API",
            swagger_js_url=f"{DOCS_FILES}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_FILES}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_FILES}/favicon-32x32.png")

    app.mount(DOCS_FILES, StaticFiles(directory=str(swagger_ui_path)), name="docs-files")


class HeadAsGet:
    """ASGI middleware: HEAD answered as GET is, headers and all, without the body (a link
    checker, a feed reader asking whether anything changed). FastAPI registers a GET route
    for GET alone; the API's schema stays as it is."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body"):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


def create_app(service_or_db_url: Service | str | None = None, *,
               https_only: bool | None = None, run_deadlines: bool = False,
               body_limit: int = BODY_LIMIT, tick_interval: float | None = None,
               body_seconds: float = BODY_SECONDS) -> FastAPI:
    """The ASGI app on a service (or a new one on the database URL; $SCRIBA_DB by default).

    ``https_only`` marks the session cookie Secure even on a request that came over plain
    http (it is Secure anyway on one that came over https, or through a trusted proxy's
    X-Forwarded-Proto); by default it follows $SCRIBA_HTTPS. ``body_seconds``: the time a request
    body may take to arrive."""
    owned = not isinstance(service_or_db_url, Service)
    raw = service_or_db_url if not owned else open_service(service_or_db_url)
    # Reads take no game's write lock: they keep their own states (service/readstate.py).
    service = raw
    if https_only is None:
        https_only = os.environ.get("SCRIBA_HTTPS", "") not in ("", "0", "false", "no")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = None
        if run_deadlines:
            task = asyncio.create_task(deadlines.run(service, tick_interval))
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if owned:
                raw.close()

    app = FastAPI(title="Scriba", version="1", lifespan=lifespan,
                  openapi_url="/api/v1/openapi.json", docs_url=None,
                  redoc_url=None,
                  description="Games of Nomic: read them, and act as your player with a "
                              "personal token (`Authorization: Bearer TOKEN`, from "
                              "`scriba token GAME PLAYER`).")
    app.state.service = service
    install_error_handlers(app)
    app.include_router(reads_api.router)  # reading a game; first, as when it was api's
    app.include_router(api.router)
    app.include_router(recipes_api.router)
    app.include_router(cases_router)  # cases and corrections
    app.include_router(forks_router)  # a game forked at a point
    app.include_router(labtests_router)  # a proposal tested by the lab
    api.install_openapi(app)
    app.include_router(auth.router)
    app.include_router(health.router)  # /healthz, /metrics: no player data
    app.include_router(unsubscribe.router, include_in_schema=False)  # its token is the proof
    for router in _page_routers():
        app.include_router(router, include_in_schema=False,
                           dependencies=[Depends(sessions.csrf_protect)])
    serve_docs(app)
    static = os.path.join(os.path.dirname(__file__), "static")
    if os.path.isdir(static):
        app.mount("/static", StaticFiles(directory=static), name="static")
    app.add_middleware(sessions.SessionCookies, https_only=https_only)
    app.add_middleware(health.CommandTiming, observe=service.metrics.observe_command)
    app.add_middleware(HeadAsGet)
    app.add_middleware(BodyGuard, limit=body_limit, seconds=body_seconds)
    app.add_middleware(SecurityHeaders)  # outermost: the guard's refusals carry them too
    return app

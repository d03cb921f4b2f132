"""What every page needs: the service, the reader, their language and time zone, rendering.

The pages read the signed-in account, the CSRF token and the service through
:mod:`scriba.web.sessions`.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from scriba.service import errors
from scriba.service.ratelimit import RateLimited
from scriba.web import i18n, sessions

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
STATIC = Path(__file__).resolve().parent.parent / "static"
FLASH_COOKIE = "scriba_flash"


@dataclass
class Reader:
    """Who reads a page: nobody, or an account with its seat in this game."""

    account: Any = None
    player: str | None = None
    officer: bool = False
    language: str = i18n.DEFAULT_LANGUAGE
    timezone: str = "UTC"
    csrf: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def signed_in(self) -> bool:
        return self.account is not None


def service_of(request: Request) -> Any:
    return sessions.get_service(request)


def account_of(request: Request) -> Any:
    try:
        return sessions.current_account(request)
    except errors.ServiceError:
        return None


def csrf_of(request: Request) -> str:
    return sessions.csrf_token(request)


def check_csrf(request: Request, form: Any) -> None:
    """The sessions' CSRF check; raises NotAllowed on a missing or forged token."""
    sessions.check_csrf(request, form)


def reader_for(request: Request, game_id: str | None = None,
               game_language: str | None = None) -> Reader:
    service = service_of(request)
    account = account_of(request)
    reader = Reader(account=account)
    if account is not None and game_id is not None:
        role = service.seats.role(account.id, game_id)
        reader.player = role.player
        reader.officer = role.kind == "officer"
    reader.language = (i18n.supported(request.query_params.get("lang"))
                       or i18n.supported(request.cookies.get(i18n.LANGUAGE_COOKIE))
                       or i18n.supported(getattr(account, "language_chosen", None))
                       or i18n.supported(game_language)
                       or i18n.supported(getattr(account, "language", None))
                       or i18n.DEFAULT_LANGUAGE)
    reader.timezone = (getattr(account, "timezone", None)
                       or request.cookies.get(i18n.TIMEZONE_COOKIE) or "UTC")
    if str(i18n.zone(reader.timezone)) != reader.timezone:
        reader.timezone = "UTC"
    reader.csrf = csrf_of(request) if account is not None else ""
    return reader


def reader_language(request: Request) -> str:
    """The reader's language as the pages choose it (?lang=, cookie, account)."""
    try:
        return reader_for(request).language
    except Exception:  # noqa: BLE001 - a refusal must be told even if this fails
        return "en"


def rate_limit_sentence(refusal: RateLimited, language: str) -> str:
    """Why, and when to try again, in the reader's language."""
    _ = i18n.gettext_for(language)
    now = datetime.now(UTC)
    wait = i18n.countdown((now + timedelta(seconds=refusal.retry_after)).isoformat(), now,
                          language)
    if refusal.what == "new_game":
        return _("You have started as many games as a day allows; try again %(wait)s.",
                 wait=wait)
    return _("Too many sign-in attempts; try again %(wait)s.", wait=wait)


# --- links: absolute paths on the server, relative ones in the static site ---------------
def game_path(game_id: str, *parts: str) -> str:
    return "/games/" + "/".join([quote(game_id, safe="")] + [quote(p, safe="") for p in parts])


class Links:
    """Builds the address of a page; the static site overrides it with relative files."""

    static_site = False

    def __call__(self, path: str, **query: Any) -> str:
        query = {k: v for k, v in query.items() if v not in (None, "")}
        return path + ("?" + urlencode(query) if query else "")

    def asset(self, name: str) -> str:
        return "/static/" + name


def environment() -> Environment:
    env = _ENV.get("env")
    if env is None:
        env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                          autoescape=select_autoescape(["html", "xml", "atom"]),
                          trim_blocks=True, lstrip_blocks=True)
        from scriba.web.pages import format as formatting
        formatting.install(env)
        _ENV["env"] = env
    return env


_ENV: dict[str, Environment] = {}


def context(reader: Reader, links: Links | None = None, **values: Any) -> dict[str, Any]:
    language = reader.language
    return {
        "reader": reader, "lang": language, "languages": i18n.LANGUAGES,
        "_": i18n.gettext_for(language), "ngettext": i18n.ngettext_for(language),
        "url": links or Links(), "game_path": game_path,
        "when": lambda text, form="medium": i18n.when(text, language, reader.timezone, form),
        "countdown": lambda deadline, now=None: i18n.countdown(deadline, now, language),
        "language_name": lambda code: i18n.language_name(code, language),
        **values,
    }


def render_text(template: str, ctx: dict[str, Any]) -> str:
    return environment().get_template(template).render(ctx)


def render(request: Request, template: str, reader: Reader, status_code: int = 200,
           **values: Any) -> HTMLResponse:
    ctx = context(reader, request=request, path=request.url.path,
                  flash=take_flash(request), **values)
    response = HTMLResponse(render_text(template, ctx), status_code=status_code)
    if ctx["flash"]:
        response.delete_cookie(FLASH_COOKIE, path="/")
    return response


def page_status(error: Exception) -> int:
    """A refusal's status on a page: 404 for what does not exist, 403 for rights, else 400."""
    if isinstance(error, errors.UnknownGame | errors.NotFound):
        return 404
    return 403 if isinstance(error, errors.NotAllowed) else 400


def error_page(request: Request, reader: Reader, error: Exception,
               **values: Any) -> HTMLResponse:
    """A refusal as a page, in the reader's language (``values``: the game, its language)."""
    status = page_status(error)
    return render(request, "error.html", reader, status_code=status,
                  message=errors.told(error, reader.language), status=status, **values)


# --- flash messages: the outcome of a form, shown once after the redirect ----------------
FLASH_BYTES = 3500  # browsers drop a cookie over 4 KB: a long outcome is shortened


def flash_value(message: str, accepted: bool) -> str:
    value = quote(("1" if accepted else "0") + message)
    if len(value) <= FLASH_BYTES:
        return value
    cut = message
    while len(value) > FLASH_BYTES:
        cut = cut[: min(len(cut) - 1, len(cut) * FLASH_BYTES // len(value))]
        value = quote(("1" if accepted else "0") + cut + " …")
    return value


def redirect_with_flash(target: str, message: str, accepted: bool) -> RedirectResponse:
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(FLASH_COOKIE, flash_value(message, accepted), path="/",
                        httponly=True, samesite="lax", max_age=120)
    return response


def take_flash(request: Request) -> dict[str, Any] | None:
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    text = unquote(raw)
    return {"accepted": text[:1] == "1", "message": text[1:]}


# --- exactly once per form: a request id in the form, the service's own ----------------
def new_request_id() -> str:
    """A form's request id: the same form sent twice is decided once (by the service,
    which keeps each player's request ids per game)."""
    return secrets.token_urlsafe(16)


def safe_markup(html: str) -> Markup:
    """HTML we built ourselves from escaped parts (Pygments output, diffs)."""
    return Markup(html)

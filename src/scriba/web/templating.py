"""One template environment for every page: the pages' (i18n, formatting filters).

``templates`` is a Starlette ``Jinja2Templates`` on that environment, for routes that prefer
``templates.TemplateResponse(request, name, context)``; autoescaping is on for .html.
"""

from __future__ import annotations

from pathlib import Path

from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, select_autoescape

TEMPLATES = Path(__file__).resolve().parent / "templates"


def environment() -> Environment:
    try:
        from scriba.web.pages.common import environment as pages_environment
    except ImportError:  # the API alone, without the pages
        return Environment(loader=FileSystemLoader(str(TEMPLATES)),
                           autoescape=select_autoescape(["html", "xml", "atom"]))
    return pages_environment()


templates = Jinja2Templates(env=environment())

"""The guide for rule authors (scriba/guide/writing-rules*.md, installed with the package),
shown in the reader's language: every propose form links to it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from markdown_it import MarkdownIt
from markupsafe import Markup

from scriba.web.pages import common

router = APIRouter()
# Package data: there in a checkout and in an installed wheel alike.
DOCS = Path(str(resources.files("scriba"))) / "guide"
GUIDE_PATH = "/guide/writing-rules"


def guide_file(language: str) -> Path | None:
    """The guide in ``language`` (English when it has none), if the docs are there."""
    for name in (f"writing-rules.{language}.md", "writing-rules.md"):
        if (DOCS / name).is_file():
            return DOCS / name
    return None


@router.get(GUIDE_PATH, response_class=HTMLResponse)
def guide_page(request: Request) -> Response:
    reader = common.reader_for(request)
    found = guide_file(reader.language)
    if found is None:
        return common.render(request, "guide.html", reader, status_code=404, body=None)
    # Our own text, rendered without raw HTML (markdown-it comes with rich).
    html = MarkdownIt("commonmark", {"html": False}).enable("table").render(
        found.read_text(encoding="utf-8"))
    return common.render(request, "guide.html", reader, body=Markup(html))

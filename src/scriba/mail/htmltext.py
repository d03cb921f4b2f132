"""HTML-only letters turned into plain text with the standard library's HTMLParser.

Why not html2text: it is GPL-3, and it writes Markdown (``**bold**``, ``vote\\_letter``
with escaped underscores) which would change the very words a command is made of. Letters
need only their lines: block elements become line breaks, quoted blocks become ``>`` lines
(so the quote stripper drops them), scripts and styles are skipped.
"""

from __future__ import annotations

from html.parser import HTMLParser

_BREAKS = {"br", "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
           "table", "ul", "ol", "hr", "section", "article", "header", "footer"}
_SKIP = {"script", "style", "head", "title"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]
        self.skip = 0
        self.quote = 0
        self.pre = 0

    def _newline(self) -> None:
        if self.lines[-1].strip() or self.pre:
            self.lines.append("")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag == "blockquote":
            self._newline()
            self.quote += 1
        elif tag == "pre":
            self._newline()
            self.pre += 1
        elif tag in _BREAKS:
            self._newline()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "blockquote":
            self.quote = max(0, self.quote - 1)
            self._newline()
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._newline()
        elif tag in _BREAKS:
            self._newline()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if not self.pre:
            data = " ".join(data.split()) if data.strip() else (" " if data else "")
        parts = data.split("\n")
        for i, part in enumerate(parts):
            if i:
                self.lines.append("")
            if self.quote and not self.lines[-1]:
                self.lines[-1] = "> " * self.quote
            self.lines[-1] += part


def html_to_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    lines = [line.rstrip() for line in parser.lines]
    return "\n".join(line.lstrip() if not line.startswith(">") else line
                     for line in lines).strip() + "\n"

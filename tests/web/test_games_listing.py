"""The games' listing of a host with many games comes in pages, each read from the
games' rows (never their logs), with links that work without JavaScript. A real server."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
from serving import Server

from scriba.bench.host import copies_of_a_game


def test_a_host_with_many_games_lists_them_in_pages(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'many.db'}"
    copies_of_a_game(db_url, 120)  # one played game and 119 copies made by hand
    server = Server(db_url)
    try:
        seen: list[str] = []
        address = server.url + "/"
        pages = 0
        while address:
            page = httpx.get(address, timeout=30)
            assert page.status_code == 200
            pages += 1
            seen += re.findall(r'<h2><a href="[^"]*/games/([^"/]+)"', page.text)
            later = re.search(r'<a rel="next" href="([^"]+)">', page.text)
            address = server.url + html.unescape(later.group(1)) if later else ""
        assert pages == 3 and len(seen) == 120 and len(set(seen)) == 120
        assert "model" in seen and "copy0118" in seen
        # A page number typed by hand that is not one shows the first page.
        for wrong in ("abc", "0", "9" * 5000, "-3"):
            assert httpx.get(server.url + "/", params={"page": wrong},
                             timeout=30).status_code == 200
    finally:
        server.stop()

"""Stable names and the smaller promises of issue 19 (findings 7 and 9), over real HTTP
against a ``scriba serve`` process and through the real CLI.

A game of Suber's Nomic in which Anna's proposal (labelled "bonus", titled "Unanimity
kept") amends rule 203, which rule 108 then renumbers to 301, and Bruno's untitled one
follows: old addresses lead to the rule it became, the chronicle links "Rule 203" there,
revisions count from 1, a proposal is named one way. Then: HEAD, the API's docs from files
of our own, the published site without sign-in prompts or dead links, the account link, an
invitation named by the game's name that a signed-in invitee takes without their password,
``scriba advance`` on a real clock, and an imported copy's own name.
"""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
import pytest
from serving import SCRIBA, Server, csrf_of, published, signed_in

from scriba.service import open_service

GAME = "sn"
NAME = "Stable names"
PASSWORD = "a-long-password-1"
PEOPLE = {"Anna": "sn-anna@example.org", "Bruno": "sn-bruno@example.org",
          "Carla": "sn-carla@example.org"}
OFFICER = "sn-scriba@example.org"
DARIO = "sn-dario@example.org"  # has an account, no seat: he is invited
AMENDED = "A rule-change is adopted if and only if the voters are unanimously in favour of it."


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("stable")
    db_url = f"sqlite:///{folder / 'stable.db'}"
    service = open_service(db_url)
    commands = service.commands
    commands.create_game("suber", game_id=GAME, name=NAME, players=list(PEOPLE),
                         start="2026-03-01T10:00:00Z")
    done = [commands.perform(GAME, "Anna", "propose", {
        "label": "bonus", "title": "Unanimity kept",
        "changes": [{"amend": {"rule": "203", "text": AMENDED}}]})]
    done += [commands.perform(GAME, p, "vote", {"proposal": "bonus", "choice": "for"})
             for p in PEOPLE]
    done.append(commands.perform(GAME, "Anna", "roll", {}))
    done.append(commands.perform(GAME, "Bruno", "propose", {"changes": [
        {"enact": {"title": "Kites", "text": "Players may bring kites."}}]}))
    assert all(o.accepted for o in done), [o.message for o in done]
    for player, email in PEOPLE.items():
        service.accounts.create_account(email, player, PASSWORD)
        service.seats.seat(GAME, player, email)
    service.accounts.create_account(DARIO, "Dario", PASSWORD)
    officer = service.accounts.create_account(OFFICER, "Scriba", PASSWORD)
    service.seats.set_officer(GAME, officer.id)
    commands.create_game("equinomic", game_id="live", players=["Anna", "Bruno"],
                         clock="real")
    service.close()
    server = Server(db_url, log=folder / "server.log")
    try:
        yield {"server": server, "base": server.url, "db": db_url, "folder": folder}
    finally:
        server.stop()


def get(site, path: str, **options) -> httpx.Response:
    return httpx.get(site["base"] + path, timeout=30, **options)


# --- finding 7: names that stay ---------------------------------------------------------
def test_an_old_rule_number_leads_to_the_rule_it_became(site) -> None:
    moved = get(site, f"/games/{GAME}/rules/203")
    assert moved.status_code == 303
    assert moved.headers["location"] == f"/games/{GAME}/rules/301"
    page = get(site, f"/games/{GAME}/rules/203", follow_redirects=True)
    assert page.status_code == 200 and "Votes required" in page.text and AMENDED in page.text
    api = get(site, f"/api/v1/games/{GAME}/rules/203")
    assert api.status_code == 303
    assert api.headers["location"] == f"/api/v1/games/{GAME}/rules/301"
    assert get(site, f"/games/{GAME}/rules/999").status_code == 404  # never a rule: 404


def test_the_chronicle_links_an_old_number_to_the_rule_it_became(site) -> None:
    page = get(site, f"/games/{GAME}/chronicle").text
    links = re.findall(r'<a href="([^"]+)">(Rule \d+)</a>', page)
    assert (f"/games/{GAME}/rules/301", "Rule 203") in links  # "Rule 203 is amended …"
    assert (f"/games/{GAME}/rules/108", "rule 108") in [(h, t.lower()) for h, t in links] \
        or f'<a href="/games/{GAME}/rules/108">rule 108</a>' in page  # "… by rule 108."
    for href, _text in links:
        assert get(site, href, follow_redirects=True).status_code == 200, href


def test_revisions_count_from_one_and_a_renumbering_is_no_revision(site) -> None:
    page = get(site, f"/games/{GAME}/rules/301").text
    headings = [re.sub(r"<[^>]+>", "", h).strip()
                for h in re.findall(r"<h3>(.*?)</h3>", page, re.DOTALL)]
    assert headings == ["Revision 1: initial rule", "Revision 2: amended",
                        "Renumbered (was rule 203)"], headings
    assert "In force, revision 2." in page
    rules = get(site, f"/games/{GAME}/rules").text
    assert "Revision 0" not in rules


def test_a_proposal_is_named_one_way_its_number_with_its_title(site) -> None:
    page = get(site, f"/games/{GAME}/chronicle").text
    texts = [re.sub(r"<[^>]+>", "", li) for li in re.findall(r"<li class=\"k-.*?</li>", page,
                                                              re.DOTALL)]
    told = " ".join(texts)
    assert "Proposal 301 “Unanimity kept” is adopted" in told
    assert "by proposal 301 “Unanimity kept” of Anna" in told
    assert "bonus" not in told  # the label is not a second name
    assert "Bruno submits proposal 302: enact a new rule, “Kites”." in told
    for path in (f"/games/{GAME}", f"/games/{GAME}/proposals", f"/games/{GAME}/proposals/302"):
        shown = get(site, path).text
        assert not re.search(r"302\s*–\s*<", shown), path  # an untitled one: no dangling dash
        assert ">bonus<" not in shown, path
    assert "<h1>Proposal 301: " in get(site, f"/games/{GAME}/proposals/bonus").text


# --- finding 9: the smaller items ---------------------------------------------------------
@pytest.mark.parametrize("path", ["/", f"/games/{GAME}", f"/games/{GAME}/chronicle",
                                  f"/games/{GAME}/rules/301", f"/games/{GAME}/feed.atom",
                                  "/signin", "/api/v1/docs"])
def test_head_answers_like_get(site, path: str) -> None:
    got = get(site, path)
    head = httpx.head(site["base"] + path, timeout=30)
    assert got.status_code == head.status_code == 200
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.content == b""


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src", "action") and value:
                self.links.append(value)


def links_of(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return parser.links


def test_the_api_docs_load_nothing_from_elsewhere(site) -> None:
    page = get(site, "/api/v1/docs")
    assert page.status_code == 200
    urls = links_of(page.text) + re.findall(r"url: '([^']+)'", page.text)
    assert any(u.endswith(".js") for u in urls) and any(u.endswith(".css") for u in urls)
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), url
        assert get(site, url).status_code == 200, url
    policy = page.headers["content-security-policy"]
    assert "http" not in policy  # no host but this one may serve a script or a style


def test_the_published_site_has_no_sign_in_and_no_dead_link(site, tmp_path: Path) -> None:
    out = tmp_path / "site"
    pages = [p for p in published(GAME, site["db"], out) if p.suffix == ".html"]
    assert len(pages) > 10
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert not re.search(r"sign in|signin|/account", html, re.IGNORECASE), page
        for link in links_of(html):
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, (page, link)  # all relative
            if not parts.path:
                continue  # "#fragment" on the same page
            target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            assert target.is_file(), (page, link)


def test_the_account_is_linked_from_the_header_when_signed_in(site) -> None:
    anna = signed_in(site["base"], PEOPLE["Anna"], PASSWORD)
    header = anna.get(f"/games/{GAME}").text.split("</header>", 1)[0]
    assert 'href="/account"' in header
    assert anna.get("/account").status_code == 200
    assert 'href="/account"' not in get(site, f"/games/{GAME}").text  # signed out: no


def test_an_invitation_names_the_game_and_a_signed_in_invitee_needs_no_password(site) -> None:
    officer = signed_in(site["base"], OFFICER, PASSWORD)
    made = officer.post(f"/games/{GAME}/officer/invite", data={
        "csrf_token": csrf_of(officer.get(f"/games/{GAME}/officer").text),
        "email": DARIO, "player": "Dario"})
    link = re.search(r'value="(http[^"]+/invitations/[^"]+)"', made.text).group(1)
    path = urlsplit(link).path
    signed_out = get(site, path).text
    assert f"You are invited to play {NAME} as Dario." in signed_out
    assert 'type="password"' in signed_out  # signed out: the password proves who you are
    dario = signed_in(site["base"], DARIO, PASSWORD)
    page = dario.get(path).text
    assert f"You are invited to play {NAME} as Dario." in page
    assert 'type="password"' not in page
    taken = dario.post(path, data={"csrf_token": csrf_of(page), "display_name": "Dario"})
    assert taken.status_code == 303 and taken.headers["location"] == f"/games/{GAME}"
    assert "player Dario" in dario.get(f"/games/{GAME}").text


def test_advance_refuses_a_real_clock_with_a_sentence(site) -> None:
    before = subprocess.run([SCRIBA, "log", "live", "--db", site["db"]], capture_output=True,
                            text=True, timeout=60, check=True).stdout
    done = subprocess.run([SCRIBA, "advance", "live", "--by", "3d", "--db", site["db"]],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "runs on the real clock" in said and "Nothing was moved." in said
    after = subprocess.run([SCRIBA, "log", "live", "--db", site["db"]], capture_output=True,
                           text=True, timeout=60, check=True).stdout
    assert after == before


def test_an_imported_copy_gets_its_own_name(site, tmp_path: Path) -> None:
    export = tmp_path / "sn.jsonl"
    subprocess.run([SCRIBA, "export", "game", GAME, "--out", str(export), "--db", site["db"]],
                   check=True, capture_output=True, timeout=60)
    db = f"sqlite:///{tmp_path / 'copies.db'}"
    for game, extra in (("sn", []), ("sn-2", []), ("sn-3", ["--name", "Friday rematch"])):
        subprocess.run([SCRIBA, "import", "game", str(export), "--game", game, *extra,
                        "--db", db], check=True, capture_output=True, timeout=120)
    service = open_service(db)
    try:
        names = {g: service.reads.status(g)["name"] for g in ("sn", "sn-2", "sn-3")}
    finally:
        service.close()
    assert names == {"sn": NAME, "sn-2": f"{NAME} (copy)", "sn-3": "Friday rematch"}

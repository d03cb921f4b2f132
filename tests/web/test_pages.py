"""The pages over real HTTP against a ``scriba serve`` process.

A game whose player, proposal label, title, text and code are hostile HTML is played
through the pages' own forms; every page must show that data escaped, a proposal page's
dry run must record nothing, and bad addresses get a 4xx page, never a 500.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest
from serving import SCRIBA, Server, csrf_of, signed_in

from scriba.service import open_service

EVE = "<b>Eve</b>"
LABEL = "<i>p1</i>"
TITLE = "<script>alert(1)</script>"
TEXT = "<img src=x onerror=alert(2)>"
CODE = "# </script><script>alert(3)</script>\ndef on_vote_cast(game, event):\n    return []\n"
# Addresses of their own: on PostgreSQL the database is shared with other test modules.
PEOPLE = {EVE: "pages-eve@example.org", "Anna": "pages-anna@example.org",
          "Bruno": "pages-bruno@example.org"}
OFFICER = "pages-scriba@example.org"
PASSWORD = "a-long-password-1"
GAME = "esc"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("pages")
    db_url = f"sqlite:///{folder / 'pages.db'}" if request.param == "sqlite" \
        else request.getfixturevalue("postgres_url")
    service = open_service(db_url)
    service.commands.create_game("equinomic", game_id=GAME, name="Partita <u>esc</u>",
                                 players=list(PEOPLE), start="2026-03-01T10:00:00Z")
    for player, email in PEOPLE.items():
        service.accounts.create_account(email, player, PASSWORD)
        service.seats.seat(GAME, player, email)
    service.commands.create_game("anderwelt", game_id="zeit", players=["Anna", "Bert"],
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z")
    service.commands.perform("zeit", "Max", "set_zat", {"days": 7})
    officer = service.accounts.create_account(OFFICER, "Scriba", PASSWORD)
    service.seats.set_officer(GAME, officer.id)
    service.close()
    server = Server(db_url, log=folder / "server.log")
    try:
        eve = signed_in(server.url, PEOPLE[EVE], PASSWORD)
        form = eve.get(f"/games/{GAME}").text
        answer = eve.post(f"/games/{GAME}/act/propose", data={
            "csrf_token": csrf_of(form), "request_id": "form-propose-1",
            "a_label": LABEL, "a_title": TITLE, "a_text": TEXT,
            "c_type": "enact", "c_title": TITLE, "c_text": TEXT, "c_code": CODE})
        assert answer.status_code == 303
        yield {"server": server, "db": db_url, "folder": folder, "eve": eve}
    finally:
        server.stop()


def log_length(db_url: str) -> int:
    service = open_service(db_url)
    try:
        return len(service.reads.log(GAME))
    finally:
        service.close()


def proposal_path() -> str:
    return f"/games/{GAME}/proposals/1"  # a label with "/" is addressed by its number


PAGES = ["/", f"/games/{GAME}", f"/games/{GAME}/rules", f"/games/{GAME}/rules/101",
         f"/games/{GAME}/proposals", f"/games/{GAME}/chronicle",
         f"/games/{GAME}/rules/diff?since=2026-03-01"]


def test_the_proposal_made_through_the_form_is_in_the_game(site) -> None:
    page = site["eve"].get(f"/games/{GAME}")
    assert page.status_code == 200
    # The flash of the POST-redirect-GET tells the outcome once.
    assert 'class="flash ok"' in page.text
    assert site["eve"].get(f"/games/{GAME}").text.count('class="flash') == 0
    # Named by its number and title (the label is on its own page), escaped.
    assert "1 – &lt;script&gt;alert(1)&lt;/script&gt;" in page.text


@pytest.mark.parametrize("path", [*PAGES, "PROPOSAL"])
def test_public_pages_are_readable_signed_out_and_escape_everything(site, path) -> None:
    path = proposal_path() if path == "PROPOSAL" else path
    page = httpx.get(site["server"].url + path, timeout=30)
    assert page.status_code == 200, page.text[:500]
    assert page.headers["content-type"].startswith("text/html")
    assert re.search(r'<html lang="(it|de|en)">', page.text)
    for raw in ("<script>alert", "<img src=x", "<b>Eve</b>", "<i>p1</i>", "<u>esc</u>"):
        assert raw not in page.text, (path, raw)
    assert "onerror=alert(2)" not in page.text or "&lt;img src=x onerror=alert(2)&gt;" in page.text


def test_proposal_page_shows_the_code_escaped_and_highlighted(site) -> None:
    page = httpx.get(site["server"].url + proposal_path(), timeout=30).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert 'class="code"' in page and "alert(3)" in page  # highlighted by Pygments
    assert "&lt;/script&gt;&lt;script&gt;alert(3)" in page
    assert "&lt;b&gt;Eve&lt;/b&gt;" in page


def test_dry_run_is_shown_and_records_nothing(site) -> None:
    before = log_length(site["db"])
    for _ in range(2):  # to a player of the game (tests/web/test_edges.py: only to them)
        page = site["eve"].get(proposal_path())
        assert page.status_code == 200
        assert 'class="dryrun"' in page.text
    assert log_length(site["db"]) == before


@pytest.mark.parametrize(("path", "status"), [
    (f"/games/{GAME}/rules?at=2000-01-01", 400),
    (f"/games/{GAME}/rules?at=not-a-date", 400),
    (f"/games/{GAME}/rules?seq=abc", 400),
    (f"/games/{GAME}/rules?seq=-3", 400),
    (f"/games/{GAME}/rules/diff", 400),
    (f"/games/{GAME}/rules/999", 404),
    (f"/games/{GAME}/proposals/nope", 404),
    ("/games/nope", 404),
    ("/games/nope/chronicle", 404),
    (f"/games/{GAME}/officer", 403),
])
def test_bad_addresses_get_a_page_with_the_reason(site, path, status) -> None:
    page = httpx.get(site["server"].url + path, timeout=30)
    assert page.status_code == status, page.text[:300]
    assert 'class="refusal"' in page.text


def test_before_the_start_the_page_says_so(site) -> None:
    page = httpx.get(site["server"].url + f"/games/{GAME}/rules?at=2000-01-01", timeout=30)
    assert "2026-03-01" in page.text  # the game's start, in the refusal


def test_feed_is_atom_with_escaped_text(site) -> None:
    answer = httpx.get(site["server"].url + f"/games/{GAME}/feed.atom", timeout=30)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/atom+xml")
    ns = {"a": "http://www.w3.org/2005/Atom"}
    root = ET.fromstring(answer.content)
    assert root.tag == "{http://www.w3.org/2005/Atom}feed"
    for required in ("a:title", "a:id", "a:updated"):
        assert root.find(required, ns) is not None
    entries = root.findall("a:entry", ns)
    assert entries
    for entry in entries:
        for required in ("a:id", "a:title", "a:updated", "a:content"):
            assert entry.find(required, ns) is not None
    texts = " ".join(e.find("a:content", ns).text or "" for e in entries)
    assert EVE in texts  # parsed back to the name: it was escaped in the XML
    assert b"<b>Eve</b>" not in answer.content


def test_a_vote_through_the_form_counts_once(site) -> None:
    anna = signed_in(site["server"].url, PEOPLE["Anna"], PASSWORD)
    page = anna.get(f"/games/{GAME}").text
    assert 'name="a_choice" value="favorevole"' in page  # the ruleset's own vote words
    token = csrf_of(page)
    before = log_length(site["db"])
    form = {"csrf_token": token, "request_id": "vote-anna-1", "a_proposal": LABEL,
            "a_choice": "favorevole"}
    first = anna.post(f"/games/{GAME}/act/vote", data=form)
    assert first.status_code == 303
    after_first = log_length(site["db"])
    assert after_first > before
    again = anna.post(f"/games/{GAME}/act/vote", data=form)  # the same form sent twice
    assert again.status_code == 303
    assert log_length(site["db"]) == after_first
    shown = anna.get(f"/games/{GAME}").text
    assert "favorevole" in shown and 'class="flash ok"' in shown


def test_forged_csrf_and_signed_out_posts_change_nothing(site) -> None:
    bruno = signed_in(site["server"].url, PEOPLE["Bruno"], PASSWORD)
    before = log_length(site["db"])
    forged = bruno.post(f"/games/{GAME}/act/vote", data={
        "csrf_token": "forged", "a_proposal": LABEL, "a_choice": "favorevole"})
    assert forged.status_code == 403
    anonymous = httpx.post(site["server"].url + f"/games/{GAME}/act/vote",
                           data={"a_proposal": LABEL, "a_choice": "favorevole"}, timeout=30)
    assert anonymous.status_code in (303, 403)
    assert log_length(site["db"]) == before


def test_a_refusal_comes_back_as_the_rules_sentence(site) -> None:
    bruno = signed_in(site["server"].url, PEOPLE["Bruno"], PASSWORD)
    token = csrf_of(bruno.get(f"/games/{GAME}").text)
    answer = bruno.post(f"/games/{GAME}/act/propose", data={
        "csrf_token": token, "request_id": "bruno-out-of-turn", "c_type": "repeal",
        "c_rule": "112"})
    # The page again (nothing was done: no redirect), the form as it was sent.
    assert answer.status_code == 400
    page = answer.text
    assert 'class="field-error"' in page
    assert "turno" in page  # equinomic's own refusal, in Italian
    assert '<option value="repeal" selected>' in page
    assert '<option value="112" selected>' in page


def test_language_choice_is_remembered_and_redirects_stay_here(site) -> None:
    client = httpx.Client(base_url=site["server"].url, timeout=30)
    answer = client.get("/language", params={"lang": "de", "next": f"/games/{GAME}"})
    assert answer.status_code == 303 and answer.headers["location"] == f"/games/{GAME}"
    page = client.get(f"/games/{GAME}").text
    assert '<html lang="de">' in page and "Was du jetzt tun kannst" in page
    assert '<p class="period" lang="it">' in page  # the rules' words stay Italian
    evil = client.get("/language", params={"lang": "it", "next": "//evil.example/"})
    assert evil.headers["location"] == "/"
    english = httpx.get(site["server"].url + f"/games/{GAME}", timeout=30,
                        cookies={"scriba_lang": "en"}).text
    assert "What you can do now" in english
    italian = httpx.get(site["server"].url + f"/games/{GAME}", timeout=30).text
    assert '<html lang="it">' in italian  # the game's language by default


def test_officer_invites_and_the_link_is_shown(site) -> None:
    officer = signed_in(site["server"].url, OFFICER, PASSWORD)
    page = officer.get(f"/games/{GAME}/officer")
    assert page.status_code == 200
    answer = officer.post(f"/games/{GAME}/officer/invite", data={
        "csrf_token": csrf_of(page.text), "email": "pages-dario@example.org",
        "player": "Dario"})
    assert answer.status_code == 200
    link = re.search(r'value="(http://[^"]+/invitations/[^"]+)"', answer.text)
    assert link, answer.text[:800]
    invitation = httpx.get(link.group(1), timeout=30)
    assert invitation.status_code == 200 and "Dario" in invitation.text


def test_publish_writes_a_static_site_with_relative_links(site, tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = subprocess.run([SCRIBA, "publish", GAME, "--out", str(out), "--db", site["db"]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pages = sorted(out.rglob("*.html"))
    names = {p.relative_to(out).as_posix() for p in pages}
    assert {"index.html", f"games/{GAME}/index.html", f"games/{GAME}/rules/index.html",
            f"games/{GAME}/rules/101/index.html", f"games/{GAME}/chronicle/index.html",
            f"games/{GAME}/proposals/index.html"} <= names
    assert (out / "games" / GAME / "feed.atom").is_file()
    # The hostile label becomes a file name that cannot leave the folder.
    assert f"games/{GAME}/proposals/1/index.html" in names
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "<script" not in text and "<b>Eve</b>" not in text
        for href in re.findall(r'(?:href|src)="([^"#]+)"', text):
            assert not href.startswith(("/", "http")), (page, href)
            assert (page.parent / href).resolve().is_file(), (page, href)
    ET.parse(out / "games" / GAME / "feed.atom")
    bad = subprocess.run([SCRIBA, "publish", "nope", "--out", str(tmp_path / "x"),
                          "--db", site["db"]], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and not (tmp_path / "x").exists()


def test_every_word_of_the_pages_is_translated() -> None:
    """Each ``_("…")`` of the templates and page modules has an Italian and a German text,
    and the placeholders survive the translation."""
    from scriba.web import i18n

    root = Path(i18n.__file__).parent
    pattern = re.compile(r"""_\(\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")
    sources = [*root.rglob("*.html"), *root.rglob("*.atom"), *root.rglob("*.py")]
    ids = {(m.group(1) if m.group(1) is not None else m.group(2)).replace("\\'", "'")
           .replace('\\"', '"') for f in sources for m in pattern.finditer(f.read_text())}
    assert len(ids) > 150
    for language in ("it", "de"):
        catalog = i18n.translations(language)
        missing = sorted(i for i in ids if catalog.gettext(i) == i and i not in SAME[language])
        assert not missing, (language, missing)
        for message in ids:
            assert set(re.findall(r"%\(\w+\)s", catalog.gettext(message))) == \
                set(re.findall(r"%\(\w+\)s", message)), (language, message)


# Words that are the same in the other language.
SAME = {"it": {"Password", "Account", "no"}, "de": {"Name", "Code", "Text", "optional"}}


def test_the_deadline_is_shown_in_the_readers_time_zone(site) -> None:
    base = site["server"].url
    utc = httpx.get(base + "/games/zeit", timeout=30).text
    assert "8. März 2026, 10:00:00" in utc and "in 7 Tagen" in utc
    berlin = httpx.get(base + "/games/zeit", timeout=30,
                       cookies={"scriba_tz": "Europe/Berlin"}).text
    assert "8. März 2026, 11:00:00 Mitteleuropäische Normalzeit" in berlin
    bogus = httpx.get(base + "/games/zeit", timeout=30,
                      cookies={"scriba_tz": "../../etc/passwd"}).text
    assert "8. März 2026, 10:00:00" in bogus  # an unknown zone falls back to UTC


HOSTILE_PATHS = [
    "/games/%00", f"/games/{GAME}/rules?at=9999999-01-01", f"/games/{GAME}/rules?at=" + "9" * 5000,
    f"/games/{GAME}/rules?seq=99999999999999999999999", f"/games/{GAME}/rules/%2e%2e",
    f"/games/{GAME}/chronicle?period=abc&kind=<script>&player=zzz",
    f"/games/{GAME}/chronicle?period=99999999999999999999", f"/games/{GAME}/proposals/%00",
    f"/games/{GAME}/proposals/" + "x" * 3000, f"/games/{GAME}/rules/diff?since=garbage",
    f"/games/{GAME}/rules?at=2026-02-30", "/games/%E2%80%AE/rules",
]


def test_hostile_addresses_never_break_a_page(site) -> None:
    for path in HOSTILE_PATHS:
        answer = httpx.get(site["server"].url + path, timeout=30)
        assert answer.status_code < 500, (path, answer.status_code)
        assert "<script>" not in answer.text


@pytest.mark.parametrize("fields", [
    {"a_label": "x", "c_yaml": "- [unclosed"},
    {"c_yaml": "42"},
    {"c_type": "amend", "c_rule": "../x", "c_text": "\x00"},
    {"c_yaml": "{a: " + "[" * 600 + "]" * 600 + "}"},
    {"a_label": "x" * 100_000, "c_type": "enact", "c_text": "t"},
])
def test_hostile_forms_get_a_refusal_not_an_error(site, fields) -> None:
    bruno = signed_in(site["server"].url, PEOPLE["Bruno"], PASSWORD)
    token = csrf_of(bruno.get(f"/games/{GAME}").text)
    before = log_length(site["db"])
    answer = bruno.post(f"/games/{GAME}/act/propose", data={"csrf_token": token, **fields})
    assert answer.status_code in (400, 413), answer.text[:300]
    if answer.status_code == 400:  # the form again, with the refusal
        assert 'class="field-error"' in answer.text
    # A refused command is recorded (command_refused) or nothing is: never an adoption.
    assert log_length(site["db"]) - before <= 1


def flash_of(answer: httpx.Response) -> str:
    from urllib.parse import unquote
    return unquote((answer.cookies.get("scriba_flash") or "").strip('"'))


def test_officer_forms_answer_and_refuse_others(site) -> None:
    # Last in this module: it adds a player and moves the game's clock.
    officer = signed_in(site["server"].url, OFFICER, PASSWORD)
    token = csrf_of(officer.get(f"/games/{GAME}/officer").text)
    before = log_length(site["db"])
    added = officer.post(f"/games/{GAME}/officer/player",
                         data={"csrf_token": token, "name": "Zoe"})
    assert added.status_code == 303 and flash_of(added).startswith("1")
    assert log_length(site["db"]) > before
    clock = officer.post(f"/games/{GAME}/officer/advance",
                         data={"csrf_token": token, "by": "1d"})
    assert clock.status_code == 303 and flash_of(clock).startswith("1")
    assert "2026-03-02" in flash_of(clock)
    vague = officer.post(f"/games/{GAME}/officer/advance",
                         data={"csrf_token": token, "by": "soon"})
    assert vague.status_code == 303 and flash_of(vague).startswith("0")
    unknown = officer.post(f"/games/{GAME}/officer/act/no_such_action",
                           data={"csrf_token": token, "request_id": "officer-act-1"})
    assert unknown.status_code == 303 and flash_of(unknown).startswith("0")
    forged = officer.post(f"/games/{GAME}/officer/player", data={"name": "Yan"})
    assert forged.status_code == 403
    eve = site["eve"]
    before = log_length(site["db"])
    refused = eve.post(f"/games/{GAME}/officer/player",
                       data={"csrf_token": csrf_of(eve.get(f"/games/{GAME}").text),
                             "name": "Yan"})
    assert refused.status_code == 403 and log_length(site["db"]) == before


def test_a_signed_in_person_starts_a_game_and_becomes_its_officer(site) -> None:
    base = site["server"].url
    signed_out = httpx.get(base + "/new-game", timeout=30, follow_redirects=False)
    assert signed_out.status_code == 303 and "/signin" in signed_out.headers["location"]
    eve = signed_in(base, PEOPLE[EVE], PASSWORD)
    page = eve.get("/new-game")
    assert page.status_code == 200 and 'value="anderwelt"' in page.text
    forged = eve.post("/new-game", data={"csrf_token": "forged", "ruleset": "suber",
                                         "game": "forged-game"})
    assert forged.status_code == 403
    taken = eve.post("/new-game", data={"csrf_token": csrf_of(page.text), "ruleset": "suber",
                                        "game": GAME})
    assert taken.status_code == 400
    assert GAME in taken.text and 'name="ruleset"' in taken.text  # the form again, with why
    started = eve.post("/new-game", data={"csrf_token": csrf_of(page.text),
                                          "ruleset": "suber", "game": "friends",
                                          "name": "Friends <b>", "clock": "simulated"})
    assert started.status_code == 303
    assert started.headers["location"] == "/games/friends/officer"
    officer = eve.get("/games/friends/officer")
    assert officer.status_code == 200 and "Friends &lt;b&gt;" in officer.text
    assert "forged-game" not in httpx.get(base + "/", timeout=30).text

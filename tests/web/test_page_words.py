"""Every word a player reads on the pages is a word for players, in their language.

A real ``scriba serve`` holds three games of bundled rulesets played a little (Equinomic in
Italian, Anderwelt in German, Suber in English: proposals open and closed, votes, rules
changed, an officer's action). The pages a player, an officer and a signed-out reader reach
are fetched by following the pages' own links, in Italian, German and English, and their
VISIBLE text (no tags, scripts or attribute values) is checked:

- no developer's word: no braces, ``[]``, ``None``, ``True``/``False``, ``null``, ISO
  timestamps, ``\\xa0`` written out, or identifiers such as ``turn_phase``;
- every interface word goes through the catalogs: a second server reads a pseudo-locale
  built at test time (the Italian catalogs with every translated piece wrapped in
  ``⟦…⟧``, through ``SCRIBA_LOCALE_DIR``), and any word outside the marks fails unless it is
  the game's own (inside an element carrying a ``lang`` attribute: rule titles and texts,
  the rules' status lines), a name or title the game was given, a number or a date.

The checks are HTTP-only (fast); the widths of the screen belong to the browser tests.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from babel import Locale
from babel.dates import get_day_names, get_month_names
from babel.messages.pofile import read_po, write_po
from serving import SCRIBA, Server, csrf_of, signed_in

from scriba.catalogs import DOMAINS
from scriba.service import open_service
from scriba.service.scenario import load_scenario, run_scenario

RULESETS = Path(__file__).resolve().parents[2] / "src" / "scriba" / "rulesets"
LOCALE = Path(__file__).resolve().parents[2] / "src" / "scriba" / "locale"
PASSWORD = "a-long-password-1"
PLAYER = "words-anna@example.org"  # Anna, a player of every game
OFFICER = "words-officer@example.org"
# (game id, scenario, steps played): proposals open and closed, votes, rules changed.
GAMES = [("parole", "equinomic/scenarios/basic.yaml", 99),
         ("woerter", "anderwelt/scenarios/grundregeln.yaml", 8),
         ("words", "suber/scenarios/amended_203.yaml", 9)]
MAX_PAGES = 40  # per game and reader: the crawl follows links, queries included
# Pages of what changed in play (an amended, renumbered rule; a rule enacted in play).
CHANGED = {"words": ["/games/words/rules/301", "/games/words/rules/203",
                     "/games/words/proposals/301"],
           "parole": ["/games/parole/rules/201", "/games/parole/proposals/1",
                      "/games/parole/recipes/bonus_for_adoption?fill=1&b_points=3"],
           "woerter": ["/games/woerter/rules/G.11", "/games/woerter/proposals/1",
                       "/games/woerter/rules/diff?since=2026-03-01"]}
PER_KIND = 6  # rules, proposals: the first few of each (their pages share one template)


# --- the game ----------------------------------------------------------------------------
def play(db_url: str) -> dict[str, list[str]]:
    """The three games, Anna's account seated in each, the officer's; their names."""
    service = open_service(db_url)
    names: dict[str, list[str]] = {}
    try:
        anna = service.accounts.create_account(PLAYER, "Anna", PASSWORD)
        officer = service.accounts.create_account(OFFICER, "Ufficiale", PASSWORD)
        for game, source, steps in GAMES:
            scenario = load_scenario(RULESETS / source)
            scenario = {**scenario, "steps": scenario["steps"][:steps], "expect": None}
            result = run_scenario(service.commands, scenario, game_id=game)
            assert not [e for e in result.errors if "refused" not in e], result.errors
            service.seats.seat(game, "Anna", PLAYER)
            service.seats.set_officer(game, officer.id)
        # An officer's action and a refused command, so the chronicle has them.
        service.commands.perform("woerter", "Max", "set_zat", {"days": 5})
        service.commands.perform("words", "Bruno", "roll", {})
        for game, _source, _steps in GAMES:
            names[game] = game_words(service, game)
        del anna
    finally:
        service.close()
    return names


def strings(value: object) -> list[str]:
    """Every string inside a structure of dicts and lists."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v)]
    return []


def game_words(service: object, game: str) -> list[str]:
    """What the game itself says, in its ruleset's language, inside our sentences: names,
    the ruleset's labels and vote words, titles, deadlines' names, the rules' refusals."""
    state = service.commands.load(game)
    words = service.reads.words(game, "it")
    said = [*state.players, *state.offices, *map(str, state.offices.values()), game,
            state.ruleset,
            str(state.name or "")]
    said += [*words.variables.values(), *words.offices.values(), *words.choices.values(),
             *words.assets.values(), *strings(words.action_texts),
             *words.timers.values(), *words.tally.values(),  # [labels.timers], [labels.tally]
             *strings(words.proposal_data)]
    said += [r["title"] for r in state.rules.values()]
    said += [str(p.get("title") or "") for p in state.proposals.values()]
    said += [str(c.get("title") or "") for p in state.proposals.values()
             for c in p.get("changes") or [] if isinstance(c, dict)]
    for event in service.reads.log(game):
        payload = event.get("payload") or {}
        if event["type"] == "timer_set":
            said.append(str(payload.get("name") or ""))
        elif event["type"] == "command_refused":
            said.append(str(payload.get("message") or ""))
    # A help's `code` is shown as code (data): the words around it are the game's too.
    said += [piece.strip() for s in said for piece in re.split(r"`[^`]*`", s) if "`" in s]
    return [s for s in said if s]


# --- visible text ------------------------------------------------------------------------
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
HIDDEN = {"script", "style", "head"}
# Rule code, dates and what a form field holds (a rule's text to amend): data, not words.
DATA = {"pre", "code", "time", "textarea"}


class Visible(HTMLParser):
    """The text a reader sees, as (text, own, data) pieces: ``own`` is False inside an
    element that names its ``lang`` (the game's own words) or holds data; ``data`` is True
    inside ``pre``/``code``/``time``/``textarea`` (rule code, dates, a form's content)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool, bool]] = []  # tag, hidden, own, data
        self.pieces: list[tuple[str, bool, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        hidden, own, data = (self.stack[-1][1:] if self.stack else (False, True, False))
        hidden = hidden or tag in HIDDEN and tag != "head"
        if tag != "html" and any(name == "lang" for name, _ in attrs) or tag in DATA:
            own = False
        data = data or tag in DATA
        if any(name == "class" and value and "countdown" in value for name, value in attrs):
            own = False  # "in 5 days", as Babel writes it in the reader's language
        self.stack.append((tag, hidden, own, data))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        hidden, own, kept = (self.stack[-1][1:] if self.stack else (False, True, False))
        inside_head = any(entry[0] == "head" for entry in self.stack)
        title = bool(self.stack) and self.stack[-1][0] == "title"
        if (hidden or inside_head) and not title:
            return
        if data.strip():
            self.pieces.append((data, own, kept))


def visible(html: str) -> list[tuple[str, bool, bool]]:
    parser = Visible()
    parser.feed(html)
    parser.close()
    return parser.pieces


DEVELOPER = [
    (re.compile(r"[{}]|\[\]"), "braces or []"),
    (re.compile(r"\b(None|True|False|null|true|false)\b"), "a Python or JSON value"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d"), "an ISO timestamp"),
    (re.compile(r"\\xa0|\\u[0-9a-f]{4}|\\n"), "an escape written out"),
    (re.compile(r"\b[a-z]+_[a-z_]+\b"), "an identifier"),
    (re.compile(r"<[a-z]+[ >]|&[a-z]+;"), "markup shown as text"),
]


def developer_words(text: str) -> list[str]:
    return [f"{why}: {match.group(0)!r} in {text.strip()[:120]!r}"
            for pattern, why in DEVELOPER for match in pattern.finditer(text)]


# --- the pseudo-locale --------------------------------------------------------------------
# (`…` in a help: what the player types, shown as code by the forms: data, not words)
PLACEHOLDER = re.compile(r"`[^`]*`|%\(\w+\)[sd]|\{\w*\}|%[sd]|%%")


def marked(text: str) -> str:
    """Each piece of ``text`` between placeholders wrapped in ⟦…⟧ (the values stay out)."""
    parts = PLACEHOLDER.split(text)
    holders = PLACEHOLDER.findall(text)
    out = []
    for index, part in enumerate(parts):
        out.append(f"⟦{part}⟧" if re.search(r"[^\W\d_]", part) else part)
        if index < len(holders):
            out.append(holders[index])
    return "".join(out)


def pseudo_locale(folder: Path) -> Path:
    """The catalogs with Italian turned into the pseudo-locale (German kept as it is)."""
    for language in ("it", "de"):
        for domain in DOMAINS:
            source = LOCALE / language / "LC_MESSAGES" / f"{domain}.po"
            with source.open("rb") as handle:
                catalog = read_po(handle, locale=language, domain=domain)
            if language == "it":
                for message in catalog:
                    if not message.id or not message.string:
                        continue
                    message.string = (tuple(marked(s) for s in message.string)
                                      if isinstance(message.string, tuple | list)
                                      else marked(message.string))
            target = folder / language / "LC_MESSAGES" / f"{domain}.po"
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as handle:
                write_po(handle, catalog)
    return folder


MARKED = re.compile(r"⟦[^⟦⟧]*⟧")
# Dates and times as Babel writes them in the reader's language ("4 mar 2026").
DATE_WORDS = {str(name) for language in ("it", "de", "en")
              for width in ("abbreviated", "wide") for kind in ("format", "stand-alone")
              for names in (get_month_names(width, kind, language),
                            get_day_names(width, kind, language))
              for name in names.values()} | {"UTC"} | {
    # A language's name as Babel writes it ("inglese"), in the note on the rules' language.
    str(Locale.parse(reader).languages[code]) for reader in ("it", "de", "en")
    for code in ("it", "de", "en")}
WORD = re.compile(r"[^\W\d_]{2,}")
# Ours but not words to translate: the brand, the languages' own names in the switch.
OWN_NAMES = {"Scriba", "Atom", "UTC", "Italiano", "Deutsch", "English"}


@functools.lru_cache(maxsize=16)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """The players' and games' names as whole words, the longest first (made once per
    list: a page has hundreds of pieces of text)."""
    ordered = sorted(set(filter(None, names)), key=len, reverse=True)
    return re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, ordered))})(?!\w)" if ordered
                      else r"(?!)")


def unmarked_words(text: str, names: list[str]) -> list[str]:
    while MARKED.search(text):
        text = MARKED.sub(" ", text)
    # A translation split by markup (a `code` inside it): its pieces open or close a mark.
    text = re.sub(r"⟦[^⟧]*$", " ", re.sub(r"^[^⟦]*⟧", " ", text))
    if names:
        text = _names_pattern(tuple(names)).sub(" ", text)
    return [w for w in WORD.findall(text) if w not in OWN_NAMES and w not in DATE_WORDS
            and w.rstrip(".") not in DATE_WORDS]


# --- the crawl ----------------------------------------------------------------------------
SKIP = re.compile(r"^/(signout|language|static/)|/act/|/feed\.atom$|/officer/\w+$")


def crawl(client: httpx.Client, start: list[str], limit: int) -> Iterator[tuple[str, str]]:
    """(address, html) of the pages reached from ``start`` by links, at most ``limit``."""
    seen: set[str] = set()
    # A few pages of each kind: rules, proposals, recipes, and each query (``?amend=``)
    # look alike.
    shapes: Counter[tuple[str, frozenset[str]]] = Counter()
    queue = list(start)
    while queue and len(seen) < limit:
        path = queue.pop(0)
        parts = urlsplit(path)
        shape = (re.sub(r"/(rules|proposals|recipes)/[^/]+", r"/\1/", parts.path),
                 frozenset(k.split("=")[0] for k in parts.query.split("&") if k))
        if path in seen or shapes[shape] >= (1 if parts.query else PER_KIND) \
                and path not in start:
            continue
        seen.add(path)
        shapes[shape] += 1
        answer = client.get(path)
        assert answer.status_code < 500, (path, answer.text[:300])
        if "text/html" not in answer.headers.get("content-type", ""):
            continue
        yield path, answer.text
        for href in re.findall(r'href="([^"#]+)', answer.text):
            link = urlsplit(urljoin(f"{client.base_url}{path}", href.replace("&amp;", "&")))
            if link.netloc != urlsplit(str(client.base_url)).netloc:
                continue
            address = link.path + (f"?{link.query}" if link.query else "")
            if not SKIP.search(link.path) and address not in seen:
                queue.append(address)


def pages_of(base: str, language: str, names: dict[str, list[str]]) -> Iterator[
        tuple[str, str, list[str]]]:
    """Every page Anna (a player of each game) reaches, in ``language``; and what only a
    signed-out reader (sign-in pages, the public game pages) or the officer sees."""
    # The data of the accounts: names, addresses, the browser of a session.
    everyone = [n for game in names.values() for n in game] + [
        PLAYER, OFFICER, "Ufficiale", f"python-httpx/{httpx.__version__}",
        "nope", "not-a-date",  # what the reader typed, told back in a refusal
        # the title of the rule a recipe filled in, now the author's own proposal's title
        "Premio per una proposta approvata"]
    # Refusals are pages too: an unknown game, rule, proposal; a bad date.
    refusals = ["/games/nope", "/games/parole/rules/999", "/games/words/proposals/nope",
                "/games/woerter/rules?at=not-a-date", "/games/parole/officer"]
    readers = [(signed_in(base, PLAYER, PASSWORD), MAX_PAGES,
                ["/account", "/new-game", *refusals]),
               (httpx.Client(base_url=base, timeout=30), 4, ["/", "/signin",
                                                             "/password-reset"]),
               (signed_in(base, OFFICER, PASSWORD), 2, [])]
    for client, limit, own_pages in readers:
        client.cookies.set("scriba_lang", language)
        for page in crawl(client, own_pages, len(own_pages)):
            yield (*page, everyone)
        for game, _source, _steps in GAMES:
            if limit == MAX_PAGES:
                start = [f"/games/{game}", f"/games/{game}/chronicle", *CHANGED[game],
                         f"/games/{game}/chronicle?kind=vote_cast",
                         f"/games/{game}/chronicle?player=Anna&period=1"]
            else:
                start = [f"/games/{game}/officer" if client is not readers[1][0]
                         else f"/games/{game}", f"/games/{game}/proposals"]
            for page in crawl(client, start, limit):
                if page[0].startswith(("/games/" + game, "/games/" + game + "?")):
                    yield (*page, names[game] + everyone)
        feed = client.get(f"/games/{GAMES[0][0]}/feed.atom")
        yield f"/games/{GAMES[0][0]}/feed.atom", feed.text, everyone
        client.close()


# --- the servers --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, list[str]]]:
    folder = tmp_path_factory.mktemp("words")
    db_url = f"sqlite:///{folder / 'words.db'}"
    return db_url, play(db_url)


@pytest.fixture(scope="module")
def server(played, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(played[0], log=tmp_path_factory.mktemp("server") / "server.log")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def pseudo_server(played, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("pseudo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCRIBA_LOCALE_DIR", str(pseudo_locale(folder / "locale")))
        running = Server(played[0], log=folder / "server.log")
    yield running
    running.stop()


@pytest.mark.parametrize("language", ["it", "de", "en"])
def test_no_developer_word_on_any_page(server, played, language: str) -> None:
    found: dict[str, list[str]] = {}
    count = 0
    for path, html, _names in pages_of(server.url, language, played[1]):
        count += 1
        pieces = [piece for piece, _own, data in visible(html) if not data]
        if path.endswith(".atom"):  # what a feed reader shows: titles and contents
            pieces = [element.text or "" for element in ET.fromstring(html).iter()
                      if element.tag.rsplit("}", 1)[-1] in ("title", "summary", "content")]
        if problems := [p for piece in pieces for p in developer_words(piece)]:
            found[path] = problems
    assert count > 60
    assert not found, "\n".join(f"{p}: {w}" for p, ws in found.items() for w in ws[:5])


def test_every_word_of_every_page_goes_through_the_catalogs(pseudo_server, played) -> None:
    found: dict[str, list[str]] = {}
    count = 0
    for path, html, names in pages_of(pseudo_server.url, "it", played[1]):
        if path.endswith(".atom"):
            continue
        count += 1
        words = [w for piece, own, _data in visible(html) if own
                 for w in unmarked_words(piece, names)]
        if words:
            found[path] = sorted(set(words))
    assert count > 60
    assert not found, "\n".join(f"{p}: {ws}" for p, ws in found.items())


@pytest.mark.parametrize("game", [g for g, _source, _steps in GAMES])
def test_the_published_site_reads_like_the_pages(played, game: str, tmp_path: Path) -> None:
    """``scriba publish --lang it`` with the pseudo-locale: the static site's words go
    through the catalogs too, and it shows no developer's word."""
    locale = pseudo_locale(tmp_path / "locale")
    out = tmp_path / "site"
    done = subprocess.run([SCRIBA, "publish", game, "--out", str(out), "--lang", "it",
                           "--db", played[0]], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SCRIBA_LOCALE_DIR": str(locale)})
    assert done.returncode == 0, done.stderr
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 5
    names = played[1][game] + [n for words in played[1].values() for n in words]
    found = {}
    for page in pages:
        pieces = visible(page.read_text(encoding="utf-8"))
        problems = [p for piece, _own, data in pieces if not data
                    for p in developer_words(piece)]
        problems += [w for piece, own, _data in pieces if own
                     for w in unmarked_words(piece, names)]
        if problems:
            found[page.relative_to(out).as_posix()] = problems
    assert not found, "\n".join(f"{p}: {ws[:6]}" for p, ws in found.items())


# The glossary at the top of each catalog: one word per concept. A word on the left would
# name again a concept the glossary gives another word.
NOT_OURS = {"de": re.compile(r"\bAntr[aä]g\w*|\bSpielleiter\b|\b(das|dem|des|ein|kein|"
                             r"dieses|diesem|im) Spiels?\b|\bAccount\b", re.IGNORECASE),
            "it": re.compile(r"\bgioco\b|\blo Scriba\b")}


@pytest.mark.parametrize("language", ["it", "de"])
def test_one_word_per_concept_and_every_entry_translated(language: str) -> None:
    """The glossary is followed in every catalog, and each domain's Italian and German
    catalogs translate the same messages, none left empty."""
    for domain in DOMAINS:
        with (LOCALE / language / "LC_MESSAGES" / f"{domain}.po").open("rb") as handle:
            catalog = read_po(handle)
        with (LOCALE / ("de" if language == "it" else "it") / "LC_MESSAGES"
              / f"{domain}.po").open("rb") as handle:
            other = read_po(handle)
        assert "Gloss" in (catalog.header_comment or ""), (language, domain)
        ids = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog if m.id}
        assert ids == {m.id if isinstance(m.id, str) else m.id[0] for m in other if m.id}, \
            (language, domain)
        for message in catalog:
            if not message.id:
                continue
            texts = message.string if isinstance(message.string, tuple) else (message.string,)
            assert all(texts), (language, domain, message.id)
            for text in texts:
                assert not NOT_OURS[language].search(text), (language, domain, text)


def test_the_rules_own_language_is_marked_and_said_once(server) -> None:
    """Suber's English rules inside an Italian page: each of their texts carries
    ``lang="en"``, and the page says once, in Italian, that they are in English."""
    italian = {"scriba_lang": "it"}
    page = httpx.get(server.url + "/games/words/rules", cookies=italian, timeout=30).text
    assert page.count('class="langnote"') == 1
    assert "Le regole di questa partita sono scritte in inglese" in page
    assert page.count('<span lang="en">') > 40  # the titles, in the contents and above each
    assert page.count('<div class="ruletext" lang="en">') > 20
    german = httpx.get(server.url + "/games/words/rules/301", cookies={"scriba_lang": "de"},
                       timeout=30).text
    assert "auf Englisch geschrieben" in german and german.count('class="langnote"') == 1
    # The reader's own language: no note.
    same = httpx.get(server.url + "/games/parole/rules", cookies=italian, timeout=30).text
    assert 'class="langnote"' not in same and 'lang="it"' in same


def test_the_outcome_is_told_in_the_language_of_the_page_that_shows_it(server) -> None:
    """Starting an Italian game from an English page: the officer page it leads to is the
    game's, in Italian, and so is its "Done" (never "Fatto: The game … has started")."""
    anna = signed_in(server.url, PLAYER, PASSWORD)
    form = anna.get("/new-game")
    started = anna.post("/new-game", data={"csrf_token": csrf_of(form.text),
                                           "ruleset": "equinomic", "game": "serata"})
    assert started.status_code == 303, started.text[:300]
    page = anna.get(started.headers["location"]).text
    assert '<html lang="it">' in page and 'class="flash ok"' in page
    assert "La partita serata è iniziata" in page and "has started" not in page

"""The pages are accessible: axe-core in Debian's Chromium, and what axe cannot judge.

A real ``scriba serve`` with three games (EquiNomic in Italian, Anderwelt in German, Suber
in English), a proposal adopted and one open in each where the rules allow. Selenium drives
/usr/bin/chromium; axe-core comes from an installed package (axe-selenium-python-nhsuk
ships axe.min.js in its wheel), never from the network. On every main page at a phone's
(390 px) and a desktop's (1280 px) width:

- axe-core finds no critical or serious violation, and no two landmarks share a name (its
  landmark rules, whatever their impact); the test names each violation it finds, and
  writes every one, minor ones included, to ``build/screenshots/a11y/axe.txt``;
- a screenshot of the page goes to ``build/screenshots/a11y/``.

Then, with the keyboard: every focus ring on a game page keeps 3:1 contrast against the
colours beside it (the dark header, the page, the cards), read from the computed styles;
and the result of a command is announced: focus on the message, "Done"/"Refused" first in
the page's title, in the reader's language.
"""

from __future__ import annotations

import base64
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from chromium import gone, needs_chromium, sign_in, start_chromium, wait
from serving import Server

from scriba.service import open_service

pytest.importorskip("selenium", reason="selenium is not installed")
pytest.importorskip("axe_selenium_python", reason="axe-selenium-python-nhsuk is not installed")
pytestmark = needs_chromium

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

AXE = resources.files("axe_selenium_python") / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots" / "a11y"
WIDTHS = ((390, "phone"), (1280, "desktop"))
PASSWORD = "a11y-pass-4821"
ANNA, OFFICER = "a11y-anna@example.org", "a11y-scriba@example.org"
PLAYERS = ["Anna", "Bruno", "Carla"]
START = "2026-03-01T10:00:00Z"
CODE = "# greets\ndef on_vote_cast(game, event):\n    return []\n"
# Whatever their impact, these fail the test: the landmarks' names and the pages' languages.
ALWAYS_FAIL = {"landmark-unique", "landmark-one-main", "landmark-no-duplicate-banner",
               "landmark-no-duplicate-contentinfo", "landmark-no-duplicate-main",
               "landmark-main-is-top-level", "landmark-banner-is-top-level",
               "landmark-contentinfo-is-top-level", "html-has-lang", "html-lang-valid",
               "valid-lang"}

# (name, who is signed in, path): grouped by reader, so each signs in once; every template
# once or more, within the minute CI's two cores allow. The rules pages are long (Anderwelt's
# is 460 kB: axe takes 15 s on it) and all one template: the English ruleset inside a German
# page (its own `lang`) stands for them; its rules' code (#code-apart), the same box for
# every rule, is checked on the rule's page.
PAGES = [
    ("home", None, "/"),
    ("signin", None, "/signin"),
    ("password-reset", None, "/password-reset"),
    ("it-game-reader", None, "/games/partita"),
    ("it-rule-history", None, "/games/partita/rules/201"),
    ("it-rules-changes", None, "/games/partita/rules/diff?since=2026-03-01"),
    ("it-proposals", None, "/games/partita/proposals"),
    ("it-proposal-adopted", None, "/games/partita/proposals/saluti"),
    ("it-chronicle", None, "/games/partita/chronicle"),
    ("it-not-found", None, "/games/partita/rules/999"),
    ("en-rules-read-in-de", None, "/games/game/rules?lang=de#code-apart"),
    ("it-game-player", ANNA, "/games/partita"),
    ("it-proposal-open", ANNA, "/games/partita/proposals/aperta"),
    ("de-game-player", ANNA, "/games/spiel"),
    ("de-proposal-open", ANNA, "/games/spiel/proposals/gruss"),
    ("en-game-player", ANNA, "/games/game"),
    ("en-recipe-refused", ANNA, "/games/game/recipes/bonus_for_adoption?fill=1&b_points=0"),
    ("en-recipe-filled", ANNA, "/games/game/recipes/bonus_for_adoption?fill=1&b_points=3"),
    ("account", ANNA, "/account"),
    ("start-a-game", ANNA, "/new-game"),
    ("it-officer", OFFICER, "/games/partita/officer"),
    ("de-officer", OFFICER, "/games/spiel/officer"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("a11y")
    db_url = f"sqlite:///{folder / 'a11y.db'}"
    service = open_service(db_url)
    commands = service.commands
    commands.create_game("equinomic", game_id="partita", name="Partita del venerdì",
                         players=PLAYERS, start=START)
    commands.create_game("anderwelt", game_id="spiel", name="Freitagsspiel", players=PLAYERS,
                         offices={"GM": "Max"}, start=START)
    commands.create_game("suber", game_id="game", name="Friday game", players=PLAYERS,
                         start=START)
    # A rule adopted in the Italian and English games (history, chronicle, tallies), one
    # proposal left open in the Italian and German ones (vote forms, dry runs).
    for game, word in (("partita", "favorevole"), ("game", "yes")):
        enact = {"enact": {"title": "Saluti", "text": "Ogni giocatore saluta gli altri.",
                           "code": CODE}}
        done = commands.perform(game, "Anna", "propose",
                                {"label": "saluti", "title": "Saluti", "changes": [enact]})
        assert done.accepted, done.message
        for voter in PLAYERS if game == "game" else PLAYERS[1:]:
            done = commands.perform(game, voter, "vote", {"proposal": "saluti", "choice": word})
            assert done.accepted, done.message
        commands.advance(game, by=86400)
    done = commands.perform("partita", "Bruno", "propose", {
        "label": "aperta", "title": "Aperta",
        "changes": [{"enact": {"title": "Altro", "text": "Un'altra regola."}}]})
    assert done.accepted, done.message
    assert commands.perform("spiel", "Max", "set_zat", {"days": 7}).accepted
    done = commands.perform("spiel", "Anna", "propose", {
        "label": "gruss", "title": "Gruß",
        "changes": [{"enact": {"class": "R", "title": "Gruß", "text": "Jeder grüßt."}}]})
    assert done.accepted, done.message
    service.accounts.create_account(ANNA, "Anna", PASSWORD)
    officer = service.accounts.create_account(OFFICER, "Scriba", PASSWORD)
    for game in ("partita", "spiel", "game"):
        service.seats.seat(game, "Anna", ANNA)
        service.seats.set_officer(game, officer.id)
    service.close()
    running = Server(db_url, log=folder / "server.log")
    yield running
    running.stop()


class Browser:
    """One Chromium for the module, and who is signed in to it."""

    def __init__(self, driver: Any, base: str) -> None:
        self.driver, self.base, self.who = driver, base, None

    def sign_in(self, email: str | None) -> None:
        if email == self.who:
            return
        self.driver.delete_all_cookies()
        if email:
            sign_in(self.driver, self.base, email, PASSWORD)
        self.who = email

    def width(self, width: int, height: int | None = None) -> None:
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height or (844 if width < 500 else 900),
            "deviceScaleFactor": 1, "mobile": width < 500})


@pytest.fixture(scope="module")
def browser(server: Server, tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp('chromium-a11y'))
    driver.set_script_timeout(60)
    # axe-core in every page the browser opens, before the page's own scripts: sent once.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                           {"source": AXE.read_text(encoding="utf-8")})
    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):  # this run's pictures only: the folder is for review
        old.unlink()
    (SHOTS / "axe.txt").write_text("")
    yield Browser(driver, server.url)
    driver.quit()


# --- axe-core --------------------------------------------------------------------------------
# axe's own run, answering only its violations (the passes would be megabytes).
RUN_AXE = """
const done = arguments[arguments.length - 1];
const where = location.hash === '#code-apart' ? {exclude: [['details.codebox']]} : document;
axe.run(where, {resultTypes: ['violations']}).then(r => done(r.violations.map(v => ({
  id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary}))}))),
  e => done({error: String(e)}));
"""


def axe_violations(driver: Any) -> list[dict[str, Any]]:
    found = driver.execute_async_script(RUN_AXE)
    assert not isinstance(found, dict), found
    return list(found)


def described(page: str, label: str, violation: dict[str, Any]) -> str:
    nodes = "; ".join(f"{n['target']} ({(n['summary'] or '').splitlines()[-1].strip()})"
                      for n in violation["nodes"][:5])
    more = len(violation["nodes"]) - 5
    return (f"{page} at {label}: {violation['id']} [{violation['impact']}] "
            f"{violation['help']} — {nodes}{f' and {more} more' if more > 0 else ''}")


def shot(browser: Browser, name: str) -> None:
    """What the window shows now (a focus ring, a message with focus)."""
    data = browser.driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})["data"]
    (SHOTS / f"{name}.png").write_bytes(base64.b64decode(data))


def full_page_shot(browser: Browser, width: int, name: str) -> None:
    """The whole page (capped at 5000 px) at this width, left laid out that way for axe."""
    browser.width(width)
    height = int(browser.driver.execute_script(
        "return Math.ceil(document.documentElement.scrollHeight)"))
    browser.width(width, min(height, 5000))
    shot(browser, f"{name}-{width}")


def test_axe_sees_what_it_must(browser: Browser) -> None:
    """The harness itself: axe is in the page, runs its rules, and its answer is read."""
    browser.sign_in(None)
    browser.driver.get(browser.base + "/")
    browser.driver.execute_script(
        "document.querySelector('main').insertAdjacentHTML('beforeend',"
        " '<img src=\"/nothing.png\"><nav aria-label=\"x\"></nav><nav aria-label=\"x\"></nav>')")
    found = {v["id"]: v for v in axe_violations(browser.driver)}
    assert found["image-alt"]["impact"] == "critical"
    assert found["landmark-unique"]["nodes"]


@pytest.mark.parametrize(("name", "who", "path"), PAGES, ids=[p[0] for p in PAGES])
def test_axe_finds_no_serious_problem(browser: Browser, name: str, who: str | None,
                                      path: str) -> None:
    browser.sign_in(who)
    driver = browser.driver
    driver.get(browser.base + path)
    # The page itself, not a server's stray error.
    assert driver.find_elements(By.TAG_NAME, "main"), driver.page_source[:1000]
    failures, seen = [], []
    for width, label in WIDTHS:
        full_page_shot(browser, width, name)
        for violation in axe_violations(driver):
            line = described(name, label, violation)
            seen.append(line)
            if violation["impact"] in ("critical", "serious") or violation["id"] in ALWAYS_FAIL:
                failures.append(line)
    browser.width(1280)
    if seen:
        with (SHOTS / "axe.txt").open("a", encoding="utf-8") as report:
            report.write("\n".join(seen) + "\n")
    assert not failures, "axe-core found:\n" + "\n".join(failures)


# --- the focus ring, from the computed styles -------------------------------------------------
# The focused element's ring, and the colours beside it: what is painted just inside the ring
# (its offset) and just outside it, on each side of the element within the window. Each
# point's colour is the background of the nearest box under it that paints one.
FOCUSED = """
const el = document.activeElement;
if (!el || el === document.body || el === document.documentElement) return null;
if (el.dataset.a11ySeen) return 'again';
el.dataset.a11ySeen = '1';
const style = getComputedStyle(el), box = el.getBoundingClientRect();
const offset = parseFloat(style.outlineOffset) || 0, width = parseFloat(style.outlineWidth) || 0;
function paint(x, y) {
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return null;
  for (const node of document.elementsFromPoint(x, y)) {
    if (el.contains(node)) continue;
    for (let n = node; n; n = n.parentElement) {
      const bg = getComputedStyle(n).backgroundColor;
      if (!/^rgba\\(.*,\\s*0\\)$/.test(bg) && bg !== 'transparent') return bg;
    }
    return getComputedStyle(document.body).backgroundColor;
  }
  return null;
}
const beside = [];
for (const d of [offset / 2, offset + width + 0.5]) {
  if (d <= 0) continue;
  const mx = box.left + box.width / 2, my = box.top + box.height / 2;
  beside.push(paint(box.left - d, my), paint(box.right + d, my),
              paint(mx, box.top - d), paint(mx, box.bottom + d));
}
return {what: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' +
        (el.innerText || el.value || el.name || '').trim().slice(0, 30) + '"',
        style: style.outlineStyle, width: width, color: style.outlineColor,
        beside: beside.filter(b => b)};
"""
RGB = re.compile(r"rgba?\(\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)")


def luminance(css: str) -> float:
    match = RGB.match(css)
    assert match, css
    channels = [float(v) / 255 for v in match.groups()]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    """WCAG 2's contrast ratio of two CSS colours."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_contrast_of_known_colours() -> None:  # the formula itself, on WCAG's own extremes
    assert round(contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)"), 2) == 21.0
    assert round(contrast("rgb(23, 50, 79)", "rgb(194, 65, 12)"), 1) == 2.5  # the old ring


def on_dark(stop: dict[str, Any]) -> bool:
    return any(luminance(c) < 0.05 for c in stop["beside"])


def walk_focus(browser: Browser, picture: str, limit: int = 150) -> list[dict[str, Any]]:
    """Tab through the page from its top, as a keyboard user does: each stop's ring (the
    first one on the dark header photographed)."""
    driver = browser.driver
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    stops: list[dict[str, Any]] = []
    for _ in range(limit):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        stop = driver.execute_script(FOCUSED)
        if stop == "again" or (stop is None and stops):
            break
        if stop:
            if stop["beside"] and on_dark(stop) and not any(on_dark(s) for s in stops):
                shot(browser, picture)
            stops.append(stop)
    return stops


@pytest.mark.parametrize("width", [w for w, _ in WIDTHS])
def test_focus_ring_keeps_3_to_1_on_the_header_and_the_page(browser: Browser,
                                                            width: int) -> None:
    browser.sign_in(ANNA)
    browser.width(width)
    header = page = False
    weak: list[str] = []
    for path in ("/games/partita", "/games/partita/proposals/aperta"):
        browser.driver.get(browser.base + path)
        stops = walk_focus(browser, f"focus-on-the-header-{width}")
        assert len(stops) > 10, stops
        for stop in stops:
            if stop["style"] == "none" or stop["width"] < 2:
                weak.append(f"{path} {stop['what']}: no visible ring")
                continue
            ratio, colour = min((contrast(stop["color"], c), c) for c in stop["beside"])
            if ratio < 3:
                weak.append(f"{path} {stop['what']}: ring {stop['color']} beside {colour}"
                            f" is {ratio:.2f}:1")
            header = header or on_dark(stop)
            page = page or any(luminance(c) > 0.8 for c in stop["beside"])
    browser.width(1280)
    assert not weak, "\n".join(weak)
    assert header and page, "the walk met no ring on the dark header or on the light page"


# --- the result of a command, announced --------------------------------------------------------
def submit(browser: Browser, form: Any) -> None:
    button = form.find_element(By.CSS_SELECTOR, "button[type=submit]")
    button.click()
    wait(browser.driver, 30).until(gone(button))


@pytest.mark.parametrize(("game", "field", "value", "title"), [
    ("spiel", "adv-by", "1h", "Erledigt:"),  # the clock moved: done, in German
    ("partita", "add-name", "Anna", "Rifiutato:"),  # a player already: refused, in Italian
])
def test_result_of_a_command_is_announced(browser: Browser, game: str, field: str, value: str,
                                          title: str) -> None:
    browser.sign_in(OFFICER)
    driver = browser.driver
    driver.get(f"{browser.base}/games/{game}/officer")
    entry = driver.find_element(By.ID, field)
    entry.send_keys(value)
    submit(browser, entry.find_element(By.XPATH, "./ancestor::form"))
    assert driver.title.startswith(title + " "), driver.title
    shot(browser, f"result-{game}")
    message = driver.switch_to.active_element
    assert "flash" in (message.get_attribute("class") or "").split(), message.tag_name
    assert message.text.startswith(title), message.text
    assert message.get_attribute("role") == ("status" if title == "Erledigt:" else "alert")


def test_a_form_sent_back_refused_is_announced(browser: Browser) -> None:
    """A form shown again with its refusal (no redirect): the same title, the same focus."""
    browser.sign_in(None)
    driver = browser.driver
    driver.get(browser.base + "/language?lang=de&next=/signin")  # the reader's choice, kept
    driver.find_element(By.ID, "email").send_keys(ANNA)
    driver.find_element(By.ID, "password").send_keys("not-the-password")
    submit(browser, driver.find_element(By.CSS_SELECTOR, "main form"))
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert driver.title.startswith("Abgelehnt: "), driver.title
    message = driver.switch_to.active_element
    assert message.get_attribute("role") == "alert" and message.text, message.tag_name
    driver.delete_all_cookies()  # the language chosen goes with this reader

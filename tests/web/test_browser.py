"""Three players play through the pages in headless Chromium from Debian.

A real ``scriba serve`` on loopback; Selenium drives /usr/bin/chromium through
/usr/bin/chromedriver (nothing is downloaded). In each of three games — EquiNomic in
Italian, Anderwelt in German, Suber in English — one player proposes a rule with code
through the proposal form, the others vote from their own pages with the ruleset's own
vote words, the officer moves the clock where the rules wait for a deadline, and the
result, the new rule and its history appear on the ruleset page, in the chronicle and in
the feed. Screenshots of every main page at phone and desktop widths go to
``build/screenshots/``.
"""

from __future__ import annotations

import base64
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest
from chromium import gone, needs_chromium, start_chromium, wait
from chromium import sign_in as browsing_sign_in
from serving import Server

from scriba.service import open_service

selenium = pytest.importorskip("selenium", reason="selenium is not installed")
pytestmark = needs_chromium

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PASSWORD = "browser-pass-123"
PEOPLE = {"Anna": "anna@example.org", "Bruno": "bruno@example.org",
          "Carla": "carla@example.org"}
OFFICER = "scriba@example.org"
CODE = ("# counts the greetings\n"
        "def on_vote_cast(game, event):\n"
        "    return []\n")
# game id → (ruleset, language, offices, the words the page must show)
GAMES = {
    "equinomic": ("equinomic", "it", {}, {"rules": "Regole", "act": "Cosa puoi fare adesso",
                                          "adopted": "approvata"}),
    "anderwelt": ("anderwelt", "de", {"GM": "Max"},
                  {"rules": "Regeln", "act": "Was du jetzt tun kannst",
                   "adopted": "angenommen"}),
    "suber": ("suber", "en", {}, {"rules": "Rules", "act": "What you can do now",
                                  "adopted": "adopted"}),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("browser")
    db_url = f"sqlite:///{folder / 'browser.db'}"
    service = open_service(db_url)
    for game_id, (ruleset, _lang, offices, _words) in GAMES.items():
        service.commands.create_game(ruleset, game_id=game_id,
                                     name=f"{ruleset.title()} ({game_id})",
                            players=list(PEOPLE), offices=offices or None,
                            start="2026-03-01T10:00:00Z")
    accounts = service.accounts
    seats = service.seats
    for name, email in PEOPLE.items():
        accounts.create_account(email, name, PASSWORD)
    officer = accounts.create_account(OFFICER, "Scriba", PASSWORD)
    for game_id in GAMES:
        for name, email in PEOPLE.items():
            seats.seat(game_id, name, email)
        seats.set_officer(game_id, officer.id)
    service.close()
    running = Server(db_url, log=folder / "server.log")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp('chromium-profile'))
    driver.implicitly_wait(5)  # a page just loaded may still be building its DOM
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


# --- what a player does --------------------------------------------------------------------
def sign_in(driver, base: str, email: str) -> None:  # type: ignore[no-untyped-def]
    browsing_sign_in(driver, base, email, PASSWORD)


def flash(driver) -> tuple[bool, str]:
    node = driver.find_element(By.CSS_SELECTOR, ".flash")
    return "ok" in node.get_attribute("class").split(), node.text


def fill(form, name: str, value: str) -> None:
    field = form.find_element(By.NAME, name)
    if field.tag_name == "select":
        Select(field).select_by_value(value)
    else:
        field.clear()
        field.send_keys(value)


def submit(form) -> None:
    """Send the form and wait for the page that answers it."""
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(form.parent, 30).until(gone(form))


def propose(driver, base: str, game: str, label: str, title: str, text: str) -> None:
    driver.get(f"{base}/games/{game}")
    form = driver.find_element(By.ID, "act-propose")
    fill(form, "a_label", label)
    fill(form, "a_title", title)
    fill(form, "c_type", "enact")
    fill(form, "c_title", title)
    fill(form, "c_text", text)
    fill(form, "c_code", CODE)
    if game == "anderwelt":  # Anderwelt's rule classes: a simple rule is class R
        fill(form, "c_yaml", "")
    submit(form)
    accepted, message = flash(driver)
    assert accepted, message


def vote(driver, base: str, game: str, title: str, word: str,
         extra: dict[str, str] | None = None) -> None:
    driver.get(f"{base}/games/{game}")
    form = driver.find_element(By.ID, "act-vote")
    # The proposal as the page names it: its number with its title.
    choice = Select(form.find_element(By.NAME, "a_proposal"))
    choice.select_by_visible_text(next(o.text for o in choice.options if title in o.text))
    form.find_element(By.CSS_SELECTOR, f"input[type=radio][value='{word}']").click()
    for name, value in (extra or {}).items():
        fill(form, name, value)
    submit(form)
    accepted, message = flash(driver)
    assert accepted, message


def officer_action(driver, base: str, game: str, action: str, values: dict[str, str]) -> None:
    driver.get(f"{base}/games/{game}/officer")
    driver.find_element(By.CSS_SELECTOR, f"#d-{action} > summary").click()  # open it
    form = driver.find_element(By.ID, f"act-{action}")
    for name, value in values.items():
        fill(form, name, value)
    submit(form)
    accepted, message = flash(driver)
    assert accepted, message


def to_deadline(driver, base: str, game: str) -> None:
    driver.get(f"{base}/games/{game}/officer")
    button = driver.find_element(By.ID, "to-deadline")
    button.click()
    wait(driver, 30).until(gone(button))
    accepted, message = flash(driver)
    assert accepted, message


# --- screenshots -----------------------------------------------------------------------------
# Every main page of the first game is photographed; of the others, the ones whose
# language or ruleset changes the most (forms, vote words, rules).
ALWAYS = ("game-voter", "proposal-open", "rules", "chronicle", "officer")


def shoot(driver, name: str) -> None:
    """The whole page at a phone's and a desktop's width (capped at 5000 px tall)."""
    game = next((g for g in GAMES if name.startswith(g + "-")), None)
    if game not in (None, "equinomic") and name[len(game) + 1:] not in ALWAYS:
        return
    for width, label in ((390, "phone"), (1280, "desktop")):
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 844 if width < 500 else 900,
            "deviceScaleFactor": 1, "mobile": width < 500})
        height = driver.execute_script(
            "return Math.ceil(document.documentElement.scrollHeight)")
        height = min(int(height), 5000)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})
        data = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})["data"]
        (SHOTS / f"{name}-{label}.png").write_bytes(base64.b64decode(data))
        # A page must never be wider than the phone: no sideways scrolling of the page.
        if width < 500:
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{name} is {overflow}px wider than a phone"
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# --- the games -------------------------------------------------------------------------------
@pytest.mark.parametrize("game", list(GAMES))
def test_three_players_play_a_rule_into_force(server, browser, game) -> None:
    base = server.url
    _ruleset, language, _offices, words = GAMES[game]
    label, title = "saluti", {"it": "Saluti", "de": "Gruß", "en": "Greetings"}[language]
    text = {"it": "Ogni giocatore saluta <gli altri>.", "de": "Jeder grüßt die anderen.",
            "en": "Players greet each other."}[language]
    driver = browser
    if game == "anderwelt":
        sign_in(driver, base, OFFICER)
        officer_action(driver, base, game, "set_zat", {"a_days": "7"})
        shoot(driver, f"{game}-officer")

    sign_in(driver, base, PEOPLE["Anna"])
    driver.get(f"{base}/games/{game}")
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language
    assert words["act"] in driver.page_source
    shoot(driver, f"{game}-game-proposer")
    if game == "anderwelt":
        driver.get(f"{base}/games/{game}")
        form = driver.find_element(By.ID, "act-propose")
        fill(form, "a_label", label)
        fill(form, "a_title", title)
        fill(form, "c_type", "")
        fill(form, "c_yaml", f"- enact: {{class: R, title: {title}, text: {text}}}")
        fill(form, "c_code", "")
        submit(form)
        accepted, message = flash(driver)
        assert accepted, message
    else:
        propose(driver, base, game, label, title, text)
    # The proposal page: the change, highlighted code (where given), the dry run.
    driver.get(f"{base}/games/{game}/proposals/{label}")
    assert title in driver.page_source
    assert driver.find_elements(By.CSS_SELECTOR, "section.dryrun")
    if game != "anderwelt":
        assert driver.find_elements(By.CSS_SELECTOR, ".code .k")  # "def" highlighted
    shoot(driver, f"{game}-proposal-open")

    voters = {"equinomic": ["Bruno", "Carla"], "suber": ["Anna", "Bruno", "Carla"],
              "anderwelt": ["Anna", "Bruno", "Carla"]}[game]
    word = {"it": "favorevole", "de": "ja", "en": "yes"}[language]
    if game == "anderwelt":  # published at the end of round 1, voted in round 2
        sign_in(driver, base, OFFICER)
        to_deadline(driver, base, game)
        officer_action(driver, base, game, "set_zat", {"a_days": "7"})
    for index, voter in enumerate(voters):
        sign_in(driver, base, PEOPLE[voter])
        if index == 0:
            driver.get(f"{base}/games/{game}")
            shoot(driver, f"{game}-game-voter")
        vote(driver, base, game, title, word,
             {"a_deferral": "nein"} if game == "anderwelt" else None)
    if game == "anderwelt":  # the deadline passes: round 2 is evaluated
        sign_in(driver, base, OFFICER)
        to_deadline(driver, base, game)
    else:  # the officer moves the clock on a day; the result stands
        sign_in(driver, base, OFFICER)
        driver.get(f"{base}/games/{game}/officer")
        form = driver.find_element(By.ID, "adv-by").find_element(By.XPATH, "./ancestor::form")
        fill(form, "by", "1d")
        submit(form)
        assert flash(driver)[0]

    # The result: the proposal adopted, the rule in force, its history, the chronicle, feed.
    driver.get(f"{base}/games/{game}/proposals/{label}")
    assert words["adopted"] in driver.find_element(By.CSS_SELECTOR, "h1 + p.meta").text
    shoot(driver, f"{game}-proposal-adopted")
    driver.get(f"{base}/games/{game}/rules")
    assert words["rules"] in driver.find_element(By.CSS_SELECTOR, "nav.gamenav").text
    rule_link = next(a for a in driver.find_elements(By.CSS_SELECTOR, "article.rule h2 a")
                     if title in a.find_element(By.XPATH, "..").text)
    shoot(driver, f"{game}-rules")
    rule_link.click()
    # The history names the proposal by its number (as every sentence does) and links it.
    assert driver.find_elements(By.CSS_SELECTOR, f'ol.history a[href$="/proposals/{label}"]')
    shoot(driver, f"{game}-rule")
    driver.get(f"{base}/games/{game}/chronicle")
    chronicle = driver.find_element(By.CSS_SELECTOR, "ol.chronicle").text
    assert title in chronicle
    shoot(driver, f"{game}-chronicle")
    driver.get(f"{base}/games/{game}/proposals")
    shoot(driver, f"{game}-proposals")
    driver.get(f"{base}/games/{game}/officer")
    shoot(driver, f"{game}-officer-after")
    feed = httpx.get(f"{base}/games/{game}/feed.atom", timeout=30)
    entries = ET.fromstring(feed.content).findall("{http://www.w3.org/2005/Atom}entry")
    assert any(title in (e.findtext("{http://www.w3.org/2005/Atom}content") or "")
               for e in entries)


def test_signed_out_pages_and_index(server, browser) -> None:
    browser.delete_all_cookies()
    browser.get(server.url + "/")
    assert len(browser.find_elements(By.CSS_SELECTOR, "ul.cards li")) == len(GAMES)
    shoot(browser, "index")
    browser.get(server.url + "/signin")
    shoot(browser, "signin")
    browser.get(server.url + "/games/equinomic/rules?at=2000-01-01")
    assert browser.find_element(By.CSS_SELECTOR, "p.refusal").text
    shoot(browser, "error-before-start")
    # The keyboard reaches the skip link first, and it shows where focus is.
    browser.get(server.url + "/games/suber")
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("\ue004")  # Tab
    focused = browser.switch_to.active_element
    assert focused.get_attribute("class") == "skip"
    assert focused.value_of_css_property("outline-style") != "none"


def teardown_module() -> None:
    # Keep only this run's pictures: the folder is for review, not history.
    if SHOTS.exists() and not any(SHOTS.iterdir()):
        shutil.rmtree(SHOTS)

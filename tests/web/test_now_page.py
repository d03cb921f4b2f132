"""The "What you can do now" part of the game page, in headless Chromium from Debian.

A real ``scriba serve`` on loopback, one Chromium session for the module (Selenium,
/usr/bin/chromium through /usr/bin/chromedriver, nothing downloaded). A game of three
players for every bundled ruleset: each player's page is read as they see it, and every
form it offers is sent with the first value offered for each choice and plain text in each
free field it requires; the rules must accept it, or refuse it for a reason the form could
not know, named below. Then, in Suber: a voter is not offered a vote twice, a player off
turn gets no proposal form, the move owed (the die) comes first, a proposal with broken
code comes back with everything written in it and the compiler's lines preformatted, and
"amend" starts from the rule. Screenshots of the part at 390 and 1280 px go to
``build/screenshots/now-*.png``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from chromium import gone, needs_chromium, shoot_part, start_chromium, wait
from chromium import sign_in as browsing_sign_in
from serving import Server, csrf_of, signed_in

from scriba.rulesets import list_rulesets
from scriba.service import open_service

selenium = pytest.importorskip("selenium", reason="selenium is not installed")
pytestmark = needs_chromium

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PASSWORD = "now-page-pass-123"
PLAYERS = ("Anna", "Bruno", "Carla")
OFFICER = "officer.now@example.org"
RULESETS = [r.id for r in list_rulesets()]
NOW = "section[aria-labelledby=h-act]"
BROKEN = "def on_vote_cast(game, event):\n    return [std.set_var('a', 1\n"

# Refusals a form cannot foresee: what only the free text typed names (a complaint, an
# applicant, a law by its number, the Nomic number, a magic number), the sum typed, a
# letter of votes left empty. (ruleset, action) → a piece of the rules' sentence. What
# names one of the game's things (a judgment, a question, a case, a gladiator) is an
# `asset:KIND` parameter: the form offers those that exist and the rules accept.
UNFORESEEABLE = {
    # the vote on overruling is a typed word (favorevole / contrario), not a list to choose
    ("nomic3", "overrule"): "Vota favorevole",
    ("anderwelt", "request_repeat"): "keine Beanstandung",
    ("anderwelt", "vote_admission"): "Bewerbung von",
    ("anderwelt", "nomic_number"): "Nomiczahl muß eine positive ganze Zahl",
    ("decameronomic", "buy_gladiator"): "Numero Magico",
    ("decameronomic", "deposit"): "si depositano da 100 a 5000",
    ("decameronomic", "delete_law"): "non è in vigore",
    ("decameronomic", "give_law"): "non è in vigore",
    ("decameronomic", "vote_letter"): "lettera di voto è vuota",
}


def email(ruleset: str, player: str) -> str:
    return f"{player.lower()}.{ruleset}@example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("now")
    db_url = f"sqlite:///{folder / 'now.db'}"
    service = open_service(db_url)
    for ruleset in RULESETS:
        service.commands.create_game(ruleset, game_id=ruleset, name=f"Now ({ruleset})",
                                     players=list(PLAYERS), start="2026-03-01T10:00:00Z",
                                     offices={"GM": "Max"} if ruleset == "anderwelt" else None)
        for player in PLAYERS:
            service.accounts.create_account(email(ruleset, player), player, PASSWORD)
            service.seats.seat(ruleset, player, email(ruleset, player))
    officer = service.accounts.create_account(OFFICER, "Scriba", PASSWORD)
    service.seats.set_officer("anderwelt", officer.id)
    service.close()
    running = Server(db_url, log=folder / "server.log")
    yield running, db_url
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp('chromium-now'))
    driver.implicitly_wait(0)  # pages are read whole; absent parts are asked for as lists
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


# --- a player at the page ----------------------------------------------------------------
def sign_in(driver: Any, base: str, address: str) -> None:
    browsing_sign_in(driver, base, address, PASSWORD)


def now_forms(driver: Any) -> dict[str, Any]:
    """The forms of the "What you can do now" part: action name → form element (read in
    one call to the browser: a call per form and attribute was half this module's time)."""
    pairs = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' form.action')]"
        ".map(f => [f.id.slice(4), f]);", NOW)
    return dict(pairs)


# In the page, as a player's clicks and typing would leave the form: every ancestor
# <details> opened, each required choice at its first offered value, each group of radio
# buttons at its first, each required free field with plain text after what it holds;
# a proposal enacts one plain rule. Answers the required fields a player could not reach
# (not shown): a form that asks for one of those cannot be sent by a person.
_FILL_FIRST = """
const form = arguments[0];
for (let d = form.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
const changed = e => { e.dispatchEvent(new Event('input', {bubbles: true}));
                       e.dispatchEvent(new Event('change', {bubbles: true})); };
const shown = e => e.getClientRects().length > 0;
const unreachable = [];
for (const select of form.querySelectorAll('select[name^=a_]')) {
  const offered = [...select.options].map(o => o.value).filter(v => v);
  if (select.required && offered.length) {
    if (!shown(select)) unreachable.push(select.name);
    select.value = offered[0]; changed(select);
  }
}
const groups = new Set([...form.querySelectorAll('input[type=radio]')].map(r => r.name));
for (const name of groups) {
  const first = form.querySelector(`input[type=radio][name="${name}"]`);
  if (!shown(first)) unreachable.push(name);
  first.click();
}
for (const field of form.querySelectorAll('input[name^=a_], textarea[name^=a_]')) {
  if (['radio', 'hidden'].includes(field.type) || !field.required) continue;
  if (!shown(field)) unreachable.push(field.name);
  field.value += field.type === 'number' ? '1'
      : (field.classList.contains('mono') ? '[]' : 'Prova');
  changed(field);
}
const type = form.querySelector('[name=c_type]');
if (type) {
  type.value = 'enact'; changed(type);
  // Paragraphs lettered a), b)… as DecameroNomic rimaneggiato wants; plain elsewhere.
  for (const [name, text] of [['c_title', 'Prova'],
                              ['c_text', 'a) Ogni giocatore riceve un punto.']]) {
    const field = form.querySelector(`[name=${name}]`);
    field.value += text; changed(field);
  }
}
return unreachable;
"""


def fill_first(driver: Any, form: Any) -> None:
    """Every choice at its first offered value, every required free field with plain
    text; a proposal enacts one plain rule (:data:`_FILL_FIRST`, one call to the page)."""
    unreachable = driver.execute_script(_FILL_FIRST, form)
    assert not unreachable, f"{form.get_attribute('id')}: required but not shown: {unreachable}"


def send(driver: Any, form: Any) -> tuple[bool, str]:
    """Submit; the answer: accepted (the game page again, with "Done") or the refusal."""
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, 30).until(gone(form))
    done = driver.find_elements(By.CSS_SELECTOR, ".flash.ok")
    if done:
        return True, done[0].text
    refusals = driver.find_elements(By.CSS_SELECTOR, ".field-error, .flash.refused")
    assert refusals, driver.page_source[:3000]
    return False, refusals[0].text


def visible_identifiers(driver: Any, names: set[str]) -> list[str]:
    """Parameter and action identifiers the reader can see in the "now" part."""
    text = driver.find_element(By.CSS_SELECTOR, NOW).text
    return sorted(n for n in names if re.search(rf"\b{re.escape(n)}\b", text))



def identifiers(db_url: str, ruleset: str) -> set[str]:
    """The names a developer gave the ruleset's actions and parameters (with "_": a plain
    word such as "text" may well be the label)."""
    service = open_service(db_url)
    try:
        actions = service.reads.declared_actions(ruleset)
    finally:
        service.close()
    names = {a.name for a in actions} | {p for a in actions for p in a.params}
    return {n for n in names if "_" in n}


# --- every form offered is one the rules take --------------------------------------------
@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_form_offered_is_accepted_with_its_first_values(server, browser,
                                                              ruleset) -> None:
    running, db_url = server
    base = running.url
    hidden = identifiers(db_url, ruleset)
    outcomes: dict[tuple[str, str], tuple[bool, str]] = {}
    for player in PLAYERS:
        sign_in(browser, base, email(ruleset, player))
        browser.get(f"{base}/games/{ruleset}")
        assert not visible_identifiers(browser, hidden), (ruleset, player)
        shoot_now(browser, f"{ruleset}-{player.lower()}")
        tried: set[str] = set()
        landed = False
        while True:
            if not landed:  # an accepted form lands on the game page as it now is
                browser.get(f"{base}/games/{ruleset}")
            forms = now_forms(browser)
            # Leaving is offered and taken, but not here: the player would be gone.
            todo = [n for n in forms if n not in tried and not _leaves(n)]
            if not todo:
                break
            tried.add(todo[0])
            fill_first(browser, forms[todo[0]])
            outcomes[(player, todo[0])] = send(browser, forms[todo[0]])
            landed = outcomes[(player, todo[0])][0] and \
                urlsplit(browser.current_url).path == f"/games/{ruleset}"
    assert outcomes, f"{ruleset}: nobody was offered anything"
    for key, value in outcomes.items():
        print("OUTCOME", ruleset, key, value)
    wrong = {key: message for key, (accepted, message) in outcomes.items()
             if not accepted and UNFORESEEABLE.get((ruleset, key[1]), "\0") not in message}
    assert not wrong, (ruleset, wrong)


def _leaves(action: str) -> bool:
    return "leave" in action or "deregister" in action


# --- Suber, step by step -------------------------------------------------------------------
def test_suber_a_turn_through_the_page(server, browser) -> None:
    running, db_url = server
    base = running.url
    game = "suber-turn"
    service = open_service(db_url)
    try:
        service.commands.create_game("suber", game_id=game, name="Suber, a turn",
                                     players=list(PLAYERS), start="2026-03-01T10:00:00Z")
        for player in PLAYERS:
            service.seats.seat(game, player, email("suber", player))
        rule = service.reads.rule_history(game, "201")
    finally:
        service.close()

    # Off turn: Bruno is offered no proposal (Anna moves first).
    sign_in(browser, base, email("suber", "Bruno"))
    browser.get(f"{base}/games/{game}")
    assert "propose" not in now_forms(browser)

    # "Amend rule 201" starts from the rule as it stands.
    sign_in(browser, base, email("suber", "Anna"))
    browser.get(f"{base}/games/{game}/rules/201")
    browser.find_element(By.CSS_SELECTOR, "p.amend a").click()
    wait(browser, 20).until(lambda d: "amend=201" in d.current_url)
    form = now_forms(browser)["propose"]
    assert Select(form.find_element(By.NAME, "c_type")).first_selected_option \
        .get_attribute("value") == "amend"
    assert Select(form.find_element(By.NAME, "c_rule")).first_selected_option \
        .get_attribute("value") == "201"
    assert form.find_element(By.NAME, "c_title").get_attribute("value") == rule["title"]
    assert form.find_element(By.NAME, "c_text").get_attribute("value") == rule["text"]
    assert form.find_element(By.NAME, "c_code").get_attribute("value").rstrip() == \
        (rule["code"] or "").rstrip()
    shoot_now(browser, "suber-amend")

    # Anna's proposal with code that does not compile comes back as she wrote it.
    browser.get(f"{base}/games/{game}")
    form = now_forms(browser)["propose"]
    form.find_element(By.NAME, "a_title").send_keys("Bonus")
    form.find_element(By.NAME, "a_text").send_keys("A point each.")
    Select(form.find_element(By.NAME, "c_type")).select_by_value("enact")
    form.find_element(By.NAME, "c_title").send_keys("Bonus")
    form.find_element(By.NAME, "c_text").send_keys("Each player gets a point.")
    code = form.find_element(By.NAME, "c_code")
    code.send_keys(BROKEN)
    accepted, message = send(browser, form)
    assert not accepted
    assert "new rule" in message and "rule new" not in message
    form = now_forms(browser)["propose"]
    assert form.find_element(By.NAME, "a_title").get_attribute("value") == "Bonus"
    assert form.find_element(By.NAME, "a_text").get_attribute("value") == "A point each."
    assert form.find_element(By.NAME, "c_title").get_attribute("value") == "Bonus"
    kept = form.find_element(By.NAME, "c_code").get_attribute("value")
    assert kept.rstrip("\n") == BROKEN.rstrip("\n")
    # The compiler's lines as lines, beside the code; the code's field has the focus.
    error = form.find_element(By.CSS_SELECTOR, ".field-error pre")
    assert re.search(r"^\s*\d+ \|", error.text, re.M), error.text
    assert error.value_of_css_property("white-space") == "pre"
    assert browser.switch_to.active_element.get_attribute("name") == "c_code"
    assert browser.title.startswith("Refused")
    shoot_now(browser, "suber-refused-code")

    # Now the code is mended: accepted.
    form = now_forms(browser)["propose"]
    code = form.find_element(By.NAME, "c_code")
    code.clear()
    code.send_keys("def on_vote_cast(game, event):\n    return []\n")
    assert send(browser, form)[0]

    # Anna votes from her page: the ruleset's two words for its two choices.
    browser.get(f"{base}/games/{game}")
    form = now_forms(browser)["vote"]
    radios = form.find_elements(By.CSS_SELECTOR, "input[type=radio]")
    assert [r.get_attribute("value") for r in radios] == ["yes", "no"]
    radios[0].click()
    assert send(browser, form)[0]
    browser.get(f"{base}/games/{game}")
    assert "vote" not in now_forms(browser)  # nothing left to vote on, for her

    for voter in ("Bruno", "Carla"):
        sign_in(browser, base, email("suber", voter))
        browser.get(f"{base}/games/{game}")
        form = now_forms(browser)["vote"]
        form.find_elements(By.CSS_SELECTOR, "input[type=radio]")[0].click()
        assert send(browser, form)[0]

    # The vote is over: Anna owes her roll of the die, first on the page, not folded.
    sign_in(browser, base, email("suber", "Anna"))
    browser.get(f"{base}/games/{game}")
    section = browser.find_element(By.CSS_SELECTOR, NOW)
    first = section.find_elements(By.CSS_SELECTOR, "form.action")[0]
    assert first.get_attribute("id") == "act-roll", section.text
    assert first.find_elements(By.XPATH, "./ancestor::div[contains(@class, 'due')]")
    assert not first.find_elements(By.XPATH, "./ancestor::details")
    shoot_now(browser, "suber-due-roll")


# --- the officer's forms keep what was written too ----------------------------------------
def test_a_refused_officer_form_comes_back_filled(server) -> None:
    running, _db_url = server
    officer = signed_in(running.url, OFFICER, PASSWORD)
    token = csrf_of(officer.get("/games/anderwelt/officer").text)
    answer = officer.post("/games/anderwelt/officer/act/set_zat", data={
        "csrf_token": token, "request_id": "zat-1", "a_deadline": "morgen früh"})
    assert answer.status_code == 400
    page = answer.text
    assert 'value="morgen früh"' in page  # what the GM wrote
    assert '<details class="action" id="d-set_zat" open>' in page  # shown, not folded
    assert "kein Zeitpunkt" in page and 'class="field-error"' in page  # G.2's sentence
    assert "set_zat" not in re.sub(r"<[^>]+>", " ", page)  # named by its label only
    # The ZAT set: the move a player owes shows it as a time in German, never as ISO.
    set_zat = officer.post("/games/anderwelt/officer/act/set_zat", data={
        "csrf_token": token, "request_id": "zat-2", "a_days": "7"})
    assert set_zat.status_code == 303
    anna = signed_in(running.url, email("anderwelt", "Anna"), PASSWORD)
    note = re.search(r'<p class="due-note">(.*?)</p>', anna.get("/games/anderwelt").text,
                     re.S)
    assert note, "Anna owes her move of the round"
    shown = re.sub(r"<[^>]+>", "", note.group(1))
    assert "Jetzt bist du dran · bis " in shown and "2026" in shown, shown
    assert not re.search(r"\d{4}-\d\d-\d\dT", shown), shown


def shoot_now(driver: Any, name: str) -> None:
    """The "now" part at a phone's and a desktop's width."""
    shoot_part(driver, NOW, SHOTS / f"now-{name}")

"""The guide for rule authors (src/scriba/guide/writing-rules.md) followed literally, in Debian's
headless Chromium against a real ``scriba serve``: its first three steps pasted into the
propose form of a Suber game. Step 1 (text only) is proposed and adopted; step 2 (a point
for changing the rules) is proposed, adopted by the players' votes, and the point is then
on the game's page; step 3 (votes counted by majority) is checked with the "Check without
proposing" button — its dry run shown in place, the form kept — then proposed. A broken
step shows the error as the guide does: the line and the caret, preformatted. Screenshots
go to ``build/screenshots/guide-*.png``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from chromium import gone, needs_chromium, sign_in, start_chromium, wait
from serving import Server, seated_game

selenium = pytest.importorskip("selenium", reason="selenium is not installed")
pytestmark = needs_chromium

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_guide import Block, blocks  # noqa: E402 - the guide, read as the suite reads it

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PASSWORD = "guide-page-pass-123"
PLAYERS = ("Anna", "Bruno", "Carla")
GAME = "guide"


def address(player: str) -> str:
    return f"{player.lower()}.guide@example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    running = seated_game(tmp_path_factory.mktemp("guide"), "suber", GAME,
                          "Following the guide", PLAYERS, address, PASSWORD)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp("chromium-guide"))
    driver.implicitly_wait(0)
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def steps() -> dict[str, tuple[str, str, str]]:
    """The guide's steps 1 to 3 as a reader copies them: title, text, code ("" for none)."""
    found: dict[str, tuple[str, str, str]] = {}
    by_title: dict[str, list[Block]] = {}
    for block in blocks("en"):
        by_title.setdefault(block.title, []).append(block)
    for step, title in (("1", "Say why"), ("2", "A point for changing the rules"),
                        ("3", "Majority")):
        code = next((b.text for b in by_title[title] if b.kind == "starlark"), "")
        found[step] = (title, by_title[title][0].rule_text, code)
    return found


def propose_form(driver: Any) -> Any:
    return driver.find_element(By.CSS_SELECTOR, "form#act-propose")


def fill(form: Any, title: str, text: str, code: str) -> None:
    """The form filled as the guide says: a new rule, its title, its text, its code."""
    Select(form.find_element(By.NAME, "c_type")).select_by_value("enact")
    form.find_element(By.NAME, "c_title").send_keys(title)
    form.find_element(By.NAME, "c_text").send_keys(text)
    if code:
        form.find_element(By.NAME, "c_code").send_keys(code)


def press(driver: Any, form: Any, selector: str) -> None:
    form.find_element(By.CSS_SELECTOR, selector).click()
    wait(driver, 30).until(gone(form))


def flash(driver: Any) -> str:
    done = driver.find_elements(By.CSS_SELECTOR, ".flash.ok")
    assert done, driver.page_source[:3000]
    return done[0].text


def act(driver: Any, base: str, player: str, action: str, choose: str = "") -> str:
    """``player`` signs in and sends the form of ``action`` (a vote: for, on the proposal
    offered); the "Done" told."""
    sign_in(driver, base, address(player), PASSWORD)
    driver.get(f"{base}/games/{GAME}")
    form = driver.find_element(By.CSS_SELECTOR, f"form#act-{action}")
    if choose:
        form.find_element(By.CSS_SELECTOR, f"input[type=radio][value={choose}]").click()
    press(driver, form, "button[type=submit]:not([name=check])")
    return flash(driver)


def adopt(driver: Any, base: str) -> None:
    """Every player votes for the open proposal (unanimity, as Suber starts)."""
    for voter in PLAYERS:
        act(driver, base, voter, "vote", choose="yes")


def points(driver: Any, player: str) -> int:
    row = driver.find_element(By.XPATH, f"//section[@aria-labelledby='h-players']"
                                        f"//tr[th[starts-with(normalize-space(), '{player}')]]")
    return int(row.find_element(By.CSS_SELECTOR, "td.score").text)


def shoot(driver: Any, name: str) -> None:
    height = driver.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
    driver.set_window_size(1280, min(int(height) + 120, 8000))
    driver.save_screenshot(str(SHOTS / f"guide-{name}.png"))
    driver.set_window_size(1280, 900)


def test_a_player_follows_the_guides_first_three_steps(server: Server, browser: Any) -> None:
    base = server.url
    guide = steps()

    # The propose form links the guide, in the reader's language.
    sign_in(browser, base, address("Anna"), PASSWORD)
    browser.get(f"{base}/games/{GAME}")
    link = propose_form(browser).find_element(By.PARTIAL_LINK_TEXT, "guide for rule authors")
    link.click()
    wait(browser, 30).until(lambda d: "/guide/writing-rules" in d.current_url)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Writing a rule: a guide for players"
    assert "def on_rule_changed(game, event):" in browser.find_element(By.TAG_NAME, "main").text
    shoot(browser, "0-the-guide")
    browser.get(f"{base}/guide/writing-rules?lang=it")
    assert browser.find_element(By.TAG_NAME, "h1").text == \
        "Scrivere una regola: guida per chi gioca"

    # Step 1: text only. Anna (her turn) pastes it and proposes; all vote for it.
    browser.get(f"{base}/games/{GAME}?lang=en")
    title, text, code = guide["1"]
    assert code == ""
    form = propose_form(browser)
    fill(form, title, text, code)
    press(browser, form, "button[type=submit]:not([name=check])")
    assert "301" in flash(browser)
    adopt(browser, base)
    act(browser, base, "Anna", "roll")  # Suber: the mover rolls once the vote is over
    browser.get(f"{base}/games/{GAME}/rules")
    assert "Say why" in browser.find_element(By.TAG_NAME, "main").text
    shoot(browser, "1-text-only-adopted")

    # Step 2: Bruno's turn. A point for changing the rules: proposed, adopted by the
    # players' votes, and the point is then beside his name.
    sign_in(browser, base, address("Bruno"), PASSWORD)
    browser.get(f"{base}/games/{GAME}")
    before = points(browser, "Bruno")
    title, text, code = guide["2"]
    form = propose_form(browser)
    fill(form, title, text, code)
    press(browser, form, "button[type=submit]:not([name=check])")
    assert "302" in flash(browser)
    adopt(browser, base)
    sign_in(browser, base, address("Bruno"), PASSWORD)
    browser.get(f"{base}/games/{GAME}")
    assert points(browser, "Bruno") == before + 1
    assert points(browser, "Carla") == 0
    shoot(browser, "2-point-added")
    act(browser, base, "Bruno", "roll")

    # Step 3: Carla's turn. First with a mistake (the colon left out): the check shows the
    # error as the guide does, with everything written kept; then as the guide has it:
    # the check's dry run, then proposed.
    sign_in(browser, base, address("Carla"), PASSWORD)
    browser.get(f"{base}/games/{GAME}")
    title, text, code = guide["3"]
    form = propose_form(browser)
    fill(form, title, text, code.replace("context):", "context)", 1))
    press(browser, form, "button[name=check]")
    form = propose_form(browser)
    error = form.find_element(By.CSS_SELECTOR, ".field-error")
    sentences = [p.text for p in error.find_elements(By.TAG_NAME, "p")]
    assert sentences == [
        "Refused: The new rule's code does not compile:",
        "Line 1, column 51: A colon : is missing at the end of the line.",
        "A line that opens a block (def, if, elif, else, for) ends with :, and the block's "
        "lines below it are indented."], sentences
    assert [c.text for c in error.find_elements(By.CSS_SELECTOR, "p code")][:1] == [":"]
    pre = error.find_element(By.TAG_NAME, "pre")
    assert pre.value_of_css_property("white-space") == "pre"
    lines = pre.text.splitlines()
    assert lines[0] == "1 | def transform_votes_required(game, value, context)"
    assert lines[1] == "  | " + " " * 50 + "^"
    assert form.find_element(By.NAME, "c_title").get_attribute("value") == title
    shoot(browser, "3-check-error")

    code_field = form.find_element(By.NAME, "c_code")
    code_field.clear()
    code_field.send_keys(code)
    press(browser, form, "button[name=check]")
    form = propose_form(browser)
    checked = form.find_element(By.CSS_SELECTOR, "section.check")
    told = checked.text
    assert "Checked: nothing was proposed" in told
    assert "The checks found no problem." in told
    assert "Rule 303 (“Majority”) is enacted by proposal 303 of Carla." in told
    # What was written stays, ready to propose.
    assert form.find_element(By.NAME, "c_code").get_attribute("value").rstrip() == \
        code.rstrip()
    assert form.find_element(By.NAME, "c_text").get_attribute("value") == text
    shoot(browser, "3-check-dry-run")
    browser.get(f"{base}/games/{GAME}/proposals")
    assert "303" not in re.sub(r"\s+", " ", browser.find_element(By.TAG_NAME, "main").text)

    browser.get(f"{base}/games/{GAME}")
    form = propose_form(browser)
    fill(form, title, text, code)
    press(browser, form, "button[type=submit]:not([name=check])")
    assert "303" in flash(browser)
    shoot(browser, "3-proposed")

"""Starting a proposal from a recipe, in headless Chromium from Debian (Selenium through
/usr/bin/chromedriver, nothing downloaded) against a real ``scriba serve``.

Anna, whose turn it is in a game of Suber, opens "Start from a recipe" on her propose
form, picks the bonus for an adopted proposal, writes a number of points it does not allow
(the refusal is beside that field, in her language), then one it does; the propose form
comes back filled with the rule's title, text and code, and checked (the dry run of the
filled rule, before anything is proposed); she edits it, checks it again and proposes it.
The proposal's page then shows the code she proposed. Screenshots at a phone's and a
desktop's width go to ``build/screenshots/recipe-*.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chromium import gone, needs_chromium, shoot_part, sign_in, start_chromium, wait
from serving import seated_game

from scriba.service.recipes import Recipes

selenium = pytest.importorskip("selenium", reason="selenium is not installed")
pytestmark = needs_chromium

from selenium.webdriver.common.by import By  # noqa: E402

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PASSWORD = "recipe-form-pass-1"
PLAYERS = ("Anna", "Bruno", "Carla")
GAME = "ricette"
RECIPE = "bonus_for_adoption"
# The recipe and its blank of points as the cookbook words them (reworded there at will).
BONUS = Recipes(None).get(RECIPE, "en")
TITLE = BONUS.title
POINTS = next(b for b in BONUS.blanks if b.name == "points")
RULE = Recipes(None).fill(RECIPE, {"points": "7"}, "en", ruleset="suber")  # as Anna fills it


def email(player: str) -> str:
    return f"{player.lower()}.recipes@example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    running = seated_game(tmp_path_factory.mktemp("recipes"), "suber", GAME,
                          "Recipes", PLAYERS, email, PASSWORD)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp("chromium-recipes"))
    driver.implicitly_wait(0)
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()



def click_and_wait(driver: Any, element: Any) -> None:
    element.click()
    wait(driver, 30).until(gone(element))


def test_a_proposal_started_from_a_recipe(server, browser) -> None:
    base = server.url
    sign_in(browser, base, email("Anna"), PASSWORD)
    browser.get(f"{base}/games/{GAME}")

    # The propose form offers the recipes that fit, folded, each with its summary.
    form = browser.find_element(By.ID, "act-propose")
    recipes = form.find_element(By.CSS_SELECTOR, "details.recipes")
    recipes.find_element(By.TAG_NAME, "summary").click()
    offered = recipes.find_elements(By.CSS_SELECTOR, "li")
    assert any(TITLE in li.text and BONUS.summary in li.text
               for li in offered), [li.text for li in offered]
    shoot(browser, "#act-propose", "list")
    link = recipes.find_element(By.CSS_SELECTOR, f"a[href$='/recipes/{RECIPE}']")
    click_and_wait(browser, link)

    # Its blank as a number field with its bounds, labelled and explained.
    points = browser.find_element(By.NAME, "b_points")
    assert points.get_attribute("type") == "number"
    assert (points.get_attribute("min"), points.get_attribute("max")) == \
        (str(POINTS.minimum), str(POINTS.maximum))
    label = browser.find_element(By.CSS_SELECTOR, "label[for=b-points]").text
    assert label == POINTS.label
    assert browser.find_element(By.ID, "b-points-h").text == POINTS.help

    # A number it does not allow: refused beside the field, the rest kept.
    points.clear()
    points.send_keys("500")
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR,
                                                 "#recipe-form button[name=fill]"))
    field = browser.find_element(By.NAME, "b_points").find_element(By.XPATH, "..")
    error = field.find_element(By.CSS_SELECTOR, ".field-error")
    assert f"{POINTS.label}: write a whole number from {POINTS.minimum} to " \
        f"{POINTS.maximum}" in error.text, error.text
    assert browser.find_element(By.NAME, "b_points").get_attribute("value") == "500"
    assert browser.switch_to.active_element.get_attribute("name") == "b_points"
    assert browser.title.startswith("Refused")
    shoot(browser, "main", "refused")

    # A number it allows: the propose form, filled with the rule it writes.
    points = browser.find_element(By.NAME, "b_points")
    points.clear()
    points.send_keys("7")
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR,
                                                 "#recipe-form button[name=fill]"))
    form = browser.find_element(By.ID, "act-propose")
    assert TITLE in form.find_element(By.CSS_SELECTOR,
                                                                "p.started").text
    assert form.find_element(By.NAME, "c_type").get_attribute("value") == "enact"
    assert form.find_element(By.NAME, "c_title").get_attribute("value") == \
        TITLE
    text = form.find_element(By.NAME, "c_text").get_attribute("value")
    assert text == RULE.text and "7 points" in text, text
    code = form.find_element(By.NAME, "c_code").get_attribute("value")
    assert code == RULE.code.strip("\n") and 'std.add_var("points", 7' in code, code
    # Already checked, as the check button does: the dry run of the rule as filled in.
    check = form.find_element(By.CSS_SELECTOR, "section.check")
    assert "nothing was proposed" in check.text and "Dry run" in check.text, check.text
    assert f"Rule 301 (“{TITLE}”) is enacted" in check.text, check.text
    shoot(browser, "#act-propose", "filled")

    # The author edits the text, then checks the rule again without proposing it.
    box = form.find_element(By.NAME, "c_text")
    box.send_keys(" Anna wrote this.")
    click_and_wait(browser, form.find_element(By.CSS_SELECTOR, "button[name=check]"))
    form = browser.find_element(By.ID, "act-propose")
    check = form.find_element(By.CSS_SELECTOR, "section.check")
    assert "nothing was proposed" in check.text, check.text
    assert form.find_element(By.NAME, "c_text").get_attribute("value").endswith(
        "Anna wrote this.")
    assert 'std.add_var("points", 7' in form.find_element(By.NAME, "c_code") \
        .get_attribute("value")
    opened = browser.find_element(By.CSS_SELECTOR, "section[aria-labelledby=h-open]").text
    assert TITLE not in opened  # checked, not proposed

    # Proposed: the proposal's page shows the rule with the code as filled in.
    click_and_wait(browser, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))
    done = browser.find_elements(By.CSS_SELECTOR, ".flash.ok")
    assert done, browser.find_element(By.TAG_NAME, "main").text[:2000]
    link = browser.find_element(By.PARTIAL_LINK_TEXT, TITLE)
    click_and_wait(browser, link)
    main = browser.find_element(By.TAG_NAME, "main").text
    assert f"{RULE.text} Anna wrote this." in main, main[:2000]
    assert 'std.add_var("points", 7' in browser.find_element(By.CSS_SELECTOR,
                                                             "div.code").text


def shoot(driver: Any, css: str, name: str) -> None:
    shoot_part(driver, css, SHOTS / f"recipe-{name}")

"""The docket and a case's page in Debian's headless Chromium, at a phone's width and a
desktop's: a judge signs in, reads the docket, opens the case and judges it with the form
the page offers (no script needed), and nothing on either page is wider than the screen.
Screenshots go to ``build/screenshots/cases-*.png``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from chromium import gone, needs_chromium, shoot_part, sign_in, start_chromium, wait
from serving import Server

from scriba.service import open_service

selenium = pytest.importorskip("selenium", reason="selenium is not installed")
pytestmark = needs_chromium

from selenium.webdriver.common.by import By  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from casegame import PLAYERS, court_game  # noqa: E402 - the tests' shared game

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PASSWORD = "court-browser-pass-1"
LONG = ("Se un giocatore scrive la sua proposta su un cappello e poi lo indossa durante "
        "la votazione, il cappello è una regola in vigore secondo la regola 212? ") * 3


def address(player: str) -> str:
    return f"{player.lower()}.courtb@example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("courtb")
    db_url = f"sqlite:///{folder / 'court.db'}"
    service = open_service(db_url)
    game = court_game(service, "tribunale")
    for player in PLAYERS:
        service.accounts.create_account(address(player), player, PASSWORD,
                                        language="it")
        service.seats.seat(game, player, address(player))
    service.commands.perform(game, "Bruno", "cfj", {"question": LONG, "about": "212"})
    service.commands.perform(game, "Carla", "cfj", {"question": "Una domanda breve?"})
    service.close()
    running = Server(db_url, log=folder / "server.log")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    driver = start_chromium(tmp_path_factory.mktemp("chromium-court"))
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def test_the_judge_reads_the_docket_and_judges_on_a_phone(server: Server, browser: Any
                                                          ) -> None:
    sign_in(browser, server.url, address("Anna"), PASSWORD)
    browser.get(server.url + "/language?lang=it&next=/games/tribunale/cases")  # a cookie
    docket = browser.find_element(By.TAG_NAME, "main").text
    assert "Caso 1" in docket and "Caso 2" in docket
    assert "giudice: Anna" in docket and "in attesa di giudizio" in docket
    shoot_part(browser, "main", SHOTS / "cases-docket")

    browser.find_element(By.LINK_TEXT, "Caso 1").click()
    wait(browser, 20).until(lambda d: "/cases/1" in d.current_url)
    shoot_part(browser, "main", SHOTS / "cases-case")
    form = browser.find_element(By.ID, "act-judge")
    form.find_element(By.CSS_SELECTOR, "input[value=FALSO]").click()
    form.find_element(By.NAME, "a_reasons").send_keys("Un cappello non è un testo.")
    form.find_element(By.CSS_SELECTOR, "input[type=checkbox][value='212']").click()
    button = form.find_element(By.CSS_SELECTOR, "button[type=submit]")
    button.click()
    wait(browser, 20).until(gone(button))
    assert browser.current_url.endswith("/games/tribunale/cases/1")
    page = browser.find_element(By.TAG_NAME, "main").text
    assert "FALSO" in page and "Un cappello non è un testo." in page
    assert "Anna giudica il caso 1: FALSO" in page
    assert "Regola 212 (revisione 1)" in page
    shoot_part(browser, "main", SHOTS / "cases-judged")

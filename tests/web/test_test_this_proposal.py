"""The "Test this proposal" button in Chromium against a real ``scriba serve``: a player of
the game opens the planted vote farm's page (tests/lab_planted.py), sees the button beside
the dry run with the host's bound in words, presses it, watches the page refresh itself
(no JavaScript) with the turns played, and reads the findings in sentences: the author's
score running away from the same game without it. A reader without a seat sees no
button and may not start a test (the form as a browser would send it); a forged form is
refused; the game itself is untouched."""

from __future__ import annotations

import re
from html import unescape

import httpx
from chromium import gone, needs_chromium, sign_in, start_chromium, wait
from lab_planted import AUTHOR, PLAYERS, plant
from serving import Server, csrf_of, signed_in

from scriba.service import open_service
from scriba.web.i18n import LANGUAGE_COOKIE

pytestmark = needs_chromium

PASSWORD = "lab-button-pass-1"
BOUNDS = {"SCRIBA_LAB_GAMES": "1", "SCRIBA_LAB_TURNS": "12", "SCRIBA_LAB_SEED": "5",
          "SCRIBA_LAB_SECONDS": "300", "SCRIBA_LAB_WORKERS": "2",
          "SCRIBA_LAB_BOTS": "random,for"}


def email(player: str) -> str:
    return f"{player.lower()}.lab@example.org"


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_a_player_tests_the_vote_farm_from_its_page(tmp_path, monkeypatch) -> None:
    from selenium.webdriver.common.by import By

    for name, value in BOUNDS.items():
        monkeypatch.setenv(name, value)  # the server reads them at start
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    service = open_service(db)
    game, number = plant(service, "farm")
    for player in PLAYERS:
        service.accounts.create_account(email(player), player, PASSWORD)
        service.seats.seat(game, player, email(player))
    service.accounts.create_account("ospite.lab@example.org", "Ospite", PASSWORD)
    before = list(service.commands.export_game(game))
    service.close()
    server = Server(db, log=tmp_path / "server.log")
    page = f"/games/{game}/proposals/{number}"
    driver = start_chromium(tmp_path / "chromium")
    try:
        # A reader without a seat: no button, and the form refused.
        guest = signed_in(server.url, "ospite.lab@example.org", PASSWORD)
        guest.cookies.set(LANGUAGE_COOKIE, "en")
        seen = guest.get(page).text
        assert "Test this proposal" not in text_of(seen)
        refused = guest.post(page + "/test", data={"csrf_token": csrf_of(seen)})
        assert refused.status_code == 403
        assert "Only the game's players and its officer may test a proposal." in \
            text_of(refused.text)
        bruno = signed_in(server.url, email("Bruno"), PASSWORD)
        forged = bruno.post(page + "/test", data={"csrf_token": "forged"})
        assert forged.status_code in (400, 403)
        assert httpx.get(f"{server.url}/api/v1/games/{game}/proposals/{number}/test"
                         ).status_code == 404  # neither started a test

        # The author, in Italian, in a browser.
        sign_in(driver, server.url, email(AUTHOR), PASSWORD)
        driver.add_cookie({"name": LANGUAGE_COOKIE, "value": "it"})
        driver.get(server.url + page)
        section = driver.find_element(By.CSS_SELECTOR, "section.lab")
        assert "Metti alla prova questa proposta" in section.text
        assert "Una partita di 12 turni, entro 5 minuti." in section.text
        assert driver.find_elements(By.CSS_SELECTOR, "section.dryrun")  # beside the dry run
        button = section.find_element(By.CSS_SELECTOR, "form button[type=submit]")
        button.click()
        wait(driver, 30).until(gone(button))
        assert driver.current_url.endswith(page)
        # One look at one page: it may reload itself between two separate looks.
        running, refreshes, offers_form = wait(driver, 10).until(lambda drv: drv.execute_script(
            "const lab = document.querySelector('section.lab');"
            "return lab && [lab.innerText,"
            " !!document.querySelector('meta[http-equiv=\"refresh\"]'),"
            " !!lab.querySelector('form')];"))
        if "in corso" in running:  # it refreshes itself while the runs go on
            assert re.search(r"La prova è in corso: giocati \d+ di 24 turni\.", running)
            assert refreshes
            assert not offers_form

        def finished(drv) -> bool:  # the page reloads itself; nothing is clicked
            found = drv.find_elements(By.CSS_SELECTOR, "section.lab ul.lab-findings")
            return bool(found) and "in corso" not in found[0].text
        wait(driver, 400, poll=0.1).until(finished)
        told = driver.find_element(By.CSS_SELECTOR, "section.lab ul.lab-findings").text
        assert "Provata in una partita di 12 turni a partire dalla partita com'è ora." in told
        assert f"Con la proposta, «punti» di {AUTHOR}: da" in told, told
        assert "points" not in told and "{" not in told and "None" not in told
        assert not driver.find_elements(By.CSS_SELECTOR, 'meta[http-equiv="refresh"]')
    finally:
        driver.quit()
        server.stop()
    service = open_service(db)
    try:
        assert list(service.commands.export_game(game)) == before
    finally:
        service.close()

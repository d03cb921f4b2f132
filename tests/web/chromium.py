"""Debian's Chromium driven by Selenium for the browser tests: nothing is downloaded, and a
test module is skipped with the reason when the packages are not installed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# For a module's `pytestmark`.
needs_chromium = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="Debian's chromium and chromium-driver are not installed")


def start_chromium(profile: Path, width: int = 1280, height: int = 900) -> Any:
    """A headless Chromium with its own profile folder, quiet (no updates, no sync)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-extensions",
                 f"--window-size={width},{height}", "--lang=en",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=DriverService(executable_path=str(CHROMEDRIVER)),
                              options=options)
    driver.set_page_load_timeout(60)
    return driver


POLL_S = 0.02  # Selenium's default half-second poll was most of each form's round trip


# Chromium's words when a look meets a page being replaced by the next one; Selenium raises
# them as a plain WebDriverException, not as a stale element.
_REPLACED = ("does not belong to the document", "Cannot find context with specified id",
             "no such execution context", "Execution context was destroyed")


def _page_replaced(error: Exception) -> bool:
    from selenium.common.exceptions import StaleElementReferenceException

    return (isinstance(error, StaleElementReferenceException)
            or any(words in str(error) for words in _REPLACED))


def wait(driver: Any, seconds: float = 30, poll: float = POLL_S) -> Any:
    """``WebDriverWait`` asking every ``poll`` seconds: a page's answer is seen when it
    comes, not up to half a second later. A page that reloads itself (the lab's progress)
    may replace an element between two looks at it: that look is asked again."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    class _Wait(WebDriverWait):
        def until(self, method: Any, message: str = "") -> Any:
            def look(drv: Any) -> Any:
                try:
                    return method(drv)
                except WebDriverException as error:
                    if _page_replaced(error):
                        return False
                    raise
            return super().until(look, message)

    return _Wait(driver, seconds, poll_frequency=poll)


def gone(element: Any) -> Any:
    """Wait condition: the page holding ``element`` has been replaced. Chromium reports
    this as a stale element, or, while the new page loads, as "Node with given id does
    not belong to the document": both mean the old page is gone."""
    from selenium.common.exceptions import WebDriverException

    def predicate(_driver: Any) -> bool:
        try:
            element.is_enabled()
        except WebDriverException:
            return True
        return False
    return predicate


def sign_in(driver: Any, base: str, email: str, password: str) -> None:
    """Sign in through the sign-in page as a person would (cookies of before dropped)."""
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(base + "/signin")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(password)
    button = driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]")
    button.click()
    wait(driver, 20).until(gone(button))
    assert "/signin" not in driver.current_url, driver.page_source[:2000]


def shoot_part(driver: Any, css: str, path_stem: Path) -> None:
    """The part ``css`` at a phone's and a desktop's width, to ``<path_stem>-phone.png``
    and ``-desktop.png`` (the page laid out whole first: a screenshot shows only what is
    in the window); nothing in it may be wider than the part (a phone never scrolls
    sideways)."""
    from selenium.webdriver.common.by import By  # noqa: PLC0415 - with the browser only

    path_stem.parent.mkdir(parents=True, exist_ok=True)
    for width, label in ((390, "phone"), (1280, "desktop")):
        metrics = {"width": width, "height": 900, "deviceScaleFactor": 1,
                   "mobile": width < 500}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        height = driver.execute_script(
            "return Math.ceil(document.documentElement.scrollHeight)")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {**metrics, "height": min(int(height), 6000)})
        part = driver.find_element(By.CSS_SELECTOR, css)
        part.screenshot(f"{path_stem}-{label}.png")
        wider = driver.execute_script(
            "const s = arguments[0], r = s.getBoundingClientRect().right;"
            "return Math.max(0, ...[...s.querySelectorAll('*')].map("
            "  e => e.getBoundingClientRect().right - r));", part)
        assert wider <= 1, f"{path_stem.name}: something is {wider}px wider than the " \
            f"page at {width}px"
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


"""The rating page in chromium (#21): long citations page through every line (buttons and
keys), the Enter hint on Confirm is legible, long lines wrap, and the facts ticked are stored."""

from __future__ import annotations

import re
from typing import Any

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from tests.browser.rating_app import FILE_LINES, BigSuite


def position(driver: Any) -> int:
    value = driver.find_element(By.ID, "item").get_attribute("data-position")
    return -1 if value in (None, "") else int(value)


def open_first(driver: Any, url: str) -> None:
    driver.get(url)
    WebDriverWait(driver, 15).until(lambda d: position(d) == 0)


def press(driver: Any, *keys: str) -> None:
    for key in keys:
        ActionChains(driver).send_keys(key).perform()


def pager_text(driver: Any, number: int) -> str:
    return str(driver.find_element(By.CSS_SELECTOR, f"#pager-{number} .page-where").text)


def first_line(driver: Any, number: int) -> int:
    text = driver.find_element(By.CSS_SELECTOR, f"#lines-{number} span i").text
    return int(text)


def wait_page(driver: Any, number: int, page: int) -> None:
    # read in the page in one step: the pager is replaced as each page arrives
    script = f"return document.getElementById('pager-{number}').dataset.page"
    WebDriverWait(driver, 30).until(lambda d: d.execute_script(script) == str(page))


def test_a_whole_file_pages_by_key_and_button(driver: Any, serve: Any) -> None:
    server = serve("ada")
    open_first(driver, server.url)
    # citation 2 of every answer is a whole 5,000-line file: 125 pages of 40
    assert pager_text(driver, 2) == f"lines 1–40 of 1–{FILE_LINES} (page 1 of 125)"
    assert "current" in driver.find_element(By.ID, "citation-2").get_attribute("class")
    press(driver, "]")
    wait_page(driver, 2, 1)
    assert first_line(driver, 2) == 41
    later = driver.find_element(By.CSS_SELECTOR, "#pager-2 .page-next")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", later)
    later.click()
    wait_page(driver, 2, 2)
    assert pager_text(driver, 2) == f"lines 81–120 of 1–{FILE_LINES} (page 3 of 125)"
    texts = driver.find_elements(By.CSS_SELECTOR, "#lines-2 span")
    assert re.fullmatch(
        r"81topic \d+ line 81: the team wrote something here", texts[0].text.replace("\n", "")
    )
    press(driver, "[")
    wait_page(driver, 2, 1)
    assert first_line(driver, 2) == 41
    # the last page is reachable and holds the file's last line
    press(driver, "]" * 130)
    wait_page(driver, 2, 124)
    spans = driver.find_elements(By.CSS_SELECTOR, "#lines-2 span i")
    assert spans[-1].text == str(FILE_LINES)
    assert driver.find_element(By.CSS_SELECTOR, "#pager-2 .page-next").get_attribute("disabled")
    # paging is not rating: the item is still the first, nothing saved
    assert position(driver) == 0


def luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def test_the_enter_hint_on_confirm_is_legible(driver: Any, serve: Any) -> None:
    server = serve("ada")
    open_first(driver, server.url)
    fg, bg = driver.execute_script(
        "const k = document.querySelector('#btn-confirm kbd'); const s = getComputedStyle(k);"
        "return [s.color, s.backgroundColor];"
    )
    light, dark = sorted((luminance(fg), luminance(bg)), reverse=True)
    contrast = (light + 0.05) / (dark + 0.05)
    assert contrast >= 4.5, (fg, bg, contrast)  # WCAG AA for text


def test_long_cited_lines_wrap(driver: Any, serve: Any) -> None:
    driver.set_window_size(380, 900)  # a phone: every cited line is longer than the box
    server = serve("ada")
    open_first(driver, server.url)
    widths = driver.execute_script(
        "return [...document.querySelectorAll('pre.lines')].map("
        "p => [p.scrollWidth, p.clientWidth, p.querySelector('span').getClientRects().length,"
        " p.querySelector('span').offsetHeight, parseFloat(getComputedStyle(p).lineHeight)"
        " || p.querySelector('span i').offsetHeight])"
    )
    assert widths
    for scroll, client, _, height, line in widths:
        assert scroll <= client  # nothing runs out of the box to the right
        assert height > 1.5 * line  # the first line took more than one row: it wrapped


def test_the_facts_ticked_on_the_page_are_stored(
    driver: Any, serve: Any, big_suite: BigSuite
) -> None:
    server = serve("ada")
    open_first(driver, server.url)
    qid = driver.find_element(By.ID, "question-id").text
    press(driver, "1", "3")
    press(driver, "\ue007")  # Enter
    WebDriverWait(driver, 15).until(lambda d: position(d) == 1)
    (label,) = [x for x in big_suite.labels() if x["id"] == qid and x["rater"] == "ada"]
    assert label["facts"] == [True, False, True]
    assert label["correct"] is False

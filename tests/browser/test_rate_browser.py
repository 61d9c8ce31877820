"""The rating page in a real browser: keyboard only, durable labels, resume, blind, token."""

from __future__ import annotations

import json
import statistics
import time
import urllib.request
from typing import Any
from urllib.error import HTTPError

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait
from tests.browser.rating_app import ARMS, QUESTIONS, BigSuite, Server


def press(driver: Any, *keys: str) -> None:
    for key in keys:
        ActionChains(driver).send_keys(key).perform()


def shift_digit(driver: Any, digit: str) -> None:
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(digit).key_up(Keys.SHIFT).perform()


def position(driver: Any) -> int:
    value = driver.find_element(By.ID, "item").get_attribute("data-position")
    return -1 if value in (None, "") else int(value)


def wait_for_position(driver: Any, expected: int) -> None:
    WebDriverWait(driver, 15).until(lambda d: position(d) == expected)


def open_page(driver: Any, server: Server, expected: int) -> None:
    driver.get(server.url)
    wait_for_position(driver, expected)


def shown(driver: Any) -> dict[str, Any]:
    """What the page shows of the current item, read from the DOM."""
    cites = driver.find_elements(By.CSS_SELECTOR, "#citations .uri")
    return {
        "id": driver.find_element(By.ID, "question-id").text,
        "answer": driver.find_element(By.ID, "answer").text,
        "uris": [c.text for c in cites],
        "correct": driver.find_element(By.ID, "verdict").get_attribute("data-correct") == "true",
        "progress": driver.find_element(By.ID, "progress").text,
    }


def test_rate_three_kill_restart_resume_at_the_fourth(
    driver: Any, serve: Any, big_suite: BigSuite
) -> None:
    server = serve("ada")
    open_page(driver, server, 0)
    assert shown(driver)["progress"] == f"Answer 1 of {3 * QUESTIONS} · 0 rated"
    expected = []

    # 1: all three facts ticked -> correct; citation 2 does not support it (key "b")
    item = shown(driver)
    press(driver, "1", "2", "3", "b")
    assert shown(driver)["correct"] is True
    expected.append((item["id"], item["answer"], True, [item["uris"][1]]))
    press(driver, Keys.ENTER)
    wait_for_position(driver, 1)

    # 2: two facts of three -> not correct; citations 1 and 3 flagged with Shift+digit
    item = shown(driver)
    press(driver, "1", "3")
    shift_digit(driver, "1")
    shift_digit(driver, "3")
    assert shown(driver)["correct"] is False
    expected.append((item["id"], item["answer"], False, [item["uris"][0], item["uris"][2]]))
    press(driver, Keys.ENTER)
    wait_for_position(driver, 2)

    # 3: no fact ticked, verdict flipped to correct by the rater; a toggle toggled back
    item = shown(driver)
    press(driver, "v", "a", "a")
    assert shown(driver)["correct"] is True
    expected.append((item["id"], item["answer"], True, []))
    press(driver, Keys.ENTER)
    wait_for_position(driver, 3)
    fourth = shown(driver)

    server.kill()
    labels = big_suite.labels()
    assert len(labels) == 3
    got = {(lb["id"], lb["correct"], tuple(lb["unsupported"])) for lb in labels}
    assert got == {(qid, correct, tuple(uris)) for qid, _, correct, uris in expected}
    kept = [(qid, correct, uris) for qid, _, correct, uris in expected[:2]]
    assert all(lb["rater"] == "ada" and len(lb["answer_sha256"]) == 64 for lb in labels)

    again = serve("ada")
    open_page(driver, again, 3)
    resumed = shown(driver)
    assert (resumed["id"], resumed["answer"]) == (fourth["id"], fourth["answer"])
    assert resumed["progress"] == f"Answer 4 of {3 * QUESTIONS} · 3 rated"

    # back to the third, which shows this rater's own label; change it: replaced, not added
    press(driver, Keys.BACKSPACE)
    wait_for_position(driver, 2)
    assert "You rated this answer" in driver.find_element(By.ID, "own").text
    assert shown(driver)["answer"] == expected[2][1]
    assert shown(driver)["correct"] is True
    press(driver, "v", "c", Keys.ENTER)  # now not correct, and citation 3 unsupported
    wait_for_position(driver, 3)
    again.kill()
    third = (expected[2][0], False, [item["uris"][2]])
    labels = big_suite.labels()
    assert len(labels) == 3
    got = {(lb["id"], lb["correct"], tuple(lb["unsupported"])) for lb in labels}
    assert got == {(qid, correct, tuple(uris)) for qid, correct, uris in [*kept, third]}


def test_page_address_and_html_name_no_arm(driver: Any, serve: Any) -> None:
    server = serve("bob")
    open_page(driver, server, 0)
    for step in range(5):
        html = driver.page_source
        for arm in ARMS:
            assert arm not in html
            assert arm not in driver.current_url
            assert arm not in server.url
        assert "answers/" not in html
        press(driver, "1", Keys.ENTER)
        wait_for_position(driver, step + 1)
    for path in ("/app.js", "/style.css", "/api/start", "/api/item?pos=0"):
        body = get(server, path)
        assert all(arm not in body for arm in ARMS), path


def get(server: Server, path: str, token: bool = True) -> str:
    base = server.url.split("/?")[0]
    query = server.url.split("?")[1] if token else ""
    sep = "&" if "?" in path else "?"
    url = base + path + (sep + query if query else "")
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def status(url: str, data: bytes | None = None) -> int:
    with pytest.raises(HTTPError) as info:
        urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10).close()
    info.value.close()
    return info.value.code


def test_requests_without_the_token_are_refused(driver: Any, serve: Any) -> None:
    server = serve("cy")
    base = server.url.split("/?")[0]
    driver.get(base + "/")
    assert "forbidden" in driver.find_element(By.TAG_NAME, "body").text
    assert "Answer key" not in driver.page_source
    for path in ("/", "/?token=guess", "/api/start", "/api/item?pos=0", "/app.js"):
        assert status(base + path) == 403, path
    data = json.dumps({"item": "x", "correct": True, "unsupported": []}).encode()
    assert status(base + "/api/label", data) == 403
    assert status(base + "/api/label?token=guess", data) == 403


def test_confirm_to_next_item_timing(driver: Any, serve: Any, big_suite: BigSuite) -> None:
    """Logs (does not assert) how long the rater waits for the next item: target <= 100 ms."""
    server = serve("dee")
    open_page(driver, server, 0)
    rounds = 30
    outside = []
    for step in range(rounds):
        press(driver, "1", "2", "3")
        started = time.perf_counter()
        press(driver, Keys.ENTER)
        wait_for_position(driver, step + 1)
        outside.append(1000 * (time.perf_counter() - started))
    # the last figure lands a frame after the item is shown
    count = "return window.flightdeckTimings.length"
    WebDriverWait(driver, 15).until(lambda d: d.execute_script(count) == rounds)
    timings = driver.execute_script("return window.flightdeckTimings")
    assert len(big_suite.labels()) == rounds
    inside = sorted(timings)
    print(
        f"\nconfirm -> next item painted, {rounds} items, {QUESTIONS} questions x {len(ARMS)} "
        f"arms, 5,000-line files: median {statistics.median(inside):.1f} ms, "
        f"p90 {inside[int(0.9 * rounds) - 1]:.1f} ms, max {inside[-1]:.1f} ms "
        f"(seen through webdriver: median {statistics.median(outside):.1f} ms)"
    )

"""The rating page by mouse and touch, the review list, --arm and --adjudicate (#15)."""

from __future__ import annotations

import json
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from tests.browser.rating_app import QUESTIONS, BigSuite


def position(driver: Any) -> int:
    value = driver.find_element(By.ID, "item").get_attribute("data-position")
    return -1 if value in (None, "") else int(value)


def click(driver: Any, css: str) -> None:
    """Scroll the control to the middle of the window, as a person would, and click it."""
    element = driver.find_element(By.CSS_SELECTOR, css)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
    element.click()


def labels_of(big_suite: BigSuite, arm: str, rater: str) -> list[dict[str, Any]]:
    path = big_suite.suite / "labels" / f"{arm}.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x]
    return [x for x in lines if x["rater"] == rater]


def prelabel(big_suite: BigSuite, arm: str, votes: dict[str, list[bool]]) -> None:
    path = big_suite.suite / "labels" / f"{arm}.jsonl"
    path.parent.mkdir(exist_ok=True)
    with path.open("a") as f:
        for rater, marks in votes.items():
            for n, correct in enumerate(marks):
                line = {"id": f"q{n:02d}", "rater": rater, "correct": correct, "unsupported": []}
                f.write(json.dumps(line) + "\n")


def test_rate_one_arm_with_the_mouse_then_revise_from_the_review_list(
    driver: Any, serve: Any, big_suite: BigSuite
) -> None:
    arm = "baseline-projects"
    # ada has rated all but two answers of this arm (q38, q39): they come up first.
    prelabel(big_suite, arm, {"ada": [True] * (QUESTIONS - 2)})
    server = serve("ada", "--arm", arm)
    driver.get(server.url)
    WebDriverWait(driver, 15).until(lambda d: position(d) >= 0)
    assert driver.find_element(By.ID, "progress").text.endswith(f"· {QUESTIONS - 2} rated")
    first = driver.find_element(By.ID, "question-id").text
    # Every fact ticked and citation 2 flagged, by clicking; then the Confirm button.
    for n in (1, 2, 3):
        click(driver, f"#fact-{n}")
    click(driver, "#flag-2")
    assert driver.find_element(By.ID, "verdict").get_attribute("data-correct") == "true"
    click(driver, "#btn-confirm")
    WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "question-id").text != first)
    second = driver.find_element(By.ID, "question-id").text
    click(driver, "#btn-verdict")  # no fact ticked: flipping says correct
    click(driver, "#btn-verdict")  # and back: not correct
    click(driver, "#btn-confirm")
    # All rated: the review list, every answer of the arm with its verdict.
    WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "done").is_displayed())
    items = driver.find_elements(By.CSS_SELECTOR, "#review .review-item")
    assert len(items) == QUESTIONS
    assert driver.find_element(By.ID, "review-title").text == "All answers rated"
    by_id = {x["id"]: x for x in labels_of(big_suite, arm, "ada")}
    assert by_id[first]["correct"] is True
    assert len(by_id[first]["unsupported"]) == 1
    assert by_id[second]["correct"] is False
    # Revise q00 from the list: flip its verdict; the label is rewritten, not duplicated.
    marks = {i.text.split()[0]: i.text.split("\n")[-1] for i in items}
    assert marks[first] == "correct"
    assert marks[second] == "not correct"
    target = next(i for i in items if i.text.split()[0] == "q00")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
    target.click()
    WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "item").is_displayed())
    assert driver.find_element(By.ID, "question-id").text == "q00"
    click(driver, "#btn-verdict")
    click(driver, "#btn-confirm")
    WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "done").is_displayed())
    mine = labels_of(big_suite, arm, "ada")
    assert len(mine) == QUESTIONS
    assert [x["correct"] for x in mine if x["id"] == "q00"] == [False]
    # Nothing of another arm was shown or written.
    assert not (big_suite.suite / "labels" / "baseline-repo-search.jsonl").exists()
    click(driver, "#btn-finish")
    WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "finished").is_displayed())
    assert server.proc.wait(timeout=30) == 0


def test_adjudication_shows_only_the_answers_the_first_two_split_on(
    driver: Any, serve: Any, big_suite: BigSuite
) -> None:
    arm = "retrieval-mcp"
    bob = [True] * QUESTIONS
    for n in (3, 17, 29):
        bob[n] = False
    prelabel(big_suite, arm, {"ada": [True] * QUESTIONS, "bob": bob})
    server = serve("cy", "--adjudicate")
    driver.get(server.url)
    WebDriverWait(driver, 15).until(lambda d: position(d) >= 0)
    assert driver.find_element(By.ID, "progress").text == "Answer 1 of 3 · 0 rated"
    seen = set()
    for _ in range(3):
        current = driver.find_element(By.ID, "question-id").text
        seen.add(current)
        click(driver, "#btn-confirm")
        WebDriverWait(driver, 15).until(
            lambda d, c=current: (
                d.find_element(By.ID, "done").is_displayed()
                or d.find_element(By.ID, "question-id").text != c
            )
        )
    assert seen == {"q03", "q17", "q29"}
    assert {x["id"] for x in labels_of(big_suite, arm, "cy")} == seen

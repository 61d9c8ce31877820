"""The rating page in a real browser: a judge's disagreement shows only after rating (#14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from tests.browser.rating_app import BigSuite, start_server
from tests.browser.test_rate_browser import open_page, press, shown, wait_for_position
from tests.judging import N, build_judge_project, write_arm


def test_the_judge_shows_only_after_the_rater_rated(
    driver: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    suite = build_judge_project(tmp_path)
    for args in (
        ["knowledge", "seal", str(suite)],
        ["knowledge", "judge", str(suite), "--judge", "facts", "--arm", "arm"],
    ):
        if args[1] == "judge":
            write_arm(suite, "arm", [i % 2 == 0 for i in range(N)])
        subprocess.run(
            [sys.executable, "-m", "flightdeck", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
        )
    server = start_server(BigSuite(tmp_path, suite), "ana")
    try:
        open_page(driver, server, 0)
        after = driver.find_element(By.ID, "after")
        notes = driver.find_element(By.ID, "judges")
        assert not after.is_displayed()
        assert not notes.is_displayed()
        first = shown(driver)["id"]
        facts_say = int(first[1:]) % 2 == 0
        # The rater goes against the judge: nothing ticked reads "not correct"; 1 ticks the fact.
        if not facts_say:
            press(driver, "1")
        assert shown(driver)["correct"] is not facts_say
        press(driver, "\ue007")  # Enter
        wait_for_position(driver, 1)
        assert after.is_displayed()
        said = "correct" if facts_say else "not correct"
        assert after.text.startswith(
            f"On the answer you just rated ({first}): Judge facts disagreed: it said {said}"
        )
        assert not notes.is_displayed()  # the next answer is not rated: nothing about it
        press(driver, "\ue003")  # Backspace: back to the rated answer, where the note stays
        wait_for_position(driver, 0)
        assert notes.is_displayed()
        assert notes.text.startswith(f"Judge facts disagreed: it said {said}")
        assert not after.is_displayed()
    finally:
        server.kill()

"""A real browser (Debian's chromium, driven through chromedriver) and a rating server to drive.

``scripts/install-browser.sh`` installs both (``make test`` runs it first). Selenium Manager
never runs: the driver path is given, the browser path is given and ``SE_OFFLINE`` is set,
so no test downloads a browser build. The server runs in a subprocess so a test can kill it
like a rater's closed terminal would.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.browser.rating_app import BigSuite, Server, build_repo, build_suite, start_server

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture
def driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Headless chromium with a fresh profile; no network beyond 127.0.0.1 is needed."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("chromium or chromedriver missing: run scripts/install-browser.sh (as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # never let Selenium Manager fetch anything
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(flag)
    service = Service(executable_path=str(CHROMEDRIVER), log_output=subprocess.DEVNULL)
    browser = webdriver.Chrome(service=service, options=options)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture(scope="session")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A repository of 40 files of 5,000 lines each (the issue's speed target)."""
    return build_repo(tmp_path_factory.mktemp("big-repo") / "team")


@pytest.fixture
def big_suite(tmp_path: Path, big_repo: tuple[Path, str]) -> BigSuite:
    """40 questions x 3 arms, each answer citing spans of the 5,000-line files."""
    return build_suite(tmp_path, big_repo)


@pytest.fixture
def serve(big_suite: BigSuite) -> Iterator[Any]:
    """``serve(rater)`` starts a server on the big suite; every one is killed at the end."""
    started: list[Server] = []

    def start(rater: str = "ada", *extra: str) -> Server:
        server = start_server(big_suite, rater, *extra)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()

"""The demo's committed answers of its unattended arms are what their harness gives today.

The harnesses' code is not a DVC dependency (a stage cannot list a package's source), so
`dvc status` stays clean when a change to repo-search moves an answer: a new user's
`dvc repro -f` then rewrote the committed `repo-search-passages` answers. Each arm of
params.yaml's `harnesses` is run again here, with its own command, as a new (scratch) arm
in a copy of the demo, and its answers must equal the committed ones byte for byte.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from tests.demo_checkout import DEMO_SUITE, ROOT, demo_checkout, user_env

HARNESSES = yaml.safe_load((ROOT / "params.yaml").read_text())["harnesses"]


@pytest.mark.slow
@pytest.mark.parametrize("arm", sorted(HARNESSES))
def test_the_committed_answers_are_what_the_harness_gives_today(arm: str, tmp_path: Path) -> None:
    root = demo_checkout(tmp_path / "checkout")
    again = f"{arm}-again"
    done = subprocess.run(
        [
            *("flightdeck", "experiment", "run", DEMO_SUITE, "--arm", again),
            *("--harness", HARNESSES[arm], "--by", "test", "--scratch"),
        ],
        cwd=root,
        env=user_env(),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rerun = root / ".flightdeck" / "scratch" / "knowledge-demo-v1" / "answers" / f"{again}.jsonl"
    committed = ROOT / DEMO_SUITE / "answers" / f"{arm}.jsonl"
    assert rerun.read_bytes() == committed.read_bytes()

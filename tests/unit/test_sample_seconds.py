"""A batch harness's ``timing.json`` is the harness's file: whatever it holds, the trial's
time is a finite number of seconds or falls back to the runner's clock (None here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.arms.batch_trial import sample_seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ('{"sample_seconds": 1.25}', 1.25),
        ('{"sample_seconds": 3}', 3.0),
        ('{"sample_seconds": ' + "9" * 4000 + "}", None),  # an int float() cannot hold
        ("[" * 2000 + "]" * 2000, None),  # nested past json's recursion limit
        ('{"sample_seconds": Infinity}', None),
        ('{"sample_seconds": NaN}', None),
        ('{"sample_seconds": -1}', None),
        ('{"sample_seconds": "2"}', None),
        ("[1, 2]", None),
        ("not json", None),
    ],
)
def test_the_harness_time_is_a_finite_number_or_none(
    tmp_path: Path, text: str, seconds: float | None
) -> None:
    (tmp_path / "timing.json").write_text(text)
    assert sample_seconds(tmp_path) == seconds


def test_no_timing_file_is_none(tmp_path: Path) -> None:
    assert sample_seconds(tmp_path) is None

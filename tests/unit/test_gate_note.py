"""What a failed gate says its n needs (issue 21 item 8, issue 22): against the enumeration."""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.params import Params
from flightdeck.scoring.calibrated_levels import calibrate, claims
from flightdeck.scoring.decision import cells
from flightdeck.tasks.gate import small_n_note


def test_at_n16_the_note_names_the_fewest_wins_and_they_are_exact(tmp_path: Path) -> None:
    note = small_n_note(16, Params(root=tmp_path, gate_margin=10.0))
    assert note == (
        "at n = 16 a 10-point margin passes only when the candidate alone is right on at least "
        "3 with 0 the other way, 5 with 1 the other way, 7 with 2 the other way (and more for "
        "each further loss)"
    )
    # Each named count passes and one fewer does not, by the calibrated rule itself.
    cal = calibrate(16, -10.0, alpha=0.025, side="shown_by_score")
    for wins, losses in ((3, 0), (5, 1), (7, 2), (9, 3)):
        assert claims(cal, [wins, wins - 1], [losses, losses]).held.tolist() == [True, False]
    # The demo's failed correctness (8 wins, 3 losses) gets its own row: 9 are needed.
    demo = small_n_note(16, Params(root=tmp_path, gate_margin=10.0), losses=(3,))
    assert "7 with 2 the other way, 9 with 3 the other way (and more" in demo


@pytest.mark.parametrize("margin", [5.0, 10.0, 15.0])
def test_below_the_smallest_n_no_table_passes(tmp_path: Path, margin: float) -> None:
    note = small_n_note(4, Params(root=tmp_path, gate_margin=margin))
    assert note.endswith("the smallest n at which one can is 5")
    for n in range(1, 5):
        cal = calibrate(n, -margin, alpha=0.025, side="shown_by_score")
        assert not claims(cal, *cells(n)).held.any()
    assert claims(calibrate(5, -margin, alpha=0.025, side="shown_by_score"), *cells(5)).held.any()

"""``line_of_place``: the line of a field in a JSON document, for a refusal to name it."""

from __future__ import annotations

import pytest

from flightdeck.files.strict_json import line_of_place

DOCUMENT = b"""{
  "a": 1,
  "b": {"x": [1,
     2, {"y": "z: {[\\","}]},
  "c" : [ ],
  "d":"z"
}
"""


@pytest.mark.parametrize(
    ("place", "line"),
    [
        pytest.param(("a",), 2, id="a-key"),
        pytest.param(("b", "x"), 3, id="a-nested-key"),
        pytest.param(("b", "x", 1), 4, id="an-item"),
        pytest.param(("b", "x", 2, "y"), 4, id="past-an-item"),
        pytest.param(("d",), 6, id="after-an-empty-list"),
        pytest.param(("b", "nope"), 3, id="as-much-of-it-as-is-there"),
        pytest.param(("c", 0), 5, id="no-such-item"),
        pytest.param(("nope",), None, id="nothing-of-it"),
        pytest.param((), None, id="the-whole-value"),
    ],
)
def test_the_line_of_a_place(place: tuple[str | int, ...], line: int | None) -> None:
    assert line_of_place(DOCUMENT, place) == line


def test_a_document_on_one_line_has_no_line_to_name() -> None:
    assert line_of_place(b'{"a": 1, "b": 2}\n', ("b",)) is None

"""params.yaml is read once, and each error names the line of its own key (#23).

The lines come from the YAML parser's marks, kept with each mapping as it is read, so an
entry whose name is also a key elsewhere (a person arm called ``model`` below a judge's
``model:``) is named on its own line, and a flag that overrides nothing reads no file.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from flightdeck.errors import InputError
from flightdeck.params import load_params

TEXT = textwrap.dedent(
    """\
    seed: 1
    judges:
      rubric:
        kind: llm
        model: mockllm/model
        prompt: rubric.txt
    people:
      model:
        from: a.csv
        by: Sam
        model: chat
        date: 2026-12-01
    base: &base
      network: true
    harness_sandbox:
      llm-grep:
        <<: *base
        sandbox: none
    confidence: 0.95
    """
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text)
    return path


def test_an_entry_named_like_a_key_elsewhere_is_named_on_its_own_line(tmp_path: Path) -> None:
    path = write(tmp_path, TEXT)
    with pytest.raises(InputError, match="needs snapshot") as caught:
        load_params(path)
    assert caught.value.line == 8  # `  model:` under people, not the judge's `model:` on 5


@pytest.mark.parametrize(
    ("old", "new", "line", "match"),
    [
        pytest.param("seed: 1", "seed: -1", 1, "seed must be non-negative", id="top-level"),
        pytest.param("confidence: 0.95", "confidence: 2", 19, "confidence", id="last-key"),
        pytest.param("  rubric:", "  ru/bric:", 3, "judge name", id="a-judge-name"),
        pytest.param("sandbox: none", "sandbox: nowhere", 15, "has a bad value", id="section-line"),
    ],
)
def test_each_error_names_its_key_line(
    tmp_path: Path, old: str, new: str, line: int, match: str
) -> None:
    text = TEXT.replace("    date: 2026-12-01\n", "    date: 2026-12-01\n    snapshot: s\n")
    path = write(tmp_path, text.replace(old, new, 1))
    shift = 0 if line < 8 else 1  # the snapshot line added above
    with pytest.raises(InputError, match=match) as caught:
        load_params(path)
    assert caught.value.line == line + shift


def test_params_yaml_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = TEXT.replace("    date: 2026-12-01\n", "    date: 2026-12-01\n    snapshot: s\n")
    path = write(tmp_path, text + "threshold: 15\n")
    reads: list[Path] = []
    real = Path.read_text

    def counting(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting)
    params = load_params(path)
    assert params.with_overrides(seed=2).seed == 2
    with pytest.raises(InputError, match="^--threshold: points, not a proportion"):
        params.with_overrides(threshold=0.15)
    assert reads == [path]
    assert (params.lines["seed"], params.lines["people"], params.lines["threshold"]) == (1, 7, 21)

"""params.yaml's judges: and people: entries as msgspec Structs: every message, on its line.

The expected messages are the ones the isinstance checks before the Structs gave, case for
case (run on main at 3b6011b): the Structs changed how an entry is checked, not what a
user reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flightdeck.errors import InputError
from flightdeck.params import load_params

J = "judges:\n  j:\n"
P = "people:\n  chat:\n"
BASE = "    from: a.csv\n    by: ada\n    model: m\n    snapshot: s\n"
CASES = {
    "facts-ok": J + "    kind: facts\n",
    "llm-ok": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temperature: 1\n",
    "temp-bool": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temperature: true\n",
    "temp-nan": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temperature: .nan\n",
    "temp-inf": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temperature: .inf\n",
    "temp-neg": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temperature: -0.5\n",
    "temp-str": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temperature: warm\n",
    "prompt-empty": J + "    kind: llm\n    model: a/b\n    prompt: ''\n",
    "prompt-int": J + "    kind: llm\n    model: a/b\n    prompt: 3\n",
    "prompt-missing": J + "    kind: llm\n    model: a/b\n",
    "model-noslash": J + "    kind: llm\n    model: ab\n    prompt: r.md\n",
    "model-int": J + "    kind: llm\n    model: 5\n    prompt: r.md\n",
    "facts-extra": J + "    kind: facts\n    prompt: r.md\n",
    "llm-typo": J + "    kind: llm\n    model: a/b\n    prompt: r.md\n    temprature: 0\n",
    "kind-missing": J + "    model: a/b\n",
    "kind-int": J + "    kind: 3\n",
    "spec-str": "judges:\n  j: facts\n",
    "spec-null": "judges:\n  j:\n",
    "judges-list": "judges:\n  - j\n",
    "name-bad": "judges:\n  ../j:\n    kind: facts\n",
    "name-int": "judges:\n  5:\n    kind: facts\n",
    "p-ok": P + BASE + "    date: 2024-06-24\n",
    "p-datetime": P + BASE + "    date: 2024-06-24 10:00:00\n",
    "p-iso-str": P + BASE + "    date: '2024-06-24T10:00:00Z'\n",
    "p-not-date": P + BASE + "    date: 'last tuesday'\n",
    "p-date-int": P + BASE + "    date: 20240624\n",
    "p-missing-date": P + BASE,
    "p-missing-two": P + "    from: a.csv\n    date: 2024-06-24\n",
    "p-unknown": P + BASE + "    date: 2024-06-24\n    note: x\n",
    "p-by-empty": P + BASE.replace("by: ada", "by: ' '") + "    date: 2024-06-24\n",
    "p-model-list": P + BASE.replace("model: m", "model: [m]") + "    date: 2024-06-24\n",
    "p-int-key": P + BASE + "    date: 2024-06-24\n    1: x\n",
    "p-spec-str": "people:\n  chat: a.csv\n",
    "p-list": "people:\n  - chat\n",
    "p-bad-arm": "people:\n  ../x:\n" + BASE + "    date: 2024-06-24\n",
}


EXPECTED = {
    "facts-ok": "ok ([('j', 'facts', None, 0.0)], [])",
    "llm-ok": "ok ([('j', 'llm', 'a/b', 1.0)], [])",
    "temp-bool": "D/params.yaml:2: judge 'j': temperature must be a number 0 to 2, got True",
    "temp-nan": "D/params.yaml:2: judge 'j': temperature must be a number 0 to 2, got nan",
    "temp-inf": "D/params.yaml:2: judge 'j': temperature must be a number 0 to 2, got inf",
    "temp-neg": "D/params.yaml:2: judge 'j': temperature must be a number 0 to 2, got -0.5",
    "temp-str": "D/params.yaml:2: judge 'j': temperature must be a number 0 to 2, got 'warm'",
    "prompt-empty": "D/params.yaml:2: judge 'j' needs prompt: a rubric prompt file",
    "prompt-int": "D/params.yaml:2: judge 'j' needs prompt: a rubric prompt file",
    "prompt-missing": "D/params.yaml:2: judge 'j' needs prompt: a rubric prompt file",
    "model-noslash": "D/params.yaml:2: judge 'j' needs model: an inspect model name such as openai-api/local/qwen2.5 or mockllm/model",
    "model-int": "D/params.yaml:2: judge 'j' needs model: an inspect model name such as openai-api/local/qwen2.5 or mockllm/model",
    "facts-extra": "D/params.yaml:2: judge 'j': unknown key 'prompt' (a typo?); a facts judge takes kind",
    "llm-typo": "D/params.yaml:2: judge 'j': unknown key 'temprature' (a typo?); a llm judge takes kind, model, prompt, temperature",
    "kind-missing": "D/params.yaml:2: judge 'j' needs kind: facts or kind: llm, got {'model': 'a/b'}",
    "kind-int": "D/params.yaml:2: judge 'j' needs kind: facts or kind: llm, got {'kind': 3}",
    "spec-str": "D/params.yaml:2: judge 'j' needs kind: facts or kind: llm, got 'facts'",
    "spec-null": "D/params.yaml:2: judge 'j' needs kind: facts or kind: llm, got None",
    "judges-list": "D/params.yaml:1: judges must map names to {kind: ...}",
    "name-bad": "D/params.yaml:2: judge name '../j' must be letters, digits and . _ - (it names a folder)",
    "name-int": "D/params.yaml:2: judge name 5 must be letters, digits and . _ - (it names a folder)",
    "p-ok": "ok ([], [('chat', '2024-06-24', 'ada')])",
    "p-datetime": "ok ([], [('chat', '2024-06-24T10:00:00', 'ada')])",
    "p-iso-str": "ok ([], [('chat', '2024-06-24T10:00:00Z', 'ada')])",
    "p-not-date": "D/params.yaml:2: person arm 'chat': date 'last tuesday' is not a date; use YYYY-MM-DD or an ISO 8601 time",
    "p-date-int": "D/params.yaml:2: person arm 'chat': date must be a non-empty string",
    "p-missing-date": "D/params.yaml:2: person arm 'chat' needs date: (add it)",
    "p-missing-two": "D/params.yaml:2: person arm 'chat' needs by: (add it)",
    "p-unknown": "D/params.yaml:2: person arm 'chat': unknown key 'note' (a typo?); it takes from, by, model, date, snapshot",
    "p-by-empty": "D/params.yaml:2: person arm 'chat': by must be a non-empty string",
    "p-model-list": "D/params.yaml:2: person arm 'chat': model must be a non-empty string",
    "p-int-key": "D/params.yaml:2: person arm 'chat': unknown key 1 (a typo?); it takes from, by, model, date, snapshot",
    "p-spec-str": "D/params.yaml:2: person arm 'chat' needs from, by, model, date, snapshot, got 'a.csv'",
    "p-list": "D/params.yaml:1: people must map arm names to {from, by, ...}",
    "p-bad-arm": "D/params.yaml:2: arm name '../x' holds '/'; use letters, digits and . _ @ + - only (the name becomes a file name, answers/<arm>.jsonl)",
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_entry_reads_or_is_refused_in_the_same_words(tmp_path: Path, name: str) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(CASES[name])
    try:
        params = load_params(path)
    except InputError as exc:
        got = str(exc).replace(str(tmp_path), "D")
    else:
        judges = sorted((k, v.kind, v.model, v.temperature) for k, v in params.judges.items())
        people = sorted((k, v.date, v.by) for k, v in params.people.items())
        got = "ok " + repr((judges, people))
    assert got == EXPECTED[name]


def test_a_person_arm_paths_start_at_the_project_root(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(CASES["p-ok"])
    person = load_params(path).people["chat"]
    assert (person.source, person.snapshot) == (tmp_path / "a.csv", tmp_path / "s")


def test_an_llm_judge_prompt_starts_at_the_project_root(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(CASES["llm-ok"])
    judge = load_params(path).judges["j"]
    assert (judge.prompt, judge.temperature) == (tmp_path / "r.md", 1.0)

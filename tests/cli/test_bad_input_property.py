"""Random bytes and mutated valid records at every reader, through the real commands (#25).

Each reader is reached the way a user reaches it: questions and keys through ``knowledge
seal``; answers, labels, meta, params.yaml and the holdouts manifest through ``knowledge
score``; a person's JSONL and CSV export through ``knowledge import-answers``. Whatever the
bytes, the command exits 0 (they happened to be valid) or 2 with one ``error:`` line that
names the file, never 3 (a traceback: a bug). A template project is built once (a real git
repository, a sealed suite, a scored-ready arm); each example runs in a fresh copy of it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.builders import FILES_AS_OF, BuiltProject, answer, build_project, labels_for

from flightdeck.cli import cli
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

ADR = "docs/adr/0001-database.md"

# What an attacker or an accident puts into a file: each is inserted at a random place.
SNIPPETS = [
    b"1" * 4301,
    b"-" + b"9" * 5000,
    b"1e400",
    b"-1.5E+999",
    b"NaN",
    b"Infinity",
    b'"\\ud800"',
    b'"\\udfff x"',
    b"\\ud83d",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8: not UTF-8
    b"\xef\xbb\xbf",
    b"\x00",
    b'"id": "q1", ',
    b'"answer": "B", ',
    b'"rater": "ada", ',
    b'"correct": true, ',
    b'"date": "2024-13-45", ',
    b'"as_of": {"sdlc": "' + b"0" * 40 + b'"}, ',
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b",",
    b":",
    b"\n",
    b"\r\n",
    b"\\",
    b"null",
    b"[" * 3000,
]
YAML_SNIPPETS = [
    b"date: 2024-13-45\n",
    b"seed: " + b"1" * 5000 + b"\n",
    b"threshold: 1.0e+400\n",
    b"<<: *nothing\n",
    b"base: &b {seed: 1}\n<<: *b\n",
    b"seed: !!python/object:os.system ls\n",
    b"holdouts: elsewhere\n",
    b"repos: {sdlc: [1]}\n",
    b"people: {x: {date: 2024-02-30}}\n",
    b"seed: 1\nseed: 2\n",
    b"\t",
    b": :\n",
    b"\xff",
]


def mutations(valid: bytes, snippets: list[bytes]) -> st.SearchStrategy[bytes]:
    """Random bytes; or ``valid`` with snippets inserted, bytes cut, a line repeated."""
    at = st.integers(0, len(valid))
    insert = st.lists(st.tuples(at, st.sampled_from(snippets)), min_size=1, max_size=3).map(
        lambda edits: _apply(valid, edits)
    )
    cut = st.tuples(at, st.integers(1, 40)).map(lambda c: valid[: c[0]] + valid[c[0] + c[1] :])
    repeat_key = st.sampled_from(_keys(valid) or [b'"id"']).map(
        lambda key: valid.replace(key + b":", key + b": 1, " + key + b":", 1)
    )
    return st.one_of(st.binary(max_size=300), insert, cut, repeat_key)


# JSON values a mutated record may get: of every type, with the extremes of each
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**4300 - 1, -(10**400), 2**64])
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(["", " ", "\ud800", "2024-13-45", "q1", "sdlc/a.md#L9-L1", "0" * 64]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


def record_mutations(valid: bytes) -> st.SearchStrategy[bytes]:
    """Valid JSON whose records have a field set, added or dropped (values of any type)."""
    text = valid.decode()
    document = (
        not text.lstrip().startswith("{") or "\n" in text.strip() and text.lstrip()[1:2] == "\n"
    )
    records = [json.loads(text)] if document else [json.loads(x) for x in text.splitlines() if x]

    def mutate(edit: tuple[int, str | None, object, bool]) -> bytes:
        index, key, value, drop = edit
        changed = [dict(r) for r in records]
        target = changed[index % len(changed)]
        names = sorted(target) or ["id"]
        name = key if key is not None else names[len(str(value)) % len(names)]
        if drop:
            target.pop(name, None)
        else:
            target[name] = value
        if document:
            return json.dumps(changed[0], indent=2).encode()
        return "".join(json.dumps(r) + "\n" for r in changed).encode()

    return st.tuples(
        st.integers(0, 10), st.none() | st.text(max_size=8), JSON_VALUES, st.booleans()
    ).map(mutate)


def _apply(valid: bytes, edits: list[tuple[int, bytes]]) -> bytes:
    out = valid
    for position, snippet in sorted(edits, reverse=True):
        out = out[:position] + snippet + out[position:]
    return out


def _keys(valid: bytes) -> list[bytes]:
    import re

    return sorted(set(re.findall(rb'"[a-z_0-9]+"(?=:)', valid.replace(b'": ', b'":'))))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> BuiltProject:
    """A sealed suite, an arm ready to score, a person's exports and their attachments; the
    suite's files as they were before sealing are kept in ``unsealed/``."""
    root = tmp_path_factory.mktemp("template")
    project = build_project(root)
    shutil.copytree(project.suite, root / "unsealed")
    repos = RepoSet({"sdlc": project.repo}, root / "cache")
    seal(project.folder, holdouts=root / "holdouts", repos=repos)
    records = [
        answer(project, "q1", "Postgres, for JSONB.", [ADR]),
        answer(project, "q2", "make release, then tag.", ["docs/runbooks/deploy.md"]),
    ]
    project.write_answers("search", records)
    votes = {"ada": [True, False], "bob": [True, True]}
    project.write_labels("search", labels_for(records, votes))
    project.write_meta("search")
    export = {"id": "q1", "answer": "Postgres", "citations": [f"sdlc/{ADR}"]}
    (root / "export.jsonl").write_text(json.dumps(export) + "\n")
    (root / "export.csv").write_text(f'id,answer,citations\nq1,"Postgres, JSONB",sdlc/{ADR}\n')
    attached = root / "attachments" / "sdlc" / ADR
    attached.parent.mkdir(parents=True)
    attached.write_text(FILES_AS_OF[ADR])
    return project


def fresh(
    template: BuiltProject, tmp_path_factory: pytest.TempPathFactory, *, sealed: bool
) -> Path:
    """A new copy of the template project; ``sealed=False``: its suite as before sealing."""
    root = tmp_path_factory.mktemp("example") / "p"
    # the repository is only read: shared by a symlink, not copied
    shutil.copytree(template.root, root, ignore=shutil.ignore_patterns("repos"))
    (root / "repos").symlink_to(template.root / "repos")
    if not sealed:  # nothing registered yet either
        suite = root / "suites" / "demo-v1"
        shutil.rmtree(suite)
        shutil.rmtree(root / "holdouts")
        shutil.copytree(root / "unsealed", suite)
    return root


def run(root: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, str]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, args)
    shutil.rmtree(root.parent, ignore_errors=True)
    return result.exit_code, result.stderr


def assert_clean(code: int, stderr: str, file: str) -> None:
    assert code in (0, 2), f"exit {code}:\n{stderr}"  # 3 is a bug, with its traceback
    if code == 2:
        lines = stderr.splitlines()
        errors = [line for line in lines if line.startswith("error: ")]
        assert len(errors) == 1, stderr
        assert lines[-1] == errors[0], stderr
        assert Path(file).name in errors[0], stderr  # the file, by its path or its name


SCORE = ["knowledge", "score", "suites/demo-v1", "--arm", "search"]
SEAL = ["knowledge", "seal", "suites/demo-v1"]
IMPORT = [
    "knowledge",
    "import-answers",
    "suites/demo-v1",
    "--arm",
    "chat",
    "--by",
    "ada",
    "--model",
    "m",
    "--date",
    "2026-11-20",
    "--snapshot",
    "attachments",
    "--from",
]
# file under test (relative to the project) -> the command that reads it
READERS = {
    "questions": ("suites/demo-v1/questions.jsonl", SEAL),
    "keys": ("suites/demo-v1/keys.jsonl", SEAL),
    "answers": ("suites/demo-v1/answers/search.jsonl", SCORE),
    "labels": ("suites/demo-v1/labels/search.jsonl", SCORE),
    "meta": ("suites/demo-v1/answers/search.meta.json", SCORE),
    "holdouts-manifest": ("holdouts/manifest.json", SCORE),
    "import-jsonl": ("export.jsonl", [*IMPORT, "export.jsonl"]),
    "import-csv": ("export.csv", [*IMPORT, "export.csv"]),
}


SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.slow
@pytest.mark.parametrize("reader", sorted(READERS))
@SETTINGS
@given(data=st.data())
def test_any_bytes_exit_0_or_2_with_one_line(
    reader: str,
    template: BuiltProject,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
) -> None:
    relative, args = READERS[reader]
    sealed = reader not in ("questions", "keys")
    root = fresh(template, tmp_path_factory, sealed=sealed)
    valid = (root / relative).read_bytes()
    json_file = not relative.endswith(".csv")
    strategy = mutations(valid, SNIPPETS)
    if json_file:
        strategy = strategy | record_mutations(valid)
    (root / relative).write_bytes(data.draw(strategy, label="bytes"))
    code, stderr = run(root, monkeypatch, args)
    assert_clean(code, stderr, relative)


@SETTINGS
@given(data=st.data())
def test_any_params_yaml_exits_0_or_2_with_one_line(
    template: BuiltProject,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
) -> None:
    root = fresh(template, tmp_path_factory, sealed=True)
    valid = (root / "params.yaml").read_bytes()
    (root / "params.yaml").write_bytes(data.draw(mutations(valid, YAML_SNIPPETS), label="yaml"))
    code, stderr = run(root, monkeypatch, SCORE)
    last = stderr.splitlines()[-1] if stderr else ""
    if code == 2 and "params.yaml" not in last:
        # a valid but different params.yaml (another holdouts folder, a repository path)
        # sends the command on to another file's error: still exit 2 and one error line
        assert len([x for x in stderr.splitlines() if x.startswith("error: ")]) == 1, stderr
        return
    assert_clean(code, stderr, "params.yaml")

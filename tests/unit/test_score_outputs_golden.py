"""The score's outputs, byte for byte, on a mid-size suite that uses every reader path.

The readers and the rules were made faster (#23) on the promise that what a user reads does
not move: the printed report, ``--json`` and the results files. This suite of 2,500
questions x 3 arms holds what the fast paths must treat as the per-line walk does: CRLF line
endings, blank lines, upper-case hex to be lowered, opaque and spanned uris, labels bound to
their answer's hash, three raters and ties, a spanless flag of a whole file, missing answers.
The hashes were taken from the tree before the change (3b6011b); the seal's time and the
version are masked (and the temporary folder in what it prints), since they are the only words that differ from run to run.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from flightdeck.cli import cli
from flightdeck.project.modes import ReposNotAtHand
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal

KINDS = ["decision-why", "blocker", "what-changed", "how-to", "who-owns"]
ARMS = ["search", "projects", "retrieval"]
COMMIT = "0123456789abcdef0123456789ABCDEF01234567"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(record: dict[str, object]) -> str:
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _write(path: Path, lines: list[str], *, crlf: bool = False, blanks: bool = False) -> None:
    end = "\r\n" if crlf else "\n"
    out = []
    for i, line in enumerate(lines):
        out.append(line + end)
        if blanks and i % 97 == 5:
            out.append(end if i % 2 else "  \t" + end)  # a blank line, empty or white
    path.write_bytes("".join(out).encode())


def _uri(i: int, rng: random.Random) -> str:
    if i % 23 == 0:
        return f"https://wiki.example/page/{i}#L3-L1"  # opaque: its "span" is no span
    if i % 3 == 0:
        return f"sdlc/docs/{i}.md#L{1 + i % 7}-L{9 + i % 11}"
    if i % 3 == 1:
        return f"sdlc/docs/{i}.md#L{1 + i % 5}"
    return f"sdlc/docs/{i}.md"


def build(root: Path, n: int = 2500) -> Path:
    rng = random.Random(23)
    suite = root / "suites" / "golden-v1"
    (suite / "answers").mkdir(parents=True)
    (suite / "labels").mkdir()
    questions, keys = [], []
    for i in range(n):
        question = {
            "id": f"q{i}",
            "question": f"Why did thing {i} change? é",
            "kind": KINDS[i % 5],
            "as_of": {"sdlc": COMMIT if i % 4 else COMMIT.lower()},
            "scope": ["sdlc/docs/**"] if i % 6 == 0 else [],
        }
        base = _uri(i, rng).split("#")[0] if i % 23 else _uri(i, rng)
        digest = _sha(base)
        sources = [{"uri": base, "sha256": digest.upper() if i % 5 == 0 else digest}]
        if i % 9 == 0:
            sources.append({"uri": f"sdlc/docs/extra{i}.md", "sha256": _sha(f"x{i}")})
        keys.append(
            {
                "id": f"q{i}",
                "answer_key": "k",
                "required_facts": ["f", "g"],
                "valid_sources": sources,
            }
        )
        questions.append(question)
    _write(suite / "questions.jsonl", [json.dumps(q, ensure_ascii=False) for q in questions])
    _write(suite / "keys.jsonl", [json.dumps(k) for k in keys], blanks=True)
    seal(
        SuiteFolder(suite),
        repos=RepoSet({}, root / "cache"),
        holdouts=None,
        repos_not_at_hand=ReposNotAtHand.SKIP,
    )
    for a, arm in enumerate(ARMS):
        answers, labels = [], []
        for i in range(n):
            if rng.random() < 0.06:
                continue
            uri = _uri(i, rng)
            good = _sha(uri.split("#")[0] if i % 23 else uri)
            roll = rng.random()
            digest = good if roll < 0.7 else _sha(f"old{i}") if roll < 0.85 else good.upper()
            cites = [{"uri": uri, "sha256": digest}]
            if rng.random() < 0.15:
                cites.append({"uri": f"sdlc/made/up{i}.md", "sha256": good})
            if rng.random() < 0.05:
                cites = []
            record = {"id": f"q{i}", "answer": f"answer {i} ü", "citations": cites}
            answers.append(json.dumps(record, ensure_ascii=a != 1))
            right = rng.random() < 0.35 + 0.2 * a
            raters = ["ada", "bob", "cy"] if i % 11 == 0 else ["ada", "bob"]
            for rater in raters:
                label: dict[str, object] = {
                    "id": f"q{i}",
                    "rater": rater,
                    "correct": right if rng.random() < 0.85 else not right,
                }
                flag = rng.random()
                if cites and flag < 0.08:
                    label["unsupported"] = [cites[0]["uri"].split("#")[0] if i % 23 else uri]
                elif cites and flag < 0.14:
                    label["unsupported"] = [cites[0]["uri"]]
                elif flag < 0.6:
                    label["unsupported"] = []
                if rng.random() < 0.2:
                    label["answer_sha256"] = _canonical(record)
                labels.append(json.dumps(label))
        _write(suite / "answers" / f"{arm}.jsonl", answers, crlf=arm == "projects", blanks=a == 2)
        _write(suite / "labels" / f"{arm}.jsonl", labels, blanks=a == 0)
        meta = {"runner": "harness", "by": "golden", "date": "2026-11-30", "model": "none"}
        meta["knowledge_snapshot"] = {"sdlc": [COMMIT.lower()]}
        (suite / "answers" / f"{arm}.meta.json").write_text(json.dumps(meta))
    return suite


def _masked(data: bytes) -> bytes:
    text = data.decode()
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<sealed_at>", text)
    return re.sub(r"flightdeck \d+\.\d+\.\d+\S*", "flightdeck <version>", text).encode()


PARAMS = """\
seed: 0
resamples: 10000
confidence: 0.95
threshold: 15
min_raters: 2
gate_margin: 15
decision: calibrated
holdouts: holdouts
"""

# sha256 of each output (masked) as the tree before #23's reader work wrote it
GOLDEN: dict[str, str] = {
    "metrics.json": "e67d81455d04d58dcf2968563a319c605481807e50711daf16bb12d4b4906407",
    "report.md": "87b49245f590f719fc96519df351230bf45794a8e8acf6797792680df89fbeb1",
    "results/projects.jsonl": "3e103962a453889868ce1fa06fbc42fa7caddffb1bcc749e5bcdaff14630ba98",
    "results/retrieval.jsonl": "b66fbdec128f129716f5738f6aec302e0d039010ca591be624db41f7e9a5175a",
    "results/search.jsonl": "c867e4f378a3665f74e8c44b7b72073ea7edd2127652f2b0284481a08d2abdbf",
    "stdout.txt": "bc955b5273e27b5bee628cb2902881c547c9efdceb810d7833a07b3ee11944c9",
}


def test_score_outputs_are_byte_identical_to_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the demo's repository and statistics, which the golden run read from the checkout's
    # params.yaml, in a project of its own: no arm here is a scratch arm of the checkout's
    monkeypatch.chdir(tmp_path)
    bundle = Path(__file__).resolve().parents[2] / "demo" / "sdlc.bundle"
    (tmp_path / "params.yaml").write_text(f"repos:\n  sdlc: {bundle}\n" + PARAMS)
    (tmp_path / "holdouts").mkdir()
    suite = build(tmp_path)
    out = tmp_path / "out"
    args = ["knowledge", "score", str(suite), "--baseline", "search", "--candidate", "retrieval"]
    for arm in ARMS:
        args += ["--arm", arm]
    args += ["--resamples", "2000", "--json", str(out / "metrics.json")]
    args += ["--report", str(out / "report.md"), "--results", str(out / "results")]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (out / "stdout.txt").write_bytes(result.stdout.replace(str(tmp_path), "<tmp>").encode())
    files = ["stdout.txt", "metrics.json", "report.md", *(f"results/{a}.jsonl" for a in ARMS)]
    got = {name: hashlib.sha256(_masked((out / name).read_bytes())).hexdigest() for name in files}
    assert got == GOLDEN

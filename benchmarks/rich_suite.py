"""A second, heavier synthetic suite for the score benchmark: records as a real team writes them.

``bench_score.make_suite`` writes the leanest valid records (one source, short texts, two
fields per label), so a speed-up tuned to it could miss the records a team writes. This one
has what the spec allows and people use: two repositories in ``as_of``, scope globs, keys with
several facts and sources (spans included), answers of a few hundred characters (non-ASCII
too) citing up to four sources, labels that bind to the answer's hash, carry the rating
tool's time and the ticked facts, and flag unsupported spans; upper-case hex in a tenth of
the hashes.

    .venv/bin/python benchmarks/rich_suite.py              # 100,000 x 3, 3 runs
    .venv/bin/python benchmarks/rich_suite.py --runs 5 --n 20000
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

KINDS = ["decision-why", "blocker", "what-changed", "how-to", "who-owns"]
REPOS = {"sdlc": "c" * 40, "ops": "d" * 40}
WORDS = [
    "the",
    "deploy",
    "gate",
    "waits",
    "for",
    "review",
    "because",
    "rollback",
    "of",
    "schema",
    "changes",
    "costs",
    "a",
    "day",
]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical_sha(record: dict[str, object]) -> str:
    """The hash a label binds to: the answer as canonical JSON (SPEC, labels)."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _sha(text)


def make_rich_suite(root: Path, n: int, arms: list[str], *, seed: int = 7) -> Path:
    """A sealed suite of ``n`` questions, answers and two raters' labels for each arm."""
    from flightdeck.project.modes import ReposNotAtHand
    from flightdeck.project.suite_folder import SuiteFolder
    from flightdeck.suite.repos import RepoSet
    from flightdeck.tasks.knowledge import seal

    rng = random.Random(seed)
    suite = root / "suites" / f"rich-{n}"
    (suite / "answers").mkdir(parents=True)
    (suite / "labels").mkdir()
    sources: dict[int, list[dict[str, str]]] = {}
    with (suite / "questions.jsonl").open("w") as q, (suite / "keys.jsonl").open("w") as k:
        for i in range(n):
            scope = ["sdlc/docs/**/*.md", f"sdlc/services/s{i % 50}/**"] if i % 3 else []
            as_of = dict(REPOS) if i % 4 == 0 else {"sdlc": REPOS["sdlc"]}
            text = f"Why does service s{i % 50} wait {i % 7} days before a release — step {i}?"
            q.write(
                json.dumps(
                    {
                        "id": f"Q-{i:06d}",
                        "question": text,
                        "kind": KINDS[i % 5],
                        "as_of": as_of,
                        "scope": scope,
                    }
                )
                + "\n"
            )
            mine = [
                {"uri": f"sdlc/docs/adr/{i:06d}.md#L{3 + j}-L{9 + j}", "sha256": _sha(f"{i}.{j}")}
                for j in range(1 + i % 3)
            ]
            if i % 10 == 0:
                mine[0]["sha256"] = mine[0]["sha256"].upper()
            sources[i] = mine
            facts = [f"fact {j} of {i}: " + " ".join(rng.sample(WORDS, 5)) for j in range(3)]
            k.write(
                json.dumps(
                    {
                        "id": f"Q-{i:06d}",
                        "answer_key": " ".join(rng.sample(WORDS, 8)),
                        "required_facts": facts,
                        "valid_sources": mine,
                    }
                )
                + "\n"
            )
    seal(
        SuiteFolder(suite),
        repos=RepoSet({}, root / "cache"),
        holdouts=root / "holdouts",
        repos_not_at_hand=ReposNotAtHand.SKIP,
    )
    for a, arm in enumerate(arms):
        p_right = 0.45 + 0.15 * a
        with (
            (suite / "answers" / f"{arm}.jsonl").open("w") as ans,
            (suite / "labels" / f"{arm}.jsonl").open("w") as lab,
        ):
            for i in range(n):
                if rng.random() < 0.03:
                    continue
                cites = [dict(s) for s in sources[i] if rng.random() < 0.85]
                if rng.random() < 0.3:
                    cites.append({"uri": f"ops/runbooks/r{i % 97}.md#L1", "sha256": _sha(f"x{i}")})
                if rng.random() < 0.1:
                    cites.append(
                        {
                            "uri": "https://wiki.example.com/page?id=" + str(i),
                            "sha256": _sha(f"w{i}"),
                        }
                    )
                words = " ".join(rng.choices(WORDS, k=40 + i % 40))
                record = {
                    "id": f"Q-{i:06d}",
                    "answer": f"Réponse {i}: {words}.",
                    "citations": cites,
                }
                ans.write(json.dumps(record, ensure_ascii=i % 2 == 0) + "\n")
                bound = _canonical_sha(record)
                right = rng.random() < p_right
                for r, rater in enumerate(("ada.lovelace", "grace.hopper")):
                    vote = right if rng.random() < 0.88 else not right
                    flagged = [c["uri"] for c in cites if rng.random() < 0.08]
                    label = {
                        "id": f"Q-{i:06d}",
                        "rater": rater,
                        "correct": vote,
                        "unsupported": flagged,
                        "answer_sha256": bound,
                        "time": f"2026-11-{1 + i % 28:02d}T10:{r:02d}:00Z",
                        "facts": [vote or rng.random() < 0.3 for _ in range(3)],
                    }
                    lab.write(json.dumps(label) + "\n")
        meta = {
            "runner": "harness",
            "by": "bench",
            "date": "2026-11-30",
            "model": "none",
            "knowledge_snapshot": {"sdlc": [REPOS["sdlc"]], "ops": [REPOS["ops"]]},
        }
        (suite / "answers" / f"{arm}.meta.json").write_text(json.dumps(meta))
    return suite


def main() -> None:
    """Time the whole ``knowledge score`` process on the rich suite, as bench_score does."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_score import ARMS, load, score_cmd, summary, timed

    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    n = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        suite = make_rich_suite(root, n, ARMS)
        size = sum(f.stat().st_size for f in suite.rglob("*.jsonl")) / 2**20
        print(f"rich suite: {n:,} questions x 3 arms, {size:.0f} MiB of JSON Lines; {load()}")
        print(f"score, 10,000 resamples: {summary(timed(score_cmd(suite), root, runs))}; {load()}")


if __name__ == "__main__":
    main()

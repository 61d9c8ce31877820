"""The offline dry run end to end (#21 item 1): the README's own commands, then `knowledge score`.

The README's dry-run block (read out of README.md, not copied here) runs verbatim in a copy
of the demo project, through the real CLI and the default bubblewrap sandbox, in a shell
with no provider variable at all: `agent llm --model mockllm/model` and `agent attached
--model mockllm/model` answer every question of the demo with the network closed. Their
metas say it was a dry run; `knowledge score` refuses those answers with one line naming
`--allow-dry-run`, and with the flag scores them and says so in the report.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.demo_checkout import (
    DEMO_SUITE,
    ROOT,
    answer_sha256,
    demo_checkout,
    read_jsonl,
    user_env,
)
from tests.doc_examples import markdown_examples

from flightdeck.arms.agents.dry_run import MARK

DRY = [e for e in markdown_examples(ROOT) if "mockllm/model" in e.script]
SCRATCH = Path(".flightdeck/scratch/knowledge-demo-v1")  # arms params.yaml does not run


def arms_of(script: str) -> dict[str, str]:
    """``--arm NAME`` of each ``experiment run`` in the script -> its agent (llm, attached)."""
    found = {}
    for command in script.replace("\\\n", " ").splitlines():
        words = command.split()
        if "run" in words and "--arm" in words and "agent" in words:
            found[words[words.index("--arm") + 1]] = words[words.index("agent") + 1]
    return found


def test_the_readme_documents_both_dry_runs() -> None:
    agents = {agent for e in DRY for agent in arms_of(e.script).values()}
    assert agents == {"llm", "attached"}, [e.where for e in DRY]


def flightdeck(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["flightdeck", *args],
        cwd=root,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def rate_every_answer(root: Path, arm: str) -> None:
    """Two raters' labels for every answer, bound to its hash, as `knowledge rate` writes them."""
    records = read_jsonl(root / SCRATCH / "answers" / f"{arm}.jsonl")
    labels = [
        {"id": r["id"], "rater": rater, "correct": False, "unsupported": [],
         "answer_sha256": answer_sha256(r)}
        for r in records
        for rater in ("ana", "ravi")
    ]  # fmt: skip
    folder = root / SCRATCH / "labels"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{arm}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))


@pytest.mark.parametrize("example", DRY, ids=[e.id for e in DRY])
def test_the_dry_run_completes_offline_and_score_refuses_it_unless_asked(
    tmp_path: Path, example: object
) -> None:
    from tests.doc_examples import Example

    assert isinstance(example, Example)
    root = demo_checkout(tmp_path / "checkout")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", example.script],
        cwd=root,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    questions = [q["id"] for q in read_jsonl(root / DEMO_SUITE / "questions.jsonl")]
    for arm, agent in arms_of(example.script).items():
        # every trial completed, in the default sandbox, with the network closed
        ledger = read_jsonl(root / SCRATCH / "runs" / f"{arm}.jsonl")
        assert sorted(e["id"] for e in ledger if e["status"] == "ok") == sorted(questions)
        answers = read_jsonl(root / SCRATCH / "answers" / f"{arm}.jsonl")
        assert sorted(a["id"] for a in answers) == sorted(questions)
        mark = MARK.format(model="mockllm/model")
        assert all(a["answer"].startswith(mark) for a in answers)
        assert sum(bool(a["citations"]) for a in answers) > len(questions) // 2  # tools ran
        meta = json.loads((root / SCRATCH / "answers" / f"{arm}.meta.json").read_text())
        assert (meta["sandbox"]["mode"], meta["sandbox"]["network"]) == ("bwrap", False)
        assert meta["harness_needs"] == {
            "harness": f"flightdeck experiment agent {agent}",
            "model": "mockllm/model",
            "provider": "mockllm",
            "network": {"needed": False, "opened": False},
            "pass_env": [],
            "dry_run": True,
        }
        assert meta["provenance"]["dry_run"] is True

        # score refuses the dry run: one line, exit 2, naming the flag
        refused = flightdeck(root, "knowledge", "score", DEMO_SUITE, "--arm", arm)
        assert refused.returncode == 2
        assert refused.stderr == (
            f"error: {SCRATCH / 'answers' / f'{arm}.meta.json'}: arm {arm!r} is a dry run "
            "(mockllm/model: no model answered); run it with a real model under a new arm "
            "name, or pass --allow-dry-run to score it anyway (to check the pipeline, never to "
            "decide)\n"
        )
        # rated like any arm, it scores with --allow-dry-run, and the report says what it is
        rate_every_answer(root, arm)
        report = tmp_path / f"{arm}.md"
        scored = flightdeck(
            root, "knowledge", "score", DEMO_SUITE, "--arm", arm, "--allow-dry-run",
            "--report", str(report), "--json", str(tmp_path / f"{arm}.json"),
        )  # fmt: skip
        assert scored.returncode == 0, scored.stderr
        line = next(x for x in report.read_text().splitlines() if x.startswith(f"- **{arm}**"))
        assert "model mockllm/model" in line
        assert "**dry run: no model answered (scored with --allow-dry-run)**" in line
        assert "dry run: no model answered" in scored.stdout

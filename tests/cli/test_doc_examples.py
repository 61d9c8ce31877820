"""Every documented model example runs verbatim against a local OpenAI-compatible server (#21).

The examples are read out of the docs as they ship (:mod:`tests.doc_examples`): the README's
and ``examples/*.md``'s shell blocks, each command's ``--help`` example, and the commented
model entries of the shipped ``params.yaml`` and of the one ``flightdeck init`` writes. Each
runs in a copy of the demo project, in a shell with no provider variable but those the
example sets, against the stand-in model on 127.0.0.1 (:mod:`tests.standin_model`): the only
change is the server's port, ``127.0.0.1:8000`` -> the stand-in's. A commented params entry
runs as the pipeline's ``run`` stage would run it (its ``cmd`` read from ``dvc.yaml``), with
``LOCAL_BASE_URL`` and ``LOCAL_API_KEY`` exported as its comment says.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from tests.demo_checkout import DEMO_SUITE, ROOT, demo_checkout, read_jsonl, user_env
from tests.doc_examples import (
    MODEL_AGENT_RE,
    Example,
    commented_params,
    help_examples,
    markdown_examples,
)
from tests.standin_model import StandInServer

from flightdeck.cli import cli

DOCUMENTED_PORT = "127.0.0.1:8000"
PIN = "git+https://example.com/team/flightdeck@" + "0" * 40  # what CI would install
MARKDOWN = markdown_examples(ROOT)
HELP = help_examples(cli)
QUESTIONS = [q["id"] for q in read_jsonl(ROOT / DEMO_SUITE / "questions.jsonl")]


@pytest.fixture(scope="module")
def model() -> Iterator[StandInServer]:
    with StandInServer() as server:
        yield server


def run_script(root: Path, script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def arms_run(script: str) -> list[str]:
    """The ``--arm`` of each ``experiment run`` of a script."""
    joined = re.sub(r"\\\n\s*", " ", script)
    return [
        line.split("--arm", 1)[1].split()[0]
        for line in joined.splitlines()
        if "experiment run" in line and "--arm" in line
    ]


def every_question_answered(root: Path, arm: str) -> None:
    tracked = root / DEMO_SUITE / "answers" / f"{arm}.jsonl"
    scratch = root / ".flightdeck" / "scratch" / "knowledge-demo-v1" / "answers" / f"{arm}.jsonl"
    answers = read_jsonl(tracked if tracked.exists() else scratch)
    assert sorted(a["id"] for a in answers) == sorted(QUESTIONS), arm


def test_the_docs_hold_model_examples_in_every_place() -> None:
    places = {e.where.split(":")[0] for e in MARKDOWN}
    assert {"README.md", "examples/README.md"} <= places
    assert {e.where for e in HELP} >= {
        "--help of experiment agent llm",
        "--help of experiment agent attached",
        "--help of experiment mcp",
        "--help of experiment mcp repo-search",
    }
    # a pip line is left out, so the extra it installs must be the project's
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for example in MARKDOWN:
        for line in example.skipped:
            assert re.search(r"pip install -e '\.\[(\w+)\]'", line), line
            assert re.search(r"\[(\w+)\]", line)[1] in extras  # type: ignore[index]


def check_example(example: Example, tmp_path: Path, model: StandInServer) -> None:
    assert "anthropic/" not in example.script.split("#")[0] or "mockllm" in example.script
    root = demo_checkout(tmp_path / "checkout")
    before = len(model.requests)
    script = example.script.replace(DOCUMENTED_PORT, f"127.0.0.1:{model.port}")
    done = run_script(root, script, user_env())
    assert done.returncode == 0, f"{example.where}:\n{script}\n{done.stdout}\n{done.stderr}"
    for arm in arms_run(script):
        every_question_answered(root, arm)
    if "mockllm/model" not in script:
        assert len(model.requests) > before, "the example never reached the model"


@pytest.mark.parametrize("example", MARKDOWN, ids=[e.id for e in MARKDOWN])
def test_a_markdown_example_runs_verbatim(
    example: Example, tmp_path: Path, model: StandInServer
) -> None:
    check_example(example, tmp_path, model)


@pytest.mark.parametrize("example", HELP, ids=[e.id for e in HELP])
def test_a_help_example_runs_verbatim(
    example: Example, tmp_path: Path, model: StandInServer
) -> None:
    check_example(example, tmp_path, model)


def init_params(tmp_path: Path) -> str:
    """The params.yaml `flightdeck init` writes, in a fresh git repository."""
    folder = tmp_path / "team"
    folder.mkdir()
    subprocess.run(["git", "init", "--quiet", str(folder)], check=True)
    done = subprocess.run(
        ["flightdeck", "init", str(folder), "--no-dvc", "--install", PIN],
        env=user_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return (folder / "params.yaml").read_text()


def run_stage_command(arm: str, harness: str) -> str:
    """The shell command `dvc repro` runs for a harnesses entry: dvc.yaml's `run` stage."""
    stage = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["run"]["do"]["cmd"]
    values = {"suite": "knowledge-demo-v1", "key": arm, "item": harness}
    return re.sub(r"\$\{(\w+)\}", lambda m: values[m[1]], stage)


@pytest.mark.parametrize("source", ["params.yaml", "flightdeck init"])
def test_the_commented_params_entries_run_as_the_pipeline_runs_them(
    source: str, tmp_path: Path, model: StandInServer
) -> None:
    root = demo_checkout(tmp_path / "checkout")
    if source == "params.yaml":
        found = commented_params((ROOT / "params.yaml").read_text(), source)
        params_text = found.uncommented
        assert set(found.harnesses) == {"baseline-projects-api", "llm-grep", "llm-retrieval"}
    else:
        found = commented_params(init_params(tmp_path), source)
        assert set(found.harnesses) == {"llm-grep", "llm-retrieval"}
        # the team's params would run them as well; here they join the demo's
        params = yaml.safe_load((root / "params.yaml").read_text())
        params["harnesses"].update(found.harnesses)
        params_text = yaml.safe_dump(params, sort_keys=False)
        assert yaml.safe_load(found.uncommented)["harnesses"].keys() >= found.harnesses.keys()
    (root / "params.yaml").write_text(params_text)
    env = user_env(LOCAL_BASE_URL=model.base_url, LOCAL_API_KEY="none")
    for arm, harness in found.harnesses.items():
        assert MODEL_AGENT_RE.search(harness)
        assert "openai-api/local/" in harness, f"{source}: {arm} needs a server on loopback"
        before = len(model.requests)
        done = run_script(root, run_stage_command(arm, " ".join(harness.split())), env)
        assert done.returncode == 0, f"{source} {arm}:\n{done.stdout}\n{done.stderr}"
        # the arm is the pipeline's now: its answers are the tracked ones
        answers = read_jsonl(root / DEMO_SUITE / "answers" / f"{arm}.jsonl")
        assert sorted(a["id"] for a in answers) == sorted(QUESTIONS)
        assert len(model.requests) > before

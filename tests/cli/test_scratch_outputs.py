"""Scratch arms leave the pipeline's tracked files alone (#21): score and import-answers.

A new user's dry run (`knowledge score --arm llm-dry --allow-dry-run`) used to rewrite the
pipeline's metrics, report and picture, add results and a line to the tracked ledger, so
`dvc status` showed the score stage changed; and `import-answers` of an arm params.yaml does
not name wrote into the tracked answers folder, while a run of it went to scratch.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.builders import BuiltProject, write_jsonl

from flightdeck.cli import cli

SCRATCH = Path(".flightdeck/scratch/demo-v1")
ADR = "docs/adr/0001-database.md"


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, list(args), prog_name="flightdeck")


@pytest.fixture
def pipeline(project: BuiltProject, runner: CliRunner) -> BuiltProject:
    """A pipeline project (params.yaml names a harness) whose one arm ``base`` is scored."""
    with (project.root / "params.yaml").open("a") as f:
        f.write("harnesses:\n  base: python -m flightdeck experiment agent repo-search\n")
        f.write("arms: [base]\n")
    assert invoke(runner, "knowledge", "seal", str(project.suite)).exit_code == 0
    project.write_arm("base", [True, True, False, False])
    result = invoke(runner, "knowledge", "score", str(project.suite))
    assert result.exit_code == 0, result.output
    return project


def write_scratch_arm(project: BuiltProject, arm: str) -> None:
    """``arm`` answered, rated and with its meta, in the scratch folder (as a scratch run)."""
    project.write_arm(arm, [True, True, True, False])
    for tracked, folder in (
        (project.suite / "answers" / f"{arm}.jsonl", "answers"),
        (project.suite / "answers" / f"{arm}.meta.json", "answers"),
        (project.suite / "labels" / f"{arm}.jsonl", "labels"),
    ):
        (SCRATCH / folder).mkdir(parents=True, exist_ok=True)
        shutil.move(tracked, SCRATCH / folder / tracked.name)


def tracked_bytes(project: BuiltProject) -> dict[str, bytes]:
    """Every file the pipeline tracks that a score could write, by its path."""
    root = project.root
    files = [
        root / "metrics" / "demo-v1.json",
        root / "reports" / "demo-v1.md",
        root / "reports" / "demo-v1.svg",
        project.suite / "scores.jsonl",
        *sorted((root / "results" / "demo-v1").iterdir()),
        *sorted((project.suite / "answers").iterdir()),
    ]
    return {str(path.relative_to(root)): path.read_bytes() for path in files}


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param(("--arm", "trial"), id="scratch-arm-alone"),
        pytest.param(
            ("--arm", "base", "--arm", "trial", "--baseline", "base", "--candidate", "trial"),
            id="beside-a-pipeline-arm",
        ),
    ],
)
def test_a_score_with_a_scratch_arm_writes_nothing_tracked(
    runner: CliRunner, pipeline: BuiltProject, extra: tuple[str, ...]
) -> None:
    write_scratch_arm(pipeline, "trial")
    before = tracked_bytes(pipeline)
    result = invoke(runner, "knowledge", "score", str(pipeline.suite), *extra)
    assert result.exit_code == 0, result.output
    assert tracked_bytes(pipeline) == before
    assert not (pipeline.root / "results" / "demo-v1" / "trial.jsonl").exists()
    metrics, report = SCRATCH / "metrics.json", SCRATCH / "report.md"
    assert sorted(json.loads(metrics.read_text())["arms"]) == sorted({"trial", *extra[1::2]})
    assert report.is_file()
    assert (SCRATCH / "report.svg").is_file()
    assert (SCRATCH / "results" / "trial.jsonl").is_file()
    ledger = [json.loads(line) for line in (SCRATCH / "scores.jsonl").read_text().splitlines()]
    assert [r["arm"] for r in ledger] == ["trial"]  # base was recorded already, tracked
    assert result.stdout.splitlines()[-2:] == [
        f"wrote {metrics}, {report}, {SCRATCH / 'report.svg'}",
        f"scratch score: trial not in the pipeline; results in {SCRATCH / 'results'}, "
        f"ledger lines in {SCRATCH / 'scores.jsonl'}",
    ]


def test_a_scratch_score_keeps_its_ledger_rule(runner: CliRunner, pipeline: BuiltProject) -> None:
    write_scratch_arm(pipeline, "trial")
    assert (
        invoke(runner, "knowledge", "score", str(pipeline.suite), "--arm", "trial").exit_code == 0
    )
    answers = SCRATCH / "answers" / "trial.jsonl"
    answers.write_text(answers.read_text().replace("JSONB", "JSONB, mostly"))
    result = invoke(runner, "knowledge", "score", str(pipeline.suite), "--arm", "trial")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {SCRATCH / 'scores.jsonl'}:1: arm 'trial' was scored")


def test_output_paths_given_are_written_as_given(
    runner: CliRunner, pipeline: BuiltProject, tmp_path: Path
) -> None:
    write_scratch_arm(pipeline, "trial")
    before = tracked_bytes(pipeline)
    out = tmp_path / "mine"
    result = invoke(
        runner,
        "knowledge",
        "score",
        str(pipeline.suite),
        "--arm",
        "trial",
        "--json",
        str(out / "m.json"),
        "--report",
        str(out / "r.md"),
        "--results",
        str(out / "results"),
    )
    assert result.exit_code == 0, result.output
    assert tracked_bytes(pipeline) == before
    for written in ("m.json", "r.md", "r.svg", "results/trial.jsonl"):
        assert (out / written).is_file(), written
    assert not (SCRATCH / "metrics.json").exists()
    assert (SCRATCH / "scores.jsonl").is_file()  # the ledger line is still kept apart


def import_args(project: BuiltProject, arm: str) -> list[str]:
    record = {"id": "q1", "answer": "JSONB", "citations": [{"uri": f"sdlc/{ADR}"}]}
    source = write_jsonl(project.root / "person.jsonl", [record])
    return [
        "knowledge",
        "import-answers",
        str(project.suite),
        "--arm",
        arm,
        "--from",
        str(source),
        "--by",
        "ada",
        "--model",
        "chat-model-1",
        "--date",
        "2026-11-20",
        "--snapshot-commit",
        f"sdlc={project.as_of}",
    ]


def test_import_of_an_arm_the_pipeline_does_not_name_goes_to_scratch(
    runner: CliRunner, pipeline: BuiltProject
) -> None:
    before = tracked_bytes(pipeline)
    result = invoke(runner, *import_args(pipeline, "projects-ada"))
    assert result.exit_code == 0, result.output
    assert tracked_bytes(pipeline) == before
    scratch = SCRATCH / "answers"
    assert sorted(p.name for p in scratch.iterdir()) == [
        "projects-ada.jsonl",
        "projects-ada.meta.json",
    ]
    assert f"into {pipeline.suite.relative_to(pipeline.root)}" not in result.stdout
    assert f"into {scratch / 'projects-ada.jsonl'}" in result.stdout
    status = invoke(runner, "knowledge", "status", str(pipeline.suite))
    assert "projects-ada" in status.stdout  # found by name where it lives


def test_import_of_a_person_arm_params_names_stays_tracked(
    runner: CliRunner, pipeline: BuiltProject
) -> None:
    with (pipeline.root / "params.yaml").open("a") as f:
        f.write(
            "people:\n  projects-ada:\n    from: person.jsonl\n    by: ada\n"
            "    model: chat-model-1\n    date: '2026-11-20'\n    snapshot: attachments\n"
        )
    result = invoke(runner, *import_args(pipeline, "projects-ada"))
    assert result.exit_code == 0, result.output
    assert (pipeline.suite / "answers" / "projects-ada.jsonl").is_file()
    assert not (SCRATCH / "answers").exists()

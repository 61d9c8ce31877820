"""dvc.yaml calls real flightdeck commands, lists only params that params.yaml has, and is
the generic pipeline `flightdeck init` writes: the demo is one instance of it (#15)."""

from __future__ import annotations

import re
import shlex
from typing import Any

import click
import pytest
import yaml
from tests.pipeline.project import ROOT

from flightdeck.cli import cli

DVC_YAML = yaml.safe_load((ROOT / "dvc.yaml").read_text())
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())


Item = tuple[str, Any]


def _render(text: str, item: Item | None) -> str:
    """Fill ${...} the way DVC does for the values this pipeline uses."""

    def value(match: re.Match[str]) -> str:
        name, _, field = match[1].partition(".")
        if item is not None and name in ("key", "item"):
            found = item[0] if name == "key" else item[1]
            return str(found[field] if field else found)
        found = PARAMS[name]
        return str(found[field] if field else found)

    return re.sub(r"\$\{\s*([\w.]+)\s*\}", value, text)


def _stages() -> list[tuple[str, dict[str, Any], Item | None]]:
    stages = []
    for name, stage in DVC_YAML["stages"].items():
        if "foreach" in stage:
            items = PARAMS[stage["foreach"].strip("${} ")]
            for key, item in items.items():
                stages.append((f"{name}@{key}", stage["do"], (key, item)))
        else:
            stages.append((name, stage, None))
    return stages


STAGES = _stages()


def _commands(stage: dict[str, Any], item: Item | None) -> list[list[str]]:
    cmds = stage["cmd"] if isinstance(stage["cmd"], list) else [stage["cmd"]]
    return [shlex.split(_render(cmd, item)) for cmd in cmds]


@pytest.mark.parametrize(("name", "stage", "item"), STAGES, ids=[s[0] for s in STAGES])
def test_every_flightdeck_cmd_is_a_registered_command(name, stage, item) -> None:
    found = False
    for argv in _commands(stage, item):
        if argv[0] != "flightdeck":
            continue
        found = True
        command: click.Command = cli
        words = argv[1:]
        while isinstance(command, click.Group) and words and not words[0].startswith("-"):
            sub = command.commands.get(words[0])
            if sub is None:
                break
            command, words = sub, words[1:]
        assert not isinstance(command, click.Group), f"{name}: {' '.join(argv)} is no command"
        options = {opt for param in command.params for opt in param.opts}
        for word in words:
            flag = word.split("=", 1)[0]
            if flag.startswith("--"):
                assert flag in options, f"{name}: {command.name} has no option {flag}"
    if name.startswith("repo@"):  # the repositories' refs: git itself, no flightdeck
        assert not found
        assert [argv[:2] for argv in _commands(stage, item)] == [
            ["mkdir", "-p"],
            ["git", "ls-remote"],
        ]
        return
    assert found, f"stage {name} calls no flightdeck command"


@pytest.mark.parametrize(("name", "stage", "item"), STAGES, ids=[s[0] for s in STAGES])
def test_stage_params_exist_in_params_yaml(name, stage, item) -> None:
    for param in stage.get("params", []):
        assert param in PARAMS, f"{name} lists param {param!r}, which params.yaml lacks"


def test_only_score_reads_the_statistics_params() -> None:
    stats = {"seed", "resamples", "confidence", "threshold", "min_raters"}
    for name, stage, _ in STAGES:
        listed = set(stage.get("params", []))
        assert (listed & stats == stats) if name == "score" else not (listed & stats), name


def test_reviewed_outputs_are_git_tracked_not_cached() -> None:
    for name, stage, item in STAGES:
        for section in ("outs", "metrics", "plots"):
            for entry in stage.get(section, []):
                assert isinstance(entry, dict), f"{name}: {entry} must say cache: false"
                ((path, options),) = entry.items()
                assert options.get("cache") is False, f"{name}: {_render(path, item)}"


def test_every_arm_is_run_or_imported_and_scored() -> None:
    run = {name.removeprefix("run@") for name, _, _ in STAGES if name.startswith("run@")}
    imported = {name.removeprefix("import@") for name, _, _ in STAGES if name.startswith("import@")}
    assert run == set(PARAMS["harnesses"])
    assert imported == set(PARAMS["people"])
    assert set(PARAMS["arms"]) <= run | imported
    # an arm that runs but is not scored is waiting for its raters: it has no labels yet
    labels = ROOT / "suites" / PARAMS["suite"] / "labels"
    for arm in (run | imported) - set(PARAMS["arms"]):
        assert not (labels / f"{arm}.jsonl").exists(), f"{arm} is rated: add it to params arms"
    assert {"arms", "baseline", "candidate"} <= set(DVC_YAML["stages"]["score"]["params"])


def test_dvc_yaml_names_no_suite_arm_or_repository() -> None:
    """The demo's specifics live in params.yaml only: dvc.yaml is written once, never edited."""
    text = (ROOT / "dvc.yaml").read_text()
    names = [PARAMS["suite"], *PARAMS["arms"], *PARAMS["repos"], *PARAMS["repos"].values()]
    for person in PARAMS["people"].values():
        names += [person["from"], person["snapshot"], person["by"]]
    for name in names:
        assert name not in text, name


def test_dvc_yaml_is_the_template_flightdeck_init_writes() -> None:
    from importlib.resources import files

    template = files("flightdeck.templates").joinpath("dvc.yaml.tmpl").read_text()
    assert (ROOT / "dvc.yaml").read_text() == template


def test_every_repository_is_a_dep_through_its_stage() -> None:
    repo_stages = {name: stage for name, stage, _ in STAGES if name.startswith("repo@")}
    assert set(repo_stages) == {f"repo@{name}" for name in PARAMS["repos"]}
    for name, stage, item in STAGES:
        if name.startswith("repo@"):
            assert [_render(d, item) for d in stage["deps"]] == [PARAMS["repos"][item[0]]]
        if name.startswith("run@"):
            assert "runs/repos" in stage["deps"]

"""Project and Suite: the one arm-name rule, the suite's paths, its seal, commits that exist.

The seal check lives in the core, so every Python entry point that reads a suite refuses
one changed after sealing, exactly as the commands do.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.builders import BuiltProject as Built
from tests.builders import answer, project_repos, write_jsonl

from flightdeck.errors import InputError
from flightdeck.params.arm_names import check_arm_name
from flightdeck.project import Project
from flightdeck.project.names import CACHE_FOLDER
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.knowledge import seal


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("baseline-repo-search", id="plain"),
        pytest.param("retrieval@2026-12", id="pinned-tool"),
        pytest.param("retrieval@v1.2+build_7", id="every-allowed-mark"),
        pytest.param("7", id="one-digit"),
        pytest.param("a" * 100, id="longest"),
    ],
)
def test_arm_names_a_team_uses_are_accepted(name: str) -> None:
    assert check_arm_name(name) == name


RULE = "use letters, digits and . _ @ + - only (the name becomes a file name, answers/<arm>.jsonl)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("", "arm name is empty; name the arm, e.g. retrieval@2026-12", id="empty"),
        pytest.param("../x", f"arm name '../x' holds '/'; {RULE}", id="path"),
        pytest.param("a b", f"arm name 'a b' holds ' '; {RULE}", id="space"),
        pytest.param("a:b", f"arm name 'a:b' holds ':'; {RULE}", id="colon"),
        pytest.param("café", f"arm name 'café' holds 'é'; {RULE}", id="not-ascii"),
        pytest.param(
            ".hidden",
            "arm name '.hidden' must start with a letter or digit (a leading . hides its "
            "files, a leading - reads as a flag)",
            id="leading-dot",
        ),
        pytest.param(
            "-x",
            "arm name '-x' must start with a letter or digit (a leading . hides its files, "
            "a leading - reads as a flag)",
            id="leading-dash",
        ),
        pytest.param(
            "a" * 101,
            f"arm name {'a' * 20!r}... is 101 characters; use at most 100",
            id="too-long",
        ),
    ],
)
def test_arm_names_refused_say_why(name: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(f"--arm: {message}")):
        check_arm_name(name)


def test_the_flag_named_in_the_error_is_the_callers() -> None:
    with pytest.raises(InputError, match=r"^--pinned: arm name 'a/b' holds '/'"):
        check_arm_name("a/b", where="--pinned")


def test_suite_paths(tmp_path: Path) -> None:
    folder = tmp_path / "suites" / "gold-v3"
    suite = SuiteFolder(folder, ProjectPaths(tmp_path))
    assert suite.name == "gold-v3"
    assert suite.questions == folder / "questions.jsonl"
    assert suite.keys == folder / "keys.jsonl"
    assert suite.manifest == folder / "manifest.json"
    assert suite.ledger == folder / "scores.jsonl"
    assert suite.answers("r@1") == folder / "answers" / "r@1.jsonl"
    assert suite.meta("r@1") == folder / "answers" / "r@1.meta.json"
    assert suite.labels("r@1") == folder / "labels" / "r@1.jsonl"
    assert suite.metrics_path == tmp_path / "metrics" / "gold-v3.json"
    assert suite.report_path == tmp_path / "reports" / "gold-v3.md"
    assert suite.results_dir == tmp_path / "results" / "gold-v3"
    assert suite.runs("r@1") == tmp_path / "runs" / "gold-v3" / "r@1.jsonl"
    assert suite.traces("r@1") == tmp_path / "traces" / "gold-v3" / "r@1"


def test_arms_are_the_answers_files_not_their_meta(tmp_path: Path) -> None:
    suite = SuiteFolder(tmp_path)
    assert suite.arms() == []
    for name in ("b.jsonl", "a@2026-12.jsonl", "a@2026-12.meta.json"):
        (tmp_path / "answers").mkdir(exist_ok=True)
        (tmp_path / "answers" / name).write_text("")
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "c.jsonl").write_text("")
    assert suite.arms() == ["a@2026-12", "b"]
    assert suite.labelled_arms() == ["c"]


def test_project_knows_its_folders(project: Built) -> None:
    opened = Project.open(near=project.suite, repos=("extra=elsewhere",))
    assert opened.root == Path(".")
    assert opened.paths.cache == Path(".flightdeck") / "cache" == CACHE_FOLDER
    assert opened.holdouts == Path("holdouts")
    assert opened.holdouts_manifest == Path("holdouts") / "manifest.json"
    assert opened.repos.locations == {"sdlc": Path("repos/sdlc"), "extra": Path("elsewhere")}
    assert opened.repos.cache_dir == opened.paths.cache
    assert opened.suite(project.suite).folder.project == opened.paths


def test_arms_in_params_follow_the_same_rule(project: Built) -> None:
    with (project.root / "params.yaml").open("a") as f:
        f.write("arms: [retrieval@2026-12, ../escape]\n")
    with pytest.raises(InputError, match=r"^params\.yaml: arm name '\.\./escape' holds '/'"):
        Project.open(near=project.suite)


def test_opening_a_suite_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="suite folder not found; pass a folder such as"):
        SuiteFolder(tmp_path / "nope").opened()
    with pytest.raises(InputError, match=r"questions\.jsonl: file not found"):
        SuiteFolder(tmp_path).opened()
    (tmp_path / "questions.jsonl").write_text("")
    with pytest.raises(InputError, match=r"keys\.jsonl: file not found"):
        SuiteFolder(tmp_path).opened()
    assert SuiteFolder(tmp_path).opened(keys=False).root == tmp_path


def sealed(project: Built) -> SuiteFolder:
    seal(project.folder, repos=RepoSet({"sdlc": project.repo}, project.root / "cache"))
    return project.folder


def test_seal_states(project: Built) -> None:
    suite = project.folder
    assert suite.require_intact() is None  # unsealed: allowed, the caller may warn
    with pytest.raises(InputError, match="suite is not sealed; run `flightdeck knowledge seal"):
        suite.require_sealed()
    sealed(project)
    manifest = suite.require_sealed()
    assert suite.require_intact() == manifest
    assert manifest.suite == "demo-v1"
    with suite.questions.open("a") as f:
        f.write("\n")
    with pytest.raises(InputError, match="changed after sealing") as caught:
        suite.require_intact()
    assert "demo-v2" in str(caught.value)  # the next version to seal instead


def test_a_repository_not_at_hand_is_refused_or_skipped_as_asked(project: Built) -> None:
    """``ReposNotAtHand`` is ``--unchecked``: check and seal refuse the repo, or skip it."""
    from flightdeck.project.modes import ReposNotAtHand

    (project.root / "params.yaml").write_text("repos: {}\n")
    suite = Project.open(near=project.suite).suite(project.suite)
    refused = [p.message for p in suite.check()]
    assert refused == [
        "as_of names repository 'sdlc', which neither params.yaml repos: nor --repo names; add "
        "it (--repo sdlc=PATH), or seal with --unchecked to seal without checking it"
    ] * len(refused)
    assert refused
    assert suite.check(repos_not_at_hand=ReposNotAtHand.SKIP) == []
    with pytest.raises(InputError, match="or seal with --unchecked"):
        suite.seal()
    assert not project.folder.manifest.exists()
    result = suite.seal(repos_not_at_hand=ReposNotAtHand.SKIP)
    assert result.unchecked_repos == ("sdlc",)
    assert project.folder.require_sealed().unchecked_repos == ("sdlc",)


def test_require_commits_checks_each_pair_once_with_one_message(project: Built) -> None:
    repos = RepoSet({"sdlc": project.repo}, project.root / "cache")
    repos.require_commits([("sdlc", project.as_of, "q.jsonl", 1), ("sdlc", project.later, "q", 2)])
    missing = "0" * 40
    with pytest.raises(InputError) as caught:
        repos.require_commits(
            [("sdlc", project.as_of, "q.jsonl", 1), ("sdlc", missing, "q.jsonl", 7)]
        )
    assert str(caught.value) == (
        f"q.jsonl:7: commit {missing} is not in repository 'sdlc' ({project.repo}); fix the "
        "commit, fetch it there, or point --repo sdlc=PATH at a clone that has it"
    )


# --- the seal check cannot be bypassed from Python --------------------------------------


def _run(project: Built) -> Any:
    from flightdeck.arms.runner import RunConfig, run_experiment

    config = RunConfig(
        suite_dir=project.suite,
        arm="a",
        command=f"{sys.executable} -c pass",
        root=project.root,
    )
    return run_experiment(config, repos=project_repos(project.root, {"sdlc": project.repo}))


def _import(project: Built) -> Any:
    from flightdeck.arms.people import ImportOptions, import_answers

    source = write_jsonl(
        project.root / "person.jsonl", [answer(project, "q1", "x", ["CODEOWNERS"])]
    )
    how = ImportOptions(
        by="ada", model="m", date="2026-11-20", snapshot_commits={"sdlc": project.as_of}
    )
    repos = RepoSet({"sdlc": project.repo}, project.folder.project.cache)
    return import_answers(project.folder, "person", source, how, repos=repos)


def _rate(project: Built) -> Any:
    from flightdeck.rating.session import RatingSession

    return RatingSession(project.folder, "ada", RepoSet({"sdlc": project.repo}, project.root))


def _agreement(project: Built) -> Any:
    from flightdeck.rating.agreement import suite_agreement

    return suite_agreement(project.folder)


def _score(project: Built) -> Any:
    import flightdeck

    return flightdeck.score(project.suite, ["a"])


def _gate(project: Built) -> Any:
    from flightdeck.params import load_params
    from flightdeck.tasks.knowledge import gate

    return gate(project.folder, pinned="a", candidate="b", params=load_params())


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(_run, id="experiment-run"),
        pytest.param(_import, id="import-answers"),
        pytest.param(_rate, id="rate"),
        pytest.param(_agreement, id="agreement"),
        pytest.param(_score, id="score"),
        pytest.param(_gate, id="gate"),
    ],
)
def test_a_changed_sealed_suite_is_refused_from_python(
    project: Built, call: Callable[[Built], Any]
) -> None:
    suite = sealed(project)
    write_jsonl(suite.answers("a"), [answer(project, "q1", "x", ["CODEOWNERS"])])
    keys = suite.keys.read_text()
    suite.keys.write_text(keys.replace("See ", "Read "))  # an edited answer key
    with pytest.raises(InputError, match=r"keys\.jsonl: changed after sealing"):
        call(project)
    assert not (project.root / "runs").exists()  # refused before any trial ran
    assert not suite.answers("person").exists()


def test_a_suite_built_from_a_dict_opens_and_lists_its_arms(
    tree: Callable[[dict[str, Any]], list[Path]], tmp_path: Path
) -> None:
    question = {"id": "q1", "question": "Why?", "kind": "decision-why", "as_of": {}, "scope": []}
    tree(
        {
            "suites/gold-v1": {
                "questions.jsonl": [question],
                "keys.jsonl": "",
                "answers/search.jsonl": [{"id": "q1", "answer": "a", "citations": []}],
                "answers/.search.rerun.jsonl": "",  # a rerun's temporary file is no arm
                "labels/search.jsonl": [],
            }
        }
    )
    suite = SuiteFolder(tmp_path / "suites" / "gold-v1", ProjectPaths(tmp_path)).opened()
    assert suite.name == "gold-v1"
    assert suite.arms() == ["search"]
    assert suite.labelled_arms() == ["search"]
    assert suite.metrics_path == tmp_path / "metrics" / "gold-v1.json"

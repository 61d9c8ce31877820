"""The project and its suites: the only code that knows where flightdeck's files live.

A :class:`Project` is the folder of ``params.yaml`` with its params, repositories, cache
and holdouts folder. A :class:`Suite` is one ``suites/<suite>/`` folder: its name, every
path under it (and the project paths named after it), its seal state and its arms. dvc's
``Repo`` is the model: one object that knows where everything is.

Every core function that reads a suite calls :meth:`Suite.require_intact` (or
:meth:`Suite.require_sealed`) itself, so a Python caller cannot skip the seal check that
the CLI would have made.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError
from flightdeck.holdouts.manifest import manifest_path
from flightdeck.params import Params, load_params, parse_repo_option
from flightdeck.params.arm_names import ARM_NAME_CHARS as ARM_NAME_CHARS  # re-exported: a
from flightdeck.params.arm_names import ARM_NAME_MAX as ARM_NAME_MAX  # suite's arms are named
from flightdeck.params.arm_names import check_arm_name as check_arm_name  # by this one rule
from flightdeck.params.yaml_file import PARAMS_FILE
from flightdeck.suite.records import Manifest, read_manifest
from flightdeck.suite.repos import CACHE_FOLDER as CACHE_FOLDER  # re-exported: the one spelling
from flightdeck.suite.repos import RepoSet
from flightdeck.suite.sealed import SEALED_FILES as SEALED_FILES  # re-exported
from flightdeck.suite.sealed import changed_files, verified
from flightdeck.suite.sealed import next_version as next_version  # re-exported
from flightdeck.suite.sealed import only_line_endings as only_line_endings  # re-exported
from flightdeck.suite.staging import finish_pending

STATE_FOLDER = CACHE_FOLDER.parent  # flightdeck's own files in the project root
WORKSPACES_FOLDER = STATE_FOLDER / "workspaces"  # blob store of the trial workspaces
# (#21) Scratch arms (`experiment run --scratch`, or an arm params.yaml's pipeline does not
# name) keep their answers, meta, labels, run log and traces here, under
# .flightdeck/scratch/<suite>/, which `flightdeck init` puts in .gitignore and no dvc.yaml
# stage depends on: a scratch run never makes the committed pipeline stale.
SCRATCH_FOLDER = STATE_FOLDER / "scratch"


@dataclass(frozen=True)
class FirstScored:
    """The first record of an arm in the scores ledger (``scores.jsonl``)."""

    line: int  # its line in scores.jsonl
    answers_sha256: str  # the answers scored: an arm's answers never change after
    scored_at: str  # when, as recorded ("?" when the record has no time)


# --- a suite folder -------------------------------------------------------------------------


@dataclass(frozen=True)
class Suite:
    """The files of ``suites/<suite>/`` (as the spec lays them out) and its seal state.

    ``project_root`` is where the outputs named after the suite go (metrics, reports,
    results, runs, traces).
    """

    root: Path
    project_root: Path = Path(".")
    # arms that live in the scratch folder whatever exists yet (a scratch run's writer)
    scratch_arms: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        """The suite's name: its folder's name."""
        return self.root.resolve().name

    @property
    def questions(self) -> Path:
        return self.root / "questions.jsonl"

    @property
    def keys(self) -> Path:
        return self.root / "keys.jsonl"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def ledger(self) -> Path:
        return self.root / "scores.jsonl"

    @property
    def answers_folder(self) -> Path:
        return self.root / "answers"

    @property
    def labels_folder(self) -> Path:
        return self.root / "labels"

    def answers(self, arm: str) -> Path:
        return self.answers_folder_of(arm) / f"{arm}.jsonl"

    def meta(self, arm: str) -> Path:
        return self.answers_folder_of(arm) / f"{arm}.meta.json"

    def labels(self, arm: str) -> Path:
        folder = self.scratch_root / "labels" if self.is_scratch(arm) else self.labels_folder
        return folder / f"{arm}.jsonl"

    # Scratch arms (#21): every file of theirs under .flightdeck/scratch/<suite>/.

    @property
    def scratch_root(self) -> Path:
        """``.flightdeck/scratch/<suite>/`` in the project root: answers, labels, runs, traces."""
        return self.project_root / SCRATCH_FOLDER / self.name

    def with_scratch(self, arm: str) -> Suite:
        """This suite with ``arm`` kept in the scratch folder (for the run that writes it)."""
        return replace(self, scratch_arms=self.scratch_arms | {arm})

    def is_scratch(self, arm: str) -> bool:
        """Whether ``arm`` lives in the scratch folder: so made, or found there and not here."""
        if arm in self.scratch_arms:
            return True
        tracked = self.answers_folder / f"{arm}.jsonl"
        return not tracked.exists() and (self.scratch_root / "answers" / f"{arm}.jsonl").exists()

    def answers_folder_of(self, arm: str) -> Path:
        """The folder of ``arm``'s answers and meta (and a rerun's temporary file)."""
        return self.scratch_root / "answers" if self.is_scratch(arm) else self.answers_folder

    @property
    def judgements_folder(self) -> Path:
        return self.root / "judgements"

    def judgements(self, judge: str, arm: str) -> Path:
        """A judge's verdicts on an arm's answers, kept apart from the people's labels."""
        return self.judgements_folder / judge / f"{arm}.jsonl"

    def calibration(self, judge: str) -> Path:
        """A judge measured against the people: ``judgements/<judge>/calibration.json``."""
        return self.judgements_folder / judge / "calibration.json"

    # Outputs in the project root, named after the suite.

    @property
    def metrics_path(self) -> Path:
        return self.project_root / "metrics" / f"{self.name}.json"

    @property
    def report_path(self) -> Path:
        return self.project_root / "reports" / f"{self.name}.md"

    @property
    def results_dir(self) -> Path:
        return self.project_root / "results" / self.name

    def runs(self, arm: str) -> Path:
        """The trials ledger of an arm: ``runs/<suite>/<arm>.jsonl`` (a scratch arm's apart)."""
        if self.is_scratch(arm):
            return self.scratch_root / "runs" / f"{arm}.jsonl"
        return self.project_root / "runs" / self.name / f"{arm}.jsonl"

    def traces(self, arm: str) -> Path:
        """An arm's trial traces: ``traces/<suite>/<arm>/`` (a scratch arm's apart)."""
        if self.is_scratch(arm):
            return self.scratch_root / "traces" / arm
        return self.project_root / "traces" / self.name / arm

    # Opening.

    def opened(self, *, keys: bool = True) -> Suite:
        """This suite, after checking (once per suite object) that its folder and files exist.

        The check runs at most once per object and per ``keys``: a command opens its suite
        once however many core functions it passes it through.
        """
        done: set[bool] = self.__dict__.setdefault("_opened", set())
        if keys not in done and True not in done:
            self.require_files(keys=keys)
            done.add(keys)
        return self

    def require_files(self, *, keys: bool = True) -> None:
        """Refuse a missing suite folder, questions.jsonl or (``keys``) keys.jsonl."""
        if not self.root.is_dir():
            raise InputError(
                self.root, None, "suite folder not found; pass a folder such as suites/<suite>"
            )
        finish_pending(self.answers_folder)  # an import a kill interrupted: done or undone (#25)
        if not self.questions.is_file():
            raise InputError(self.questions, None, "file not found; a suite needs questions.jsonl")
        if keys and not self.keys.is_file():
            raise InputError(self.keys, None, "file not found; a suite needs keys.jsonl")

    # Arms.

    def arms(self) -> list[str]:
        """Arms with an answers file, sorted: the tracked ones and the scratch ones."""
        return sorted({*_stems(self.answers_folder), *self.scratch_arms_found()})

    def scratch_arms_found(self) -> list[str]:
        """Arms whose answers are in the scratch folder (and not also tracked)."""
        return [a for a in _stems(self.scratch_root / "answers") if self.is_scratch(a)]

    def labelled_arms(self) -> list[str]:
        """Arms with a labels file, sorted."""
        scratch = [a for a in _stems(self.scratch_root / "labels") if self.is_scratch(a)]
        return sorted({*_stems(self.labels_folder), *scratch})

    # The scores ledger.

    def read_ledger(self) -> dict[str, FirstScored]:
        """arm -> where and when each arm was first scored, and on which answers."""
        from flightdeck.files.jsonl import read_jsonl

        first: dict[str, FirstScored] = {}
        if not self.ledger.is_file():
            return first
        for line, record in read_jsonl(self.ledger):
            arm, answers = record.get("arm"), record.get("answers_sha256")
            if not isinstance(arm, str) or not isinstance(answers, str):
                raise InputError(self.ledger, line, "ledger record needs arm and answers_sha256")
            first.setdefault(arm, FirstScored(line, answers, str(record.get("scored_at", "?"))))
        return first

    def require_unchanged_if_scored(self, arm: str, answers_sha256: str | None) -> None:
        """Refuse answers for an arm the ledger says was scored, unless they are the scored bytes.

        ``answers_sha256`` None means "would add or change answers" (a run with trials to do).
        The same bytes again (a pipeline re-running a deterministic stage) are allowed.
        """
        scored = self.read_ledger().get(arm)
        if scored is None or scored.answers_sha256 == answers_sha256:
            return
        raise InputError(
            self.answers(arm),
            None,
            f"arm {arm!r} was scored on {scored.scored_at}; its answers cannot change: import "
            "or run them under a new arm name",
        )

    # The seal.

    @property
    def is_sealed(self) -> bool:
        return self.manifest.is_file()

    def changed_files(self, manifest: Manifest) -> list[str]:
        """Sealed files whose bytes no longer match the manifest's hashes."""
        return changed_files(self.root, manifest)

    def require_sealed(self) -> Manifest:
        """The manifest, after checking the suite is sealed and its sealed files match it."""
        if not self.is_sealed:
            raise InputError(
                self.manifest,
                None,
                f"suite is not sealed; run `flightdeck knowledge seal {self.root}` first",
            )
        return verified(self.root, self.name, self.manifest, read_manifest(self.manifest))

    def require_intact(self) -> Manifest | None:
        """Refuse a sealed suite that changed since sealing; None when it is not sealed.

        Answers and labels may be built before a suite is sealed (they cannot be scored until
        it is), so an unsealed suite passes; the caller may warn about it.
        """
        return self.require_sealed() if self.is_sealed else None


def _stems(folder: Path) -> list[str]:
    """``<name>.jsonl`` files' names; a dot-file (``.<arm>.rerun.jsonl``, a rerun) is no arm."""
    if not folder.is_dir():
        return []
    return sorted(
        p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl") if not p.name.startswith(".")
    )


def open_suite(folder: Path, *, project_root: Path = Path("."), keys: bool = True) -> Suite:
    """A suite folder that exists and holds questions.jsonl (and keys.jsonl), or an InputError."""
    return Suite(folder, project_root).opened(keys=keys)


def as_suite(suite: Suite | Path, params: Params | None = None, *, keys: bool = True) -> Suite:
    """A core function's ``suite`` argument, a :class:`Suite` or a folder, opened and checked.

    A :class:`Suite` is opened once: asking again (score, then the arms it reads, then the
    ledger it writes) returns it without looking at the folder again.
    """
    if isinstance(suite, Suite):
        return suite.opened(keys=keys)
    root = params.root if params is not None else Path(".")
    return open_suite(suite, project_root=root, keys=keys)


# --- the project ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    """The project root (the folder of params.yaml): params, repositories, cache, holdouts."""

    params: Params = field(default_factory=Params)

    def __post_init__(self) -> None:
        # params.yaml ``arms`` become file names too: the same rule as --arm
        for arm in self.params.arms:
            check_arm_name(arm, where=str(self.root / PARAMS_FILE))

    @classmethod
    def open(
        cls,
        params_file: Path | None = None,
        *,
        near: Path | None = None,
        repos: tuple[str, ...] = (),
        **overrides: Any,
    ) -> Project:
        """params.yaml (``near`` a suite folder: the nearest one above it) with flags laid over.

        ``repos`` are ``NAME=PATH`` pairs (``--repo``); an override left ``None`` keeps the
        file's value. ``params.warnings`` holds what the caller should show (unknown keys).
        """
        params = load_params(params_file, near=near)
        return cls(params.with_overrides(repos=parse_repo_option(repos), **overrides))

    @property
    def root(self) -> Path:
        return self.params.root

    @property
    def holdouts(self) -> Path:
        return self.params.holdouts

    @property
    def holdouts_manifest(self) -> Path:
        """The holdouts manifest: the canaries registered for the leak scan."""
        return manifest_path(self.holdouts)

    @property
    def suites_folder(self) -> Path:
        return self.root / "suites"

    @property
    def cache(self) -> Path:
        return self.root / CACHE_FOLDER

    @property
    def workspaces(self) -> Path:
        return self.root / WORKSPACES_FOLDER

    @cached_property
    def repos(self) -> RepoSet:
        """The repositories by name, bundles cloned into the project's cache."""
        return RepoSet(self.params.repos, self.cache)

    def is_scratch_arm(self, arm: str) -> bool:
        """An arm the pipeline does not run or score (#21), when params.yaml names harnesses.

        Such an arm's run is a scratch run: its files go under ``.flightdeck/scratch/``.
        """
        params = self.params
        pipeline = {*params.harnesses, *params.people, *params.arms}
        return bool(params.harnesses) and arm not in pipeline

    def suite(self, folder: Path, *, keys: bool = True) -> Suite:
        """Open the suite folder ``folder`` (it must hold questions.jsonl and keys.jsonl)."""
        return open_suite(folder, project_root=self.root, keys=keys)

    def at(self, folder: Path) -> Suite:
        """The suite at ``folder``, not opened yet: the core call opens it after it has checked
        its other arguments, so a bad flag is named before a missing file."""
        return Suite(folder, self.root)

    def named_suite(self, folder: Path | None) -> Suite:
        """``folder``, or the suite params.yaml names (``suite:``), for its outputs' paths.

        Not opened: a command that reads only what score wrote (``knowledge show``) needs
        the paths, not the suite files.
        """
        if folder is not None:
            return self.at(folder)
        if self.params.suite is None:
            raise InputError(
                "SUITE", None, "name the suite (suites/<suite>) or set suite: in params.yaml"
            )
        return Suite(self.suites_folder / self.params.suite, self.root)

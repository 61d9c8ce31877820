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

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from flightdeck.arm_names import ARM_NAME_CHARS as ARM_NAME_CHARS  # re-exported: a
from flightdeck.arm_names import ARM_NAME_MAX as ARM_NAME_MAX  # suite's arms are named
from flightdeck.arm_names import check_arm_name as check_arm_name  # by this one rule
from flightdeck.errors import InputError
from flightdeck.jsonl import sha256_file
from flightdeck.params import Params, load_params, parse_repo_option
from flightdeck.params_yaml import PARAMS_FILE
from flightdeck.suite.records import Manifest, read_manifest
from flightdeck.suite.repos import CACHE_FOLDER as CACHE_FOLDER  # re-exported: the one spelling
from flightdeck.suite.repos import RepoSet
from flightdeck.suite.staging import finish_pending

SEALED_FILES = ("questions.jsonl", "keys.jsonl")
STATE_FOLDER = CACHE_FOLDER.parent  # flightdeck's own files in the project root
WORKSPACES_FOLDER = STATE_FOLDER / "workspaces"  # blob store of the trial workspaces
# (#21) Scratch arms (`experiment run --scratch`, or an arm params.yaml's pipeline does not
# name) keep their answers, meta, labels, run log and traces here, under
# .flightdeck/scratch/<suite>/, which `flightdeck init` puts in .gitignore and no dvc.yaml
# stage depends on: a scratch run never makes the committed pipeline stale.
SCRATCH_FOLDER = STATE_FOLDER / "scratch"


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

    def read_ledger(self) -> dict[str, tuple[int, str, str]]:
        """arm -> (line, answers sha256, scored_at) of the first time each arm was scored."""
        from flightdeck.jsonl import read_jsonl

        first: dict[str, tuple[int, str, str]] = {}
        if not self.ledger.is_file():
            return first
        for line, record in read_jsonl(self.ledger):
            arm, answers = record.get("arm"), record.get("answers_sha256")
            if not isinstance(arm, str) or not isinstance(answers, str):
                raise InputError(self.ledger, line, "ledger record needs arm and answers_sha256")
            first.setdefault(arm, (line, answers, str(record.get("scored_at", "?"))))
        return first

    def require_unchanged_if_scored(self, arm: str, answers_sha256: str | None) -> None:
        """Refuse answers for an arm the ledger says was scored, unless they are the scored bytes.

        ``answers_sha256`` None means "would add or change answers" (a run with trials to do).
        The same bytes again (a pipeline re-running a deterministic stage) are allowed.
        """
        scored = self.read_ledger().get(arm)
        if scored is None or scored[1] == answers_sha256:
            return
        raise InputError(
            self.answers(arm),
            None,
            f"arm {arm!r} was scored on {scored[2]}; its answers cannot change: import or run "
            "them under a new arm name",
        )

    # The seal.

    @property
    def is_sealed(self) -> bool:
        return self.manifest.is_file()

    def changed_files(self, manifest: Manifest) -> list[str]:
        """Sealed files whose bytes no longer match the manifest's hashes."""
        changed = []
        for name in SEALED_FILES:
            path = self.root / name
            if not path.is_file() or sha256_file(path) != manifest.files.get(name):
                changed.append(name)
        return changed

    def require_sealed(self) -> Manifest:
        """The manifest, after checking the suite is sealed and its sealed files match it."""
        if not self.is_sealed:
            raise InputError(
                self.manifest,
                None,
                f"suite is not sealed; run `flightdeck knowledge seal {self.root}` first",
            )
        return self._verified(read_manifest(self.manifest))

    def require_intact(self) -> Manifest | None:
        """Refuse a sealed suite that changed since sealing; None when it is not sealed.

        Answers and labels may be built before a suite is sealed (they cannot be scored until
        it is), so an unsealed suite passes; the caller may warn about it.
        """
        return self.require_sealed() if self.is_sealed else None

    def _verified(self, manifest: Manifest) -> Manifest:
        if manifest.suite != self.name:
            raise InputError(
                self.manifest,
                None,
                f"seals suite {manifest.suite!r}, but the folder is {self.name!r}: a copied suite "
                "is a new version; copy only questions.jsonl and keys.jsonl and seal the copy",
            )
        for name in self.changed_files(manifest):
            if only_line_endings(self.root / name, manifest.files.get(name)):
                raise InputError(
                    self.root / name,
                    None,
                    f"{name} changed since sealing: its line endings are CRLF now; check out with "
                    "core.autocrlf=false (the project's .gitattributes keeps suite files -text)",
                )
            raise InputError(
                self.root / name,
                None,
                "changed after sealing (it no longer matches manifest.json); a changed question "
                f"is a new suite version ({next_version(self.name)}), never an edit: restore "
                "the file",
            )
        return manifest


def only_line_endings(path: Path, sealed_sha256: str | None) -> bool:
    """Whether ``path`` is the bytes once hashed (sealed, scored) with LF made CRLF (autocrlf).

    The seal check and the score ledger use it to name that cause apart from a real change.
    """
    from flightdeck.jsonl import sha256_bytes

    if sealed_sha256 is None or not path.is_file():
        return False
    data = path.read_bytes()
    return b"\r\n" in data and sha256_bytes(data.replace(b"\r\n", b"\n")) == sealed_sha256


def _stems(folder: Path) -> list[str]:
    """``<name>.jsonl`` files' names; a dot-file (``.<arm>.rerun.jsonl``, a rerun) is no arm."""
    if not folder.is_dir():
        return []
    return sorted(
        p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl") if not p.name.startswith(".")
    )


def open_suite(folder: Path, *, project_root: Path = Path("."), keys: bool = True) -> Suite:
    """A suite folder that exists and holds questions.jsonl (and keys.jsonl), or an InputError."""
    if not folder.is_dir():
        raise InputError(
            folder, None, "suite folder not found; pass a folder such as suites/<suite>"
        )
    suite = Suite(folder, project_root)
    finish_pending(suite.answers_folder)  # an import a kill interrupted: done or undone (#25)
    if not suite.questions.is_file():
        raise InputError(suite.questions, None, "file not found; a suite needs questions.jsonl")
    if keys and not suite.keys.is_file():
        raise InputError(suite.keys, None, "file not found; a suite needs keys.jsonl")
    return suite


def as_suite(suite: Suite | Path, params: Params | None = None, *, keys: bool = True) -> Suite:
    """A core function's ``suite`` argument, a :class:`Suite` or a folder, opened and checked."""
    if isinstance(suite, Suite):
        return open_suite(suite.root, project_root=suite.project_root, keys=keys)
    root = params.root if params is not None else Path(".")
    return open_suite(suite, project_root=root, keys=keys)


def next_version(name: str) -> str:
    """``knowledge-gold-v1`` -> ``knowledge-gold-v2``; a name without a version gets ``-v2``."""
    match = re.fullmatch(r"(.*-v)(\d+)", name)
    return f"{match[1]}{int(match[2]) + 1}" if match else f"{name}-v2"


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
        return Suite(self.root / "suites" / self.params.suite, self.root)

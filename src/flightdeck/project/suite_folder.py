"""One suite folder: every path under ``suites/<suite>/``, the outputs named after it, its state.

A :class:`SuiteFolder` is what the task modules take: its name, its files (and a scratch
arm's, apart), its seal state, its arms and its scores ledger. It is opened once
(:meth:`SuiteFolder.opened`); the verbs on it are :class:`flightdeck.project.Suite`'s.

Every core function that reads a suite calls :meth:`SuiteFolder.require_intact` (or
:meth:`SuiteFolder.require_sealed`) itself, so a Python caller cannot skip the seal check that
the CLI would have made.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.project import names
from flightdeck.project.paths import ProjectPaths, suite_manifest
from flightdeck.suite.records import LedgerRecord, Manifest, read_ledger, read_manifest
from flightdeck.suite.sealed import changed_files, verified
from flightdeck.suite.staging import finish_pending


@dataclass(frozen=True)
class SuiteFolder:
    """The files of ``suites/<suite>/`` (as the spec lays them out) and its seal state.

    ``project`` is where the outputs named after the suite go (metrics, reports, results,
    runs, traces) and the project's own files (cache, holdouts).
    """

    root: Path
    project: ProjectPaths = field(default_factory=ProjectPaths)
    # arms that live in the scratch folder whatever exists yet (a scratch run's writer)
    scratch_arms: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        """The suite's name: its folder's name."""
        return self.root.resolve().name

    @property
    def questions(self) -> Path:
        return self.root / names.QUESTIONS_FILE

    @property
    def keys(self) -> Path:
        return self.root / names.KEYS_FILE

    @property
    def manifest(self) -> Path:
        return suite_manifest(self.root)

    @property
    def ledger(self) -> Path:
        return self.root / names.LEDGER_FILE

    @property
    def answers_folder(self) -> Path:
        return self.root / names.ANSWERS_FOLDER

    @property
    def labels_folder(self) -> Path:
        return self.root / names.LABELS_FOLDER

    def answers(self, arm: str) -> Path:
        return self.answers_folder_of(arm) / f"{arm}.jsonl"

    def meta(self, arm: str) -> Path:
        return self.answers_folder_of(arm) / f"{arm}.meta.json"

    def rerun_answers(self, arm: str) -> Path:
        """Where a scored arm whose answers file is gone runs again: ``.<arm>.rerun.jsonl``
        beside its answers (a dot-file, so no arm), kept only if it gives the scored bytes."""
        return self.answers_folder_of(arm) / f".{arm}.rerun.jsonl"

    def labels(self, arm: str) -> Path:
        folder = (
            self.scratch_root / names.LABELS_FOLDER if self.is_scratch(arm) else self.labels_folder
        )
        return folder / f"{arm}.jsonl"

    # Scratch arms (#21): every file of theirs under .flightdeck/scratch/<suite>/.

    @property
    def scratch_root(self) -> Path:
        """``.flightdeck/scratch/<suite>/`` in the project root: answers, labels, runs, traces."""
        return self.project.scratch_of(self.name)

    @property
    def scratch_answers_folder(self) -> Path:
        """Scratch arms' answers and metas: ``.flightdeck/scratch/<suite>/answers/``."""
        return self.scratch_root / names.ANSWERS_FOLDER

    @property
    def scratch_metrics_path(self) -> Path:
        """A scratch score's metrics: ``.flightdeck/scratch/<suite>/metrics.json``."""
        return self.scratch_root / names.SCRATCH_METRICS_FILE

    @property
    def scratch_report_path(self) -> Path:
        """A scratch score's report (its picture beside it, ``report.svg``)."""
        return self.scratch_root / names.SCRATCH_REPORT_FILE

    @property
    def scratch_results_dir(self) -> Path:
        """A scratch score's per-question results: ``.flightdeck/scratch/<suite>/results/``."""
        return self.scratch_root / names.RESULTS_FOLDER

    @property
    def scratch_ledger(self) -> Path:
        """A scratch score's ledger: ``.flightdeck/scratch/<suite>/scores.jsonl``, untracked."""
        return self.scratch_root / names.LEDGER_FILE

    def with_scratch(self, arm: str) -> SuiteFolder:
        """This suite with ``arm`` kept in the scratch folder (for the run that writes it)."""
        return replace(self, scratch_arms=self.scratch_arms | {arm})

    def is_scratch(self, arm: str) -> bool:
        """Whether ``arm`` lives in the scratch folder: so made, or found there and not here."""
        if arm in self.scratch_arms:
            return True
        tracked = self.answers_folder / f"{arm}.jsonl"
        return not tracked.exists() and (self.scratch_answers_folder / f"{arm}.jsonl").exists()

    def answers_folder_of(self, arm: str) -> Path:
        """The folder of ``arm``'s answers and meta (and a rerun's temporary file)."""
        return self.scratch_answers_folder if self.is_scratch(arm) else self.answers_folder

    @property
    def judgements_folder(self) -> Path:
        return self.root / names.JUDGEMENTS_FOLDER

    def judgements(self, judge: str, arm: str) -> Path:
        """A judge's verdicts on an arm's answers, kept apart from the people's labels."""
        return self.judgements_folder / judge / f"{arm}.jsonl"

    def calibration(self, judge: str) -> Path:
        """A judge measured against the people: ``judgements/<judge>/calibration.json``."""
        return self.judgements_folder / judge / names.CALIBRATION_FILE

    # Outputs in the project root, named after the suite.

    @property
    def metrics_path(self) -> Path:
        return self.project.metrics(self.name)

    @property
    def report_path(self) -> Path:
        return self.project.report(self.name)

    @property
    def results_dir(self) -> Path:
        return self.project.results(self.name)

    def runs(self, arm: str) -> Path:
        """The trials ledger of an arm: ``runs/<suite>/<arm>.jsonl`` (a scratch arm's apart)."""
        if self.is_scratch(arm):
            return self.scratch_root / names.RUNS_FOLDER / f"{arm}.jsonl"
        return self.project.runs(self.name) / f"{arm}.jsonl"

    def traces(self, arm: str) -> Path:
        """An arm's trial traces: ``traces/<suite>/<arm>/`` (a scratch arm's apart)."""
        if self.is_scratch(arm):
            return self.scratch_root / names.TRACES_FOLDER / arm
        return self.project.traces(self.name) / arm

    # Opening.

    def opened(self, *, keys: bool = True) -> SuiteFolder:
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
        # an import a kill interrupted: done or undone (#25), tracked or scratch (#21)
        finish_pending(self.answers_folder)
        finish_pending(self.scratch_answers_folder)
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
        return [a for a in _stems(self.scratch_answers_folder) if self.is_scratch(a)]

    def labelled_arms(self) -> list[str]:
        """Arms with a labels file, sorted."""
        scratch = [a for a in _stems(self.scratch_root / names.LABELS_FOLDER) if self.is_scratch(a)]
        return sorted({*_stems(self.labels_folder), *scratch})

    # The scores ledger.

    def ledger_records(self, ledger: Path | None = None) -> list[LedgerRecord]:
        """Every record of the scores ledgers, oldest first: the tracked one's, then the
        scratch one's (#21); ``ledger`` given, that file's only (none before a first score)."""
        files = (self.ledger, self.scratch_ledger) if ledger is None else (ledger,)
        return [record for path in files if path.is_file() for record in read_ledger(path)]

    def first_scores(self) -> dict[str, tuple[Path, LedgerRecord]]:
        """arm -> the ledger file and its first record there: where and when it was first
        scored, and on which answers (the tracked ledger first, then the scratch one)."""
        first: dict[str, tuple[Path, LedgerRecord]] = {}
        for path in (self.ledger, self.scratch_ledger):
            for record in self.ledger_records(path):
                first.setdefault(record.arm, (path, record))
        return first

    def read_ledger(self) -> dict[str, LedgerRecord]:
        """arm -> its first record in the ledgers (:meth:`first_scores` without the file)."""
        return {arm: record for arm, (_, record) in self.first_scores().items()}

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

"""The project, opened once per command, and its suites with their verbs (dvc's ``Repo``).

:meth:`Project.open` reads params.yaml once (flags laid over it); :meth:`Project.suite`
names one suite of it; the verbs are methods that call the task modules, so every command
is parse -> open -> one verb -> render and its suite folder is opened once::

    from flightdeck.project import Project
    suite = Project.open().suite("knowledge-demo-v1")
    result = suite.score()  # the arms params.yaml names, outputs where the CLI writes them

Where things are lives below the verbs, in this package too: the names in
:mod:`~flightdeck.project.names`, the project's paths in :mod:`~flightdeck.project.paths`, a
suite folder's in :mod:`~flightdeck.project.suite_folder`. The task modules take those (a
:class:`SuiteFolder`), never a :class:`Suite`, so the verbs can call them without an import
circle; each verb imports its task module when called, which keeps ``flightdeck --help`` fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.errors import InputError
from flightdeck.project.modes import DryRuns, ReposNotAtHand, ToRate
from flightdeck.project.paths import ProjectPaths

# Nothing else at module level: the lowest modules (params, suite/) import this package's
# names, and importing a submodule runs this file first, so it must not need them back.
if TYPE_CHECKING:
    from flightdeck.arms.people import ImportOptions, ImportResult
    from flightdeck.arms.run_request import RunRequest
    from flightdeck.arms.runner import RunResult
    from flightdeck.arms.trial import TrialOutcome
    from flightdeck.holdouts.leaks import CanaryScan
    from flightdeck.holdouts.manifest_format import Evidence
    from flightdeck.holdouts.plan import ScanPlan
    from flightdeck.params import Params
    from flightdeck.project.suite_folder import SuiteFolder
    from flightdeck.rating.agreement import ArmChoice, SuiteAgreement
    from flightdeck.rating.calibration_format import Calibration
    from flightdeck.rating.judges import JudgeRun
    from flightdeck.rating.session import RatingSession
    from flightdeck.scoring.outcomes import GateResult, ScoreResult
    from flightdeck.scoring.summary import Summary
    from flightdeck.suite.checks import Problem
    from flightdeck.suite.repos import RepoSet
    from flightdeck.suite.scaffold import NewSuite
    from flightdeck.tasks.knowledge import SealResult, SuiteStatus


@dataclass(frozen=True)
class Project:
    """The project root (the folder of params.yaml): its params, paths, repositories, suites."""

    params: Params

    def __post_init__(self) -> None:
        from flightdeck.params.arm_names import check_arm_name
        from flightdeck.project.names import PARAMS_FILE

        for arm in self.params.arms:  # params.yaml ``arms`` become file names: --arm's rule
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
        from flightdeck.params import load_params, parse_repo_option

        params = load_params(params_file, near=near)
        return cls(params.with_overrides(repos=parse_repo_option(repos), **overrides))

    @classmethod
    def of_holdouts(cls, holdouts: Path) -> Project:
        """A project known only by its holdouts folder (``holdout --holdouts DIR``): no params."""
        from flightdeck.params import Params

        return cls(Params(holdouts=holdouts, holdouts_named=True))

    @property
    def root(self) -> Path:
        return self.params.root

    @property
    def holdouts(self) -> Path:
        return self.params.holdouts

    @cached_property
    def paths(self) -> ProjectPaths:
        """Every path of the project: cache, holdouts manifest, outputs, runs, traces, scratch."""
        return ProjectPaths(self.root, self.params.holdouts)

    @property
    def holdouts_manifest(self) -> Path:
        return self.paths.holdouts_manifest

    @cached_property
    def repos(self) -> RepoSet:
        """The repositories by name, bundles cloned into the project's cache."""
        from flightdeck.suite.repos import RepoSet

        return RepoSet(self.params.repos, self.paths.cache)

    def scratch_arms(self, arms: Iterable[str]) -> frozenset[str]:
        """The arms of ``arms`` the pipeline does not run or score (#21): none unless
        params.yaml names harnesses (a pipeline project); a person's arm (``people``) is its."""
        params = self.params
        if not params.harnesses:
            return frozenset()
        pipeline = {*params.harnesses, *params.people, *params.arms}
        return frozenset(arm for arm in arms if arm not in pipeline)

    def suite(self, folder: Path | str | None) -> Suite:
        """The suite ``folder``, ``suites/<name>`` for a bare name, or (None) params' ``suite``.

        A bare name that is no folder here but is one under the project's ``suites/`` names
        that suite; anything else is taken as the folder it spells. Not opened yet: its verb
        opens it once, after checking the verb's other arguments, so a bad flag is named
        before a missing file.
        """
        if folder is None:
            if self.params.suite is None:
                raise InputError(
                    "SUITE", None, "name the suite (suites/<suite>) or set suite: in params.yaml"
                )
            folder = self.paths.suites / self.params.suite
        from flightdeck.project.suite_folder import SuiteFolder

        path = Path(folder)
        if not path.is_dir() and len(path.parts) == 1 and (self.paths.suites / path).is_dir():
            path = self.paths.suites / path
        return Suite(SuiteFolder(path, self.paths), self)

    # Verbs on the project.

    def new_suite(self, folder: Path, *, revisions: Mapping[str, str]) -> NewSuite:
        """``knowledge new``: a suite folder with one example question and key."""
        from flightdeck.suite.scaffold import new_suite

        return new_suite(folder, revisions, repos=self.repos)

    def plan_canary_scan(self, paths: Sequence[Path]) -> ScanPlan:
        """The files a canary scan of ``paths`` reads (and its size, for a progress bar)."""
        from flightdeck.holdouts.plan import plan_scan

        return plan_scan(self.holdouts, list(paths))

    def canary_scan(
        self, plan: ScanPlan, *, jobs: int | None, on_progress: Callable[[int], None] | None
    ) -> CanaryScan:
        """``holdout canary-scan``: scan, void every suite with a hit, record the scan.

        The compiled scan database is kept in the project's cache when the root is a project
        (params.yaml or .flightdeck/ there): a bare ``--holdouts DIR`` scan run elsewhere
        leaves the folder it runs in as it was.
        """
        from flightdeck.holdouts.leaks import scan_and_void
        from flightdeck.project.names import PARAMS_FILE

        paths = self.paths
        in_project = (self.root / PARAMS_FILE).is_file() or paths.state.is_dir()
        return scan_and_void(
            self.holdouts,
            plan,
            jobs=jobs,
            on_progress=on_progress,
            cache=paths.scan_database if in_project else None,
        )

    def unvoid(self, suite: str, *, by: str, why: str) -> Evidence:
        """``holdout unvoid``: lift a suite's void on purpose; returns the evidence it had."""
        from flightdeck.holdouts.registry import unvoid

        return unvoid(self.holdouts, suite, by=by, why=why)


@dataclass(frozen=True)
class RatingPass:
    """A rater's session, and which arms it covers (#21): params' arms and the ones asked."""

    choice: ArmChoice
    session: RatingSession


@dataclass(frozen=True)
class AgreementPass:
    """The raters' agreement, and which arms it covers (#21), as for :class:`RatingPass`."""

    choice: ArmChoice
    agreement: SuiteAgreement


@dataclass(frozen=True)
class Suite:
    """A suite of a :class:`Project`: its folder (paths and state) and the verbs on it."""

    folder: SuiteFolder
    project: Project = field(compare=False, repr=False)

    @property
    def params(self) -> Params:
        return self.project.params

    @property
    def root(self) -> Path:
        return self.folder.root

    @property
    def name(self) -> str:
        return self.folder.name

    def check(self, *, repos_not_at_hand: ReposNotAtHand = ReposNotAtHand.REFUSE) -> list[Problem]:
        """``knowledge check``: every problem a seal would refuse, in order; writes nothing."""
        from flightdeck.tasks.knowledge import check

        repos = self.project.repos
        return check(self.folder, repos=repos, repos_not_at_hand=repos_not_at_hand)

    def seal(self, *, repos_not_at_hand: ReposNotAtHand = ReposNotAtHand.REFUSE) -> SealResult:
        """``knowledge seal``: seal, and register the canaries in the project's holdouts."""
        from flightdeck.tasks.knowledge import seal

        repos, holdouts = self.project.repos, self.project.holdouts
        return seal(
            self.folder, repos=repos, holdouts=holdouts, repos_not_at_hand=repos_not_at_hand
        )

    def status(self) -> SuiteStatus:
        """``knowledge status``: seal intact, not void, each arm's files."""
        from flightdeck.tasks.knowledge import status

        return status(self.folder, params=self.params)

    def score(
        self,
        *,
        arms: Sequence[str] | None = None,
        baseline: str | None = None,
        candidate: str | None = None,
        metrics: Path | None = None,
        report: Path | None = None,
        results_dir: Path | None = None,
        dry_runs: DryRuns = DryRuns.REFUSE,
        on_progress: Callable[[str], None] | None = None,
    ) -> ScoreResult:
        """``knowledge score``: score the arms (params' ``arms`` by default), write, record.

        ``baseline``/``candidate`` None: params' pair when both are scored; an output None:
        where the suite's paths say. A dry-run arm is refused unless ``dry_runs=DryRuns.ALLOW``.
        A score with a scratch arm (#21) writes nothing the pipeline tracks: its default
        outputs and its ledger lines go under the suite's scratch folder (``result.scratch``
        names those arms); an output path given is written as given.
        """
        from flightdeck.tasks.scoring import ScoreOptions, score

        scored = tuple(self.params.arms if arms is None else arms)
        scratch = self.scratch_arms(scored)
        folder = self.folder
        if scratch:
            metrics = metrics or folder.scratch_metrics_path
            report = report or folder.scratch_report_path
            results_dir = results_dir or folder.scratch_results_dir
        options = ScoreOptions(
            arms=None if arms is None else tuple(arms),
            baseline=baseline,
            candidate=candidate,
            metrics=metrics,
            report=report,
            results_dir=results_dir,
            ledger=folder.scratch_ledger if scratch else None,
            dry_runs=dry_runs,
        )
        params, repos = self.params, self.project.repos
        result = score(folder, options, params=params, repos=repos, on_progress=on_progress)
        return replace(result, scratch=tuple(a for a in scored if a in scratch))

    def scratch_arms(self, arms: Iterable[str]) -> frozenset[str]:
        """The arms of ``arms`` kept apart from the pipeline (#21), the one place that rule is
        applied: those it does not name, and those whose answers live in the scratch folder."""
        arms = tuple(arms)
        found = {arm for arm in arms if self.folder.is_scratch(arm)}
        return self.project.scratch_arms(arms) | found

    def gate(self, *, pinned: str | None = None, candidate: str | None = None) -> GateResult:
        """``knowledge gate``: does the candidate keep within the margin of the pinned arm?"""
        from flightdeck.tasks.gate import gate

        return gate(self.folder, pinned=pinned, candidate=candidate, params=self.params)

    def summary(self, *, metrics: Path | None = None, report: Path | None = None) -> Summary:
        """``knowledge show``: the verdict and per-arm table as the last score wrote them."""
        from flightdeck.scoring.summary import read_summary

        return read_summary(metrics or self.folder.metrics_path, report or self.folder.report_path)

    def run(
        self,
        arm: str,
        *,
        request: RunRequest,
        on_start: Callable[[int, int], None] | None = None,
        on_trial: Callable[[TrialOutcome], None] | None = None,
    ) -> RunResult:
        """``experiment run``: each question without an answer is one trial of the harness."""
        from flightdeck.arms.runner import run_experiment

        config = self.run_request(arm, request=request).config(self.folder.root, arm, self.params)
        repos = self.project.repos
        return run_experiment(config, repos=repos, on_start=on_start, on_trial=on_trial)

    def run_request(self, arm: str, *, request: RunRequest) -> RunRequest:
        """``request`` with ``scratch`` decided (#21), the one place that rule is applied.

        Left None, a run is scratch when the project's pipeline does not name ``arm``.
        """
        if request.scratch is not None:
            return request
        return replace(request, scratch=bool(self.project.scratch_arms((arm,))))

    def import_answers(self, arm: str, *, source: Path, options: ImportOptions) -> ImportResult:
        """``knowledge import-answers``: a person's answers, hashed from their snapshot.

        An arm the pipeline does not name goes to the scratch folder, as a run of it would
        (#21); a person's arm params.yaml names (``people``) stays tracked.
        """
        from flightdeck.arms.people import import_answers

        folder = self.folder
        if self.project.scratch_arms((arm,)):
            folder = folder.with_scratch(arm)
        return import_answers(folder, arm, source, options, repos=self.project.repos)

    def rate(
        self, rater: str, *, arms: Sequence[str] = (), to_rate: ToRate = ToRate.EVERY_ANSWER
    ) -> RatingPass:
        """``knowledge rate``: the rater's session over params' arms and ``arms``, blind."""
        from flightdeck.rating.agreement import choose_arms
        from flightdeck.rating.session import RatingSession

        choice = choose_arms(self.folder.opened().arms(), scored=self.params.arms, asked=arms)
        session = RatingSession(
            self.folder, rater, self.project.repos, arms=choice.arms, to_rate=to_rate
        )
        return RatingPass(choice, session)

    def agreement(self, *, arms: Sequence[str] = ()) -> AgreementPass:
        """``knowledge agreement``: kappa and agreement per pair of raters, arm by arm."""
        from flightdeck.rating.agreement import agreement_arms, choose_arms, suite_agreement

        found = agreement_arms(self.folder.opened(keys=False))
        choice = choose_arms(found, scored=self.params.arms, asked=arms)
        return AgreementPass(choice, suite_agreement(self.folder, arms=choice.arms))

    def judge(
        self, judge: str, *, arms: Sequence[str], on_progress: Callable[[str], None] | None = None
    ) -> list[JudgeRun]:
        """``knowledge judge``: a declared judge's verdicts on each answer of ``arms``."""
        from flightdeck.rating.judges import run_judge

        return run_judge(
            self.folder, params=self.params, judge=judge, arms=list(arms), on_progress=on_progress
        )

    def calibrate(self, judge: str) -> Calibration:
        """``knowledge calibrate``: the judge measured against the people's majority."""
        from flightdeck.rating.judge_calibration import calibrate

        return calibrate(self.folder, params=self.params, judge=judge)

"""The facade: a project opened once per command, its suites bound to it, verbs as methods.

dvc's ``Repo`` is the model: :meth:`Project.open` reads params.yaml once (flags laid over
it), :meth:`Project.suite` names one suite of it, and the suite's verbs (``seal``,
``check``, ``status``, ``score``, ``gate``) call the task modules with the suite itself, so
a command is parse -> open -> one verb -> render and the suite folder is opened once::

    from flightdeck.facade import Project
    suite = Project.open().suite("knowledge-demo-v1")
    result = suite.score()  # the arms params.yaml names, outputs where the CLI writes them

The paths and the seal state live in :mod:`flightdeck.project` (the task modules read
them there); this module adds the verbs on top, so no task module imports it back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck import project as paths
from flightdeck.params import load_params, parse_repo_option

if TYPE_CHECKING:
    from flightdeck.params import Params
    from flightdeck.scoring.outcomes import GateResult, ScoreResult
    from flightdeck.suite.checks import Problem
    from flightdeck.tasks.knowledge import SealResult, SuiteStatus


@dataclass(frozen=True)
class Project(paths.Project):
    """The project (params.yaml's folder) with its suites and their verbs."""

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

        Read once: every verb of the suites of this project uses these params.
        """
        params = load_params(params_file, near=near)
        return cls(params.with_overrides(repos=parse_repo_option(repos), **overrides))

    def suite(self, folder: Path | str) -> Suite:  # type: ignore[override]
        """The suite ``folder`` (a path), or ``suites/<name>`` of this project for a bare name.

        A bare name that is no folder here but is one under the project's ``suites/`` names
        that suite; anything else is taken as the folder it spells. Not opened yet: its verb
        opens it once, after checking the verb's other arguments, so a bad flag is named
        before a missing file.
        """
        path = Path(folder)
        if not path.is_dir() and len(path.parts) == 1 and (self.suites_folder / path).is_dir():
            path = self.suites_folder / path
        return Suite(path, self.root, project=self)


@dataclass(frozen=True)
class Suite(paths.Suite):
    """A suite of a :class:`Project`: its paths and state, and the verbs on it."""

    project: Project = field(kw_only=True, compare=False, repr=False)

    @property
    def params(self) -> Params:
        return self.project.params

    def check(self, *, unchecked: bool = False) -> list[Problem]:
        """Every problem a seal would refuse, in file and line order; writes nothing."""
        from flightdeck.tasks.knowledge import check

        return check(self, repos=self.project.repos, unchecked=unchecked)

    def seal(self, *, unchecked: bool = False) -> SealResult:
        """Seal the suite and register its canaries in the project's holdouts folder."""
        from flightdeck.tasks.knowledge import seal

        return seal(
            self, repos=self.project.repos, holdouts=self.project.holdouts, unchecked=unchecked
        )

    def status(self) -> SuiteStatus:
        """Seal intact, not void, each arm's files: what a person checks before scoring."""
        from flightdeck.tasks.knowledge import status

        return status(self, params=self.params)

    def score(
        self,
        arms: Sequence[str] | None = None,
        *,
        baseline: str | None = None,
        candidate: str | None = None,
        metrics: Path | None = None,
        report: Path | None = None,
        results_dir: Path | None = None,
        on_progress: Callable[[str], None] | None = None,
        allow_dry_run: bool = False,
    ) -> ScoreResult:
        """``knowledge score``: score the arms (params' ``arms`` by default), write, record.

        A dry-run arm (``mockllm/model``) is refused unless ``allow_dry_run``.
        """
        from flightdeck.tasks.scoring import score

        return score(
            self,
            arms,
            params=self.params,
            baseline=baseline,
            candidate=candidate,
            metrics=metrics,
            report=report,
            results_dir=results_dir,
            on_progress=on_progress,
            allow_dry_run=allow_dry_run,
        )

    def gate(self, *, pinned: str | None = None, candidate: str | None = None) -> GateResult:
        """``knowledge gate``: does the candidate keep within the margin of the pinned arm?"""
        from flightdeck.tasks.gate import gate

        return gate(self, pinned=pinned, candidate=candidate, params=self.params)

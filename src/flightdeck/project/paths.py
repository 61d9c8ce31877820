"""Where a project's files are: the cache, holdouts, outputs, runs, traces, scratch, workspaces.

:class:`ProjectPaths` is the project root (the folder of params.yaml) and its holdouts folder,
joined with the names of :mod:`flightdeck.project.names`. The files of one suite folder, and
the outputs named after it, are :class:`~flightdeck.project.suite_folder.SuiteFolder`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from flightdeck.project import names


def holdouts_manifest(holdouts: Path) -> Path:
    """The holdouts manifest of the folder ``holdouts``: the canaries registered for the scan."""
    return holdouts / names.HOLDOUTS_MANIFEST


def holdouts_scans(holdouts: Path) -> Path:
    """Every canary scan of the folder ``holdouts``, clean or not (``scans.jsonl``)."""
    return holdouts / names.HOLDOUTS_SCANS


def suite_manifest(suite: Path) -> Path:
    """The seal of the suite folder ``suite``: ``manifest.json`` (:class:`SuiteFolder`'s)."""
    return suite / names.SUITE_MANIFEST


def results_file(results: Path, arm: str) -> Path:
    """An arm's per-question results in the folder ``results`` (``results/<suite>/``, or
    ``--results``): ``<arm>.jsonl``."""
    return results / f"{arm}.jsonl"


def results_arms(results: Path) -> list[str]:
    """The arms with a results file in the folder ``results``, sorted."""
    return sorted(p.name[: -len(".jsonl")] for p in results.glob("*.jsonl"))


def report_picture(report: Path) -> Path:
    """The report's picture, beside it: ``reports/<suite>.svg`` (or ``--report``'s ``.svg``)."""
    return report.with_suffix(".svg")


def is_suite_folder(folder: Path) -> bool:
    """A folder that holds a suite's keys or its seal: what a harness must never read."""
    return folder.is_dir() and any(
        (folder / n).exists() for n in (names.KEYS_FILE, names.SUITE_MANIFEST)
    )


def suites_in(folder: Path) -> list[Path]:
    """The suite folders directly in ``folder``, resolved (none when it is no folder)."""
    if not folder.is_dir():
        return []
    return [sub.resolve() for sub in folder.iterdir() if is_suite_folder(sub)]


@dataclass(frozen=True)
class ProjectPaths:
    """The project root and its holdouts folder (``None``: the default ``holdouts/``)."""

    root: Path = Path(".")
    holdouts_setting: Path | None = None

    @property
    def holdouts(self) -> Path:
        """The holdouts folder: params' ``holdouts`` (or --holdouts), else ``holdouts/``."""
        return self.default_holdouts if self.holdouts_setting is None else self.holdouts_setting

    @property
    def default_holdouts(self) -> Path:
        return self.root / names.HOLDOUTS_FOLDER

    @property
    def holdouts_manifest(self) -> Path:
        return holdouts_manifest(self.holdouts)

    @property
    def holdouts_scans(self) -> Path:
        return holdouts_scans(self.holdouts)

    @property
    def suites(self) -> Path:
        return self.root / names.SUITES_FOLDER

    @property
    def state(self) -> Path:
        """``.flightdeck/``: flightdeck's own files (cache, workspaces, scratch), never tracked."""
        return self.root / names.STATE_FOLDER

    @property
    def cache(self) -> Path:
        return self.root / names.CACHE_FOLDER

    @property
    def decision_cache(self) -> Path:
        """Calibrated decision levels, found once by exact enumeration and kept."""
        return self.cache / names.DECISION_CACHE

    @property
    def scan_database(self) -> Path:
        """The canary scan's compiled Hyperscan database, kept between scans (checked on load)."""
        return self.cache / names.SCAN_DATABASE

    @property
    def rating_order_key(self) -> Path:
        """The secret that keys each rater's order of the items (``rating/items.py``)."""
        return self.cache / names.ORDER_SECRET

    @property
    def workspaces(self) -> Path:
        return self.root / names.WORKSPACES_FOLDER

    @property
    def scratch(self) -> Path:
        return self.root / names.SCRATCH_FOLDER

    # Outputs named after a suite.

    def metrics(self, suite: str) -> Path:
        return self.root / names.METRICS_FOLDER / f"{suite}.json"

    def report(self, suite: str) -> Path:
        return self.root / names.REPORTS_FOLDER / f"{suite}.md"

    def results(self, suite: str) -> Path:
        return self.root / names.RESULTS_FOLDER / suite

    def runs(self, suite: str) -> Path:
        return self.root / names.RUNS_FOLDER / suite

    def traces(self, suite: str) -> Path:
        return self.root / names.TRACES_FOLDER / suite

    def scratch_of(self, suite: str) -> Path:
        """``.flightdeck/scratch/<suite>/``: a scratch arm's answers, labels, runs, traces."""
        return self.scratch / suite

    # What a trial's harness must never see.

    def protected(self, suite_dir: Path, repos: Iterable[Path]) -> list[Path]:
        """What a score depends on: the suite and every suite beside it, the repositories,
        the holdouts (params' and the default), the outputs and ``.flightdeck/``, resolved."""
        suite = suite_dir.resolve()
        found = [suite]
        for parent in dict.fromkeys((suite.parent, suite_dir.absolute().parent)):
            found += suites_in(parent)
        found += [Path(r).resolve() for r in repos]
        found.append(self.holdouts.resolve())
        project = self.root.resolve()
        found += [project / name for name in names.GUARDED_OUTPUTS]
        found.append(project / names.STATE_FOLDER)
        return found

"""The knowledge task: seal a suite, report its status, score arms, gate a candidate.

These functions take typed values and return results; they never print, prompt or exit,
so the CLI and Python callers (and the DVC pipeline through the CLI) share them. Check, seal
and status live here; score and gate live in ``tasks/scoring.py`` and ``tasks/gate.py`` and
are re-exported, so the task keeps the one address the product page names.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.errors import InputError
from flightdeck.files.clock import utc_now
from flightdeck.files.jsonl import (
    sha256_file,
    write_json,
    write_jsonl,
)
from flightdeck.holdouts.custody import describe_void as describe_void  # re-exported
from flightdeck.holdouts.custody import holdouts_custody
from flightdeck.params import Params
from flightdeck.project.modes import ReposNotAtHand
from flightdeck.project.names import SEALED_FILES
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.scoring.outcomes import GateResult as GateResult  # re-exported: callers import
from flightdeck.scoring.outcomes import ScoreResult as ScoreResult  # them from the task
from flightdeck.suite.records import (
    CANARY_PREFIX,
    UNHASHED,
    Canaries,
    Key,
    Manifest,
    Question,
    Source,
    parse_source_uri,
    read_answers,
    read_keys,
    read_labels,
    read_manifest,
    read_questions,
)
from flightdeck.suite.records import load_suite_files as load_suite_files  # re-exported
from flightdeck.suite.repos import RepoSet
from flightdeck.tasks.gate import gate as gate  # re-exported: the task's page
from flightdeck.tasks.scoring import compute_scores as compute_scores
from flightdeck.tasks.scoring import score as score
from flightdeck.version import __version__

if TYPE_CHECKING:
    from flightdeck.holdouts.custody import Custody
    from flightdeck.holdouts.manifest_format import Evidence
    from flightdeck.suite.checks import Problem


def new_canary() -> str:
    """The shared prefix plus 128 random bits, so one scan pass finds every suite's canaries."""
    return CANARY_PREFIX + secrets.token_hex(16)


# --- seal -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SealResult:
    suite: str
    manifest: Manifest
    questions: int
    checked_sources: int
    unchecked_repos: tuple[str, ...]  # repositories not at hand: their sources were not checked
    registered_only: bool = False  # already sealed: only its canaries were registered now
    already: bool = False  # already sealed, intact and registered: nothing was done


def check(
    suite: SuiteFolder,
    *,
    repos: RepoSet,
    repos_not_at_hand: ReposNotAtHand = ReposNotAtHand.REFUSE,
) -> list[Problem]:
    """Every problem a seal would refuse, in file and line order; writes nothing.

    Every line of the questions and keys files is read, each bad one listed; the checks
    between records and against the repositories run over the lines that read.
    """
    from flightdeck.suite.checks import Problem, check_suite, sort_problems

    suite = suite.opened()
    problems: list[Problem] = []
    if suite.manifest.exists():  # seal would refuse a sealed suite whose files changed
        try:
            suite.require_sealed()
        except InputError as exc:
            return [Problem(exc.path or "", exc.line or 0, exc.message)]
    from flightdeck.suite.every_line import read_gold_lines

    read = read_gold_lines(suite.questions, suite.keys, repos)  # every bad line (#21)
    problems.extend(read.problems)
    questions, keys = read.questions, read.keys
    found = check_suite(
        questions_path=suite.questions,
        keys_path=suite.keys,
        questions=questions,
        keys=keys,
        repos=repos,
        repos_not_at_hand=repos_not_at_hand,
        broken_ids=read.broken_ids,
    )
    return sort_problems([*problems, *found.problems])


def seal(
    suite: SuiteFolder,
    *,
    repos: RepoSet,
    holdouts: Path | None = None,
    repos_not_at_hand: ReposNotAtHand = ReposNotAtHand.REFUSE,
) -> SealResult:
    """Validate a suite, give every key a fresh canary, write manifest.json, register canaries.

    manifest.json is written after keys.jsonl: a crash before it leaves a suite that simply
    seals again (with new canaries, none of which was registered yet). The canaries are
    registered last; a sealed, intact suite whose canaries are not yet in ``holdouts`` (a crash
    just before, or a suite sealed without ``--holdouts``) gets them registered by running
    seal again with ``--holdouts``. Anything else already sealed is refused.
    ``repos_not_at_hand=ReposNotAtHand.SKIP`` is ``--unchecked``.
    """
    suite = suite.opened()
    if suite.manifest.exists():
        return _register_sealed(suite, holdouts)
    from flightdeck.suite.checks import check_suite, sort_problems
    from flightdeck.suite.every_line import read_gold_lines

    read = read_gold_lines(suite.questions, suite.keys, repos)
    if read.problems:  # the first bad line, a short commit named in full (#21)
        raise sort_problems(read.problems)[0].error()
    questions, keys = read.questions, read.keys
    found = check_suite(
        questions_path=suite.questions,
        keys_path=suite.keys,
        questions=questions,
        keys=keys,
        repos=repos,
        repos_not_at_hand=repos_not_at_hand,
    )
    if found.first is not None:
        raise found.first.error()
    checked, not_checked = found.checked_sources, found.unchecked_repos
    # Fresh canaries always: a canary copied from an earlier version may have leaked.
    by_id = {q.id: q for q in questions}
    sealed_keys = [
        Key(
            k.id,
            k.answer_key,
            k.required_facts,
            _hashed_sources(k, by_id[k.id], found.hashes),
            new_canary(),
        )
        for k in keys
    ]
    write_jsonl(suite.keys, [k.to_json() for k in sealed_keys])
    manifest = Manifest(
        suite=suite.name,
        sealed_at=utc_now(),
        files={name: sha256_file(suite.root / name) for name in SEALED_FILES},
        flightdeck_version=__version__,
        unchecked_repos=not_checked,
    )
    write_json(suite.manifest, manifest.to_json())
    if holdouts is not None:
        _register(holdouts, suite, manifest, sealed_keys)
    return SealResult(suite.name, manifest, len(questions), checked, not_checked)


def _hashed_sources(
    key: Key, question: Question, hashes: dict[tuple[str, str, str], str]
) -> tuple[Source, ...]:
    """The key's sources with every sha256 the author left out computed (#15).

    A repository file's comes from its bytes at the question's ``as_of`` (the checks read
    it); an opaque uri's is the hash of the uri itself (:func:`opaque_sha256`). The checks
    have refused any source whose hash could not be computed, so none stays unhashed.
    """
    from flightdeck.suite.citations import opaque_sha256

    sources = []
    for source in key.valid_sources:
        if source.sha256 != UNHASHED:
            sources.append(source)
            continue
        parsed = parse_source_uri(source.uri)
        if parsed is None:
            sources.append(Source(source.uri, opaque_sha256(source.uri)))
            continue
        digest = hashes[(parsed.repo, question.as_of[parsed.repo], parsed.path)]
        sources.append(Source(source.uri, digest))
    return tuple(sources)


def _register(holdouts: Path, suite: SuiteFolder, manifest: Manifest, keys: Sequence[Key]) -> None:
    from flightdeck.holdouts.registry import register_suite
    from flightdeck.suite.sealed import registered_sha256

    register_suite(
        holdouts,
        suite=suite.name,
        manifest_sha256=registered_sha256(manifest),
        canaries={k.id: k.canary for k in keys if k.canary},
    )


def _register_sealed(suite: SuiteFolder, holdouts: Path | None) -> SealResult:
    """Register an intact sealed suite's canaries, or refuse: it is never sealed again."""
    from flightdeck.holdouts.registry import suite_state

    manifest = suite.require_sealed()  # refuses a changed file or a copied folder
    if holdouts is not None and not holdouts.is_dir():
        # Creating a fresh registry for a sealed suite would start it clean: a typo in
        # `holdouts` would then drop the void its real registry records.
        raise InputError(
            holdouts,
            None,
            f"the holdouts folder does not exist, and {suite.name} is already sealed (its "
            "canaries are registered where it was sealed); fix `holdouts` in params.yaml or "
            "--holdouts, or create the folder if this suite was never registered",
        )
    if holdouts is not None and suite_state(holdouts, suite.name) in (
        "no-manifest",
        "unregistered",
    ):
        keys = read_keys(suite.keys, canaries=Canaries.REQUIRED)
        _register(holdouts, suite, manifest, keys)
        questions = len(read_questions(suite.questions))
        return SealResult(suite.name, manifest, questions, 0, (), registered_only=True)
    # Sealed, intact (require_sealed refused anything else) and registered: a no-op, so the
    # pipeline's seal stage and `dvc repro -f` pass on a sealed suite. Canaries never change.
    questions = len(read_questions(suite.questions))
    return SealResult(suite.name, manifest, questions, 0, (), already=True)


# --- status -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ArmStatus:
    arm: str
    answers: int
    meta: bool
    raters: tuple[str, ...]
    labels: int
    short_of_raters: int  # answers with fewer than min_raters raters
    scored: str  # "never", "scored", "changed since scored"

    @property
    def ok(self) -> bool:
        """Answers, meta and raters present, and answers unchanged since scored."""
        return (
            self.meta
            and self.answers > 0
            and not self.short_of_raters
            and self.scored != "changed since scored"
        )


@dataclass(frozen=True)
class SuiteStatus:
    suite: str
    questions: int
    sealed: bool
    changed: tuple[str, ...]
    sealed_at: str | None
    void: Evidence | None
    arms: tuple[ArmStatus, ...]
    holdouts: str = "sealed"  # registry.suite_state: no-manifest, unregistered, sealed, void
    custody: Custody | None = None  # the last canary scan of its traces, the last unvoid
    unchecked_repos: tuple[str, ...] = ()  # sealed --unchecked: sources never checked there

    scoring: tuple[str, ...] = ()  # the arms params.yaml scores; empty: every arm shown

    @property
    def ready(self) -> bool:
        """Sealed, intact, not void, and every arm to be scored has what scoring needs.

        Only the arms params.yaml scores count (when it names any): a scratch arm beside them
        does not make the suite "not ready".
        """
        counted = [a for a in self.arms if not self.scoring or a.arm in self.scoring]
        return (
            self.sealed
            and not self.changed
            and self.void is None
            and bool(counted)
            and all(a.ok for a in counted)
        )


def status(suite: SuiteFolder, *, params: Params) -> SuiteStatus:
    """What a person checks before scoring: seal intact, not void, each arm's files.

    Reports a changed sealed suite rather than refusing it: saying so is its job.
    """
    suite = suite.opened()
    questions = read_questions(suite.questions)
    ids = [q.id for q in questions]
    sealed = suite.is_sealed
    manifest = read_manifest(suite.manifest) if sealed else None
    changed = tuple(suite.changed_files(manifest)) if manifest else ()
    ledger = suite.read_ledger()
    arms = []
    for arm in sorted({*suite.arms(), *params.arms}):
        if not suite.answers(arm).is_file():  # named in params.yaml arms, not answered yet
            arms.append(ArmStatus(arm, 0, suite.meta(arm).is_file(), (), 0, 0, "never"))
            continue
        answers = read_answers(suite.answers(arm), ids)
        labels = read_labels(suite.labels(arm), ids) if suite.labels(arm).is_file() else []
        raters: list[str] = []
        per_id: dict[str, int] = {}
        for label in labels:
            per_id[label.id] = per_id.get(label.id, 0) + 1
            if label.rater not in raters:
                raters.append(label.rater)
        short = sum(per_id.get(a.id, 0) < params.min_raters for a in answers)
        scored = "never"
        if arm in ledger:
            current = sha256_file(suite.answers(arm))
            scored = "scored" if ledger[arm].answers_sha256 == current else "changed since scored"
        arms.append(
            ArmStatus(
                arm,
                len(answers),
                suite.meta(arm).is_file(),
                tuple(raters),
                len(labels),
                short,
                scored,
            )
        )
    told = holdouts_custody(params, suite.name, sealed=sealed)
    return SuiteStatus(
        suite=suite.name,
        questions=len(questions),
        sealed=sealed,
        changed=changed,
        sealed_at=manifest.sealed_at if manifest else None,
        void=told.evidence if sealed else None,
        arms=tuple(arms),
        holdouts=told.state,
        custody=told,
        scoring=params.arms,
        unchecked_repos=manifest.unchecked_repos if manifest else (),
    )

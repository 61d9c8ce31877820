"""The score task: read every arm once, score it, compare two, write the outputs, record.

``score`` is ``knowledge score`` whole; ``compute_scores`` the same without writing. Arms
are read in the order given, so the first bad arm is the one reported, and the comparison
is drawn once they are all read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.arms.harness_needs import refuse_dry_runs
from flightdeck.errors import InputError
from flightdeck.files.clock import utc_now
from flightdeck.files.jsonl import (
    append_jsonl,
    read_bytes,
    sha256_bytes,
)
from flightdeck.holdouts.custody import describe_void, holdouts_custody, refuse_void_elsewhere
from flightdeck.params import Params
from flightdeck.params.arm_names import check_arm_name
from flightdeck.project.modes import DryRuns
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.scoring.outcomes import ScoreResult
from flightdeck.scoring.rules import ArmScore, Comparison, check_labels, compare_arms, score_arm
from flightdeck.scoring.tables import arm_frames
from flightdeck.suite.records import (
    Answer,
    ArmMeta,
    Canaries,
    Key,
    Manifest,
    Question,
    load_suite_files,
    read_answers,
    read_labels,
    read_meta,
)
from flightdeck.suite.sealed import only_line_endings
from flightdeck.version import __version__

if TYPE_CHECKING:
    from flightdeck.holdouts.custody import Custody
    from flightdeck.rating.judge_calibration import JudgedBy
    from flightdeck.scoring.tables import SuiteTables
    from flightdeck.suite.repos import RepoSet


@dataclass(frozen=True)
class ScoreOptions:
    """What ``knowledge score`` is asked, besides the suite and params (their flags).

    ``arms`` None: params' ``arms``; ``baseline``/``candidate`` None: params' pair when both
    are scored; an output None: where the suite's paths say (``metrics/<suite>.json``,
    ``reports/<suite>.md``, ``results/<suite>/``) and ``ledger`` None: the suite's
    ``scores.jsonl`` (a scratch score's are the scratch folder's, #21). A dry-run arm
    (``mockllm/model``) is refused unless ``dry_runs`` is ``DryRuns.ALLOW``.
    """

    arms: tuple[str, ...] | None = None
    baseline: str | None = None
    candidate: str | None = None
    metrics: Path | None = None
    report: Path | None = None
    results_dir: Path | None = None
    ledger: Path | None = None
    dry_runs: DryRuns = DryRuns.REFUSE


def load_arm(
    suite: SuiteFolder,
    arm: str,
    *,
    questions: Sequence[Question],
    keys: dict[str, Key],
    params: Params,
    judge: JudgedBy | None = None,
    tables: SuiteTables | None = None,
) -> ArmScore:
    """Read and check one arm's answers, labels and meta, then score it.

    An arm no person rated takes its labels from ``judge`` (a calibrated judge), if given.
    """
    ids = [q.id for q in questions]
    check_arm_name(arm)  # also for a Python caller of load_arm
    if not suite.answers(arm).is_file():
        raise InputError(
            suite.answers(arm),
            None,
            f"no answers for arm {arm!r}; run `flightdeck experiment run` or "
            "`flightdeck knowledge import-answers` first, or check the arm name",
        )
    # Each file is read once: its bytes are both parsed and hashed for the ledger.
    answers_data = read_bytes(suite.answers(arm))
    answers: dict[str, Answer] = {
        a.id: a for a in read_answers(suite.answers(arm), ids, data=answers_data)
    }
    labels_path = suite.labels(arm)
    labels_data = read_bytes(labels_path) if labels_path.is_file() else None
    labels = [] if labels_data is None else read_labels(labels_path, ids, data=labels_data)
    min_raters = params.min_raters
    if judge is not None and not labels:
        labels, min_raters = judge.labels(suite, arm, answers), 1
    # The answers' and labels' columns, read once for the checks and the scoring.
    frames = arm_frames(answers.values(), labels)
    check_labels(labels_path, answers, labels, min_raters=min_raters, frames=frames)
    meta: ArmMeta | None = read_meta(suite.meta(arm)) if suite.meta(arm).is_file() else None
    scored = score_arm(
        arm,
        questions,
        keys,
        answers,
        labels,
        confidence=params.confidence,
        meta=meta,
        suite=tables,
        frames=frames,
    )
    labels_sha = "" if labels_data is None else sha256_bytes(labels_data)
    return _with_hashes(scored, sha256_bytes(answers_data), labels_sha)


def _with_hashes(score: ArmScore, answers_sha: str, labels_sha: str) -> ArmScore:
    import dataclasses

    return dataclasses.replace(score, answers_sha256=answers_sha, labels_sha256=labels_sha)


@dataclass(frozen=True, kw_only=True)
class ArmsRead:
    """A sealed suite with its arms read, checked and scored: what score and gate decide on."""

    suite: SuiteFolder
    questions: list[Question]
    scores: dict[str, ArmScore]
    manifest: Manifest
    correctness_from: dict[str, str]  # where each arm's correctness came from, in words
    custody: Custody


def read_arms(
    suite: SuiteFolder,
    arms: Sequence[str],
    params: Params,
    *,
    dry_runs: DryRuns = DryRuns.REFUSE,
) -> ArmsRead:
    """Read the sealed suite and every arm, in the order given (the first bad arm is reported)."""
    suite = suite.opened()
    manifest = suite.require_sealed()
    if dry_runs is DryRuns.REFUSE:
        refuse_dry_runs({arm: suite.meta(arm) for arm in arms})
    told = holdouts_custody(params, suite.name)
    evidence = told.evidence
    if evidence is not None:
        raise InputError(
            suite.project.holdouts_manifest,
            None,
            f"suite {suite.name!r} is void: a canary leaked ({describe_void(evidence)}); its keys "
            "are spent, so seal a new suite version",
        )
    refuse_void_elsewhere(params, suite.name)
    questions, keys = load_suite_files(suite, canaries=Canaries.REQUIRED)
    keys_by_id = {k.id: k for k in keys}
    judge = _calibrated_judge(suite, params)
    from flightdeck.scoring.tables import suite_tables

    tables = suite_tables(questions, keys_by_id)  # built once, shared by every arm
    scores = {
        arm: load_arm(
            suite,
            arm,
            questions=questions,
            keys=keys_by_id,
            params=params,
            judge=judge,
            tables=tables,
        )
        for arm in arms
    }
    return ArmsRead(
        suite=suite,
        questions=questions,
        scores=scores,
        manifest=manifest,
        correctness_from=_correctness_from(scores, judge),
        custody=told,
    )


def compare(
    baseline: ArmScore, candidate: ArmScore, params: Params, *, decision_cache: Path
) -> Comparison:
    """candidate - baseline on every metric, with the verdict of params' rule.

    ``decision_cache`` keeps the rule's calibrated levels (``ProjectPaths.decision_cache``).
    """
    return compare_arms(
        baseline,
        candidate,
        seed=params.seed,
        resamples=params.resamples,
        confidence=params.confidence,
        threshold=params.threshold,
        decision=params.decision,
        cache_dir=decision_cache,
    )


def _calibrated_judge(suite: SuiteFolder, params: Params) -> JudgedBy | None:
    from flightdeck.rating.judge_calibration import calibrated_judge

    return calibrated_judge(suite, params)


def _correctness_from(scores: dict[str, ArmScore], judge: JudgedBy | None) -> dict[str, str]:
    """Where each arm's correctness came from, in words; empty when no judge was named."""
    from flightdeck.rating.judge_calibration import people_words

    if judge is None:
        return {}
    judged = f"judge:{judge.spec.name}"
    return {
        arm: judge.words() if s.raters == (judged,) else people_words(s.raters)
        for arm, s in scores.items()
    }


def score(
    suite: SuiteFolder,
    options: ScoreOptions,
    *,
    params: Params,
    repos: RepoSet,
    on_progress: Callable[[str], None] | None = None,
) -> ScoreResult:
    """The whole of ``knowledge score``: score, write metrics, results and report, record.

    ``repos`` are the project's (:attr:`flightdeck.project.Project.repos`).

    The ledger (``scores.jsonl``) gets each arm's hashes unless already there. The result
    says what was written (``written``) and which arms were recorded (``recorded``).
    """
    from flightdeck.scoring.report import write_outputs

    suite = suite.opened()
    scored = list(params.arms if options.arms is None else options.arms)
    baseline, candidate = options.baseline, options.candidate
    if baseline is None and candidate is None:
        baseline, candidate = params_comparison(params, scored)
    result = compute_scores(
        suite,
        scored,
        params=params,
        repos=repos,
        baseline=baseline,
        candidate=candidate,
        on_progress=on_progress,
        dry_runs=options.dry_runs,
    )
    written = write_outputs(
        result,
        metrics=options.metrics or suite.metrics_path,
        report=options.report or suite.report_path,
        results_dir=options.results_dir or suite.results_dir,
    )
    recorded = record_scores(suite, result, ledger=options.ledger or suite.ledger)
    return replace(result, written=written, recorded=tuple(recorded))


def params_comparison(params: Params, scored: Sequence[str]) -> tuple[str | None, str | None]:
    """params.yaml ``baseline``/``candidate`` (#15), when both are among the arms scored.

    So the pipeline's score stage names no arm, while scoring one arm still works.
    """
    pair = (params.baseline, params.candidate)
    if pair[0] is not None and pair[1] is not None and all(arm in scored for arm in pair):
        return pair
    return None, None


def compute_scores(
    suite: SuiteFolder,
    arms: Sequence[str],
    *,
    params: Params,
    repos: RepoSet,
    baseline: str | None = None,
    candidate: str | None = None,
    on_progress: Callable[[str], None] | None = None,
    dry_runs: DryRuns = DryRuns.REFUSE,
) -> ScoreResult:
    """Score each arm once (ledger-checked) and compare candidate with baseline if asked.

    Writes nothing: :func:`score` is this plus the outputs and the ledger. ``repos`` (the
    project's) are where each fabricated citation is looked up.
    """
    if not arms:
        raise InputError("--arm", None, "name at least one arm to score")
    if len(set(arms)) != len(arms):
        raise InputError("--arm", None, "an arm is named twice; name each arm once")
    if (baseline is None) != (candidate is None):
        raise InputError("--baseline", None, "give --baseline and --candidate together")
    if baseline is not None and baseline == candidate:
        raise InputError("--candidate", None, "the candidate is the baseline; name another arm")
    for arm in arms:
        check_arm_name(arm)
    for name in (baseline, candidate):
        if name is not None and name not in arms:
            raise InputError(
                "--arm", None, f"{name!r} is compared but not scored; add --arm {name}"
            )
    read = read_arms(suite, arms, params, dry_runs=dry_runs)
    check_ledger(read.suite, read.scores)
    comparisons: tuple[Comparison, ...] = ()
    if baseline is not None and candidate is not None:
        if on_progress:
            on_progress(f"bootstrapping {candidate} vs {baseline}")
        cache = read.suite.project.decision_cache
        pair = (read.scores[baseline], read.scores[candidate])
        comparisons = (compare(*pair, params, decision_cache=cache),)
    from flightdeck.scoring.fabricated import with_fabricated_split

    result = ScoreResult(
        suite=read.suite.name,
        n=len(read.questions),
        arms=read.scores,
        comparisons=comparisons,
        params=params,
        sealed_at=read.manifest.sealed_at,
        holdouts=read.custody.state,
        custody=read.custody,
        unchecked_repos=read.manifest.unchecked_repos,
        correctness_from=read.correctness_from,
        questions={q.id: q.question for q in read.questions},
    )
    # (#21) what each fabricated citation is
    return with_fabricated_split(result, repos=repos, questions=read.questions)


def check_ledger(suite: SuiteFolder, scores: dict[str, ArmScore]) -> None:
    """Refuse an arm whose answers changed since it was first scored (labels may change)."""
    ledger = suite.first_scores()  # the tracked ledger's and the scratch one's (#21)
    for arm, result in scores.items():
        ledger_file, first = ledger.get(arm, (suite.ledger, None))
        if first is not None and first.answers_sha256 != result.answers_sha256:
            line, scored_sha256, when = first.line, first.answers_sha256, first.scored_at
            if only_line_endings(suite.answers(arm), scored_sha256):
                raise InputError(
                    suite.answers(arm),
                    None,
                    f"answers of arm {arm!r} changed since scored on {when}: their line endings "
                    "are CRLF now; check out with core.autocrlf=false (the project's "
                    ".gitattributes keeps answer files -text)",
                )
            raise InputError(
                ledger_file,
                line,
                f"arm {arm!r} was scored on {when} with other answers; each arm is scored "
                "once, so score the new answers under a new arm name",
            )


def record_scores(suite: SuiteFolder, result: ScoreResult, *, ledger: Path) -> list[str]:
    """Append each arm's (answers, labels) hashes to ``ledger`` unless already recorded there.

    ``ledger`` is the suite's scores.jsonl, or a scratch score's (#21). What the tracked one
    holds counts for both; the tracked one never leans on a line only the scratch one holds.
    """
    suite = suite.opened()
    records = suite.ledger_records(suite.ledger)
    if ledger != suite.ledger:
        records += suite.ledger_records(ledger)
    seen = {(r.arm, r.answers_sha256, r.labels_sha256) for r in records}
    added = []
    for arm, s in result.arms.items():
        if (arm, s.answers_sha256, s.labels_sha256) in seen:
            continue
        append_jsonl(
            ledger,
            {
                "arm": arm,
                "answers_sha256": s.answers_sha256,
                "labels_sha256": s.labels_sha256,
                "scored_at": utc_now(),
                "flightdeck_version": __version__,
            },
        )
        added.append(arm)
    return added

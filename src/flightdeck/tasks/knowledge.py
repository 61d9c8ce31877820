"""The knowledge task: seal a suite, report its status, score arms, gate a candidate.

These functions take typed values and return results; they never print, prompt or exit,
so the CLI and Python callers (and the DVC pipeline through the CLI) share them.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck import __version__
from flightdeck.clock import utc_now
from flightdeck.errors import InputError
from flightdeck.jsonl import (
    append_jsonl,
    read_bytes,
    read_jsonl,
    sha256_bytes,
    sha256_file,
    write_json,
    write_jsonl,
)
from flightdeck.params import Params, load_params
from flightdeck.project import CACHE_FOLDER, SEALED_FILES, Suite, as_suite, check_arm_name
from flightdeck.scoring.outcomes import GateResult as GateResult  # re-exported: callers import
from flightdeck.scoring.outcomes import ScoreResult as ScoreResult  # them from the task
from flightdeck.scoring.rules import ArmScore, Comparison, check_labels, compare_arms, score_arm
from flightdeck.suite.gold import load_suite_files as load_suite_files  # re-exported
from flightdeck.suite.records import (
    CANARY_PREFIX,
    UNHASHED,
    Answer,
    ArmMeta,
    Key,
    Manifest,
    Question,
    Source,
    parse_source_uri,
    read_answers,
    read_keys,
    read_labels,
    read_manifest,
    read_meta,
    read_questions,
)
from flightdeck.suite.repos import RepoSet

if TYPE_CHECKING:
    from flightdeck.holdouts.custody import Custody
    from flightdeck.rating.calibration import JudgedBy
    from flightdeck.scoring.tables import SuiteTables
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


def check(suite_dir: Suite | Path, *, repos: RepoSet, unchecked: bool = False) -> list[Problem]:
    """Every problem a seal would refuse, in file and line order; writes nothing.

    A questions or keys file that cannot be read line by line stops there (its first bad
    line is the problem); everything else is listed.
    """
    from flightdeck.suite.checks import Problem, check_suite, sort_problems

    suite = as_suite(suite_dir)
    problems: list[Problem] = []
    if suite.manifest.exists():  # seal would refuse a sealed suite whose files changed
        try:
            suite.require_sealed()
        except InputError as exc:
            return [Problem(exc.path or "", exc.line or 0, exc.message)]
    try:
        questions = read_questions(suite.questions)
    except InputError as exc:
        problems.append(Problem(exc.path or "", exc.line or 0, exc.message))
        questions = []
    try:
        keys = read_keys(suite.keys, sealed=None)
    except InputError as exc:
        problems.append(Problem(exc.path or "", exc.line or 0, exc.message))
        keys = []
    if problems:
        return sort_problems(problems)
    found = check_suite(suite.questions, suite.keys, questions, keys, repos, unchecked=unchecked)
    return list(found.problems)


def seal(
    suite_dir: Suite | Path,
    *,
    repos: RepoSet,
    holdouts: Path | None = None,
    unchecked: bool = False,
) -> SealResult:
    """Validate a suite, give every key a fresh canary, write manifest.json, register canaries.

    manifest.json is written after keys.jsonl: a crash before it leaves a suite that simply
    seals again (with new canaries, none of which was registered yet). The canaries are
    registered last; a sealed, intact suite whose canaries are not yet in ``holdouts`` (a crash
    just before, or a suite sealed without ``--holdouts``) gets them registered by running
    seal again with ``--holdouts``. Anything else already sealed is refused.
    """
    suite = as_suite(suite_dir)
    if suite.manifest.exists():
        return _register_sealed(suite, holdouts)
    from flightdeck.suite.checks import check_suite

    questions = read_questions(suite.questions)
    keys = read_keys(suite.keys, sealed=None)
    found = check_suite(suite.questions, suite.keys, questions, keys, repos, unchecked=unchecked)
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


def _register(holdouts: Path, suite: Suite, manifest: Manifest, keys: Sequence[Key]) -> None:
    from flightdeck.holdouts.registry import register_suite
    from flightdeck.jsonl import canonical_json

    register_suite(
        holdouts,
        suite=suite.name,
        manifest_sha256=sha256_bytes(canonical_json(manifest.to_json())),
        canaries={k.id: k.canary for k in keys if k.canary},
    )


def _register_sealed(suite: Suite, holdouts: Path | None) -> SealResult:
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
        keys = read_keys(suite.keys, sealed=True)
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
    void: dict[str, Any] | None
    arms: tuple[ArmStatus, ...]
    holdouts: str = "sealed"  # holdout.suite_state: no-manifest, unregistered, sealed, void
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


def status(suite_dir: Suite | Path, *, params: Params) -> SuiteStatus:
    """What a person checks before scoring: seal intact, not void, each arm's files.

    Reports a changed sealed suite rather than refusing it: saying so is its job.
    """
    suite = as_suite(suite_dir, params)
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
            scored = "scored" if ledger[arm][1] == current else "changed since scored"
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


def holdouts_custody(params: Params, suite: str, *, sealed: bool = True) -> Custody:
    """What the holdouts registry says of ``suite``: the one place commands ask it.

    A holdouts folder that params.yaml or --holdouts names must exist once the suite is
    sealed (a typo must never switch the leak check off); the default ``holdouts/``, never
    named, may be missing, and the suite then reads as not registered.
    """
    from flightdeck.holdouts.custody import Custody, custody
    from flightdeck.holdouts.manifest import require_folder

    if not params.holdouts.is_dir():
        if params.holdouts_named and sealed:
            require_folder(params.holdouts)
        return Custody("no-manifest", None, None)
    return custody(params.holdouts, suite)


# --- score ------------------------------------------------------------------------------


def load_arm(
    suite: Suite,
    arm: str,
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
    if judge is not None and not labels:
        labels = judge.labels(suite, arm, answers)
        check_labels(labels_path, answers, labels, min_raters=1)
    else:
        check_labels(labels_path, answers, labels, min_raters=params.min_raters)
    meta: ArmMeta | None = read_meta(suite.meta(arm)) if suite.meta(arm).is_file() else None
    scored = score_arm(
        arm, questions, keys, answers, labels, confidence=params.confidence, meta=meta, suite=tables
    )
    labels_sha = "" if labels_data is None else sha256_bytes(labels_data)
    return _with_hashes(scored, sha256_bytes(answers_data), labels_sha)


def _with_hashes(score: ArmScore, answers_sha: str, labels_sha: str) -> ArmScore:
    import dataclasses

    return dataclasses.replace(score, answers_sha256=answers_sha, labels_sha256=labels_sha)


def _prepare(
    suite_dir: Suite | Path, arms: Sequence[str], params: Params
) -> tuple[Suite, list[Question], dict[str, ArmScore], Manifest, dict[str, str], Custody]:
    suite = as_suite(suite_dir, params)
    manifest = suite.require_sealed()
    told = holdouts_custody(params, suite.name)
    evidence = told.evidence
    if evidence is not None:
        raise InputError(
            params.holdouts / "manifest.json",
            None,
            f"suite {suite.name!r} is void: a canary leaked ({describe_void(evidence)}); its keys "
            "are spent, so seal a new suite version",
        )
    questions, keys = load_suite_files(suite, sealed=True)
    keys_by_id = {k.id: k for k in keys}
    judge = _calibrated_judge(suite, params)
    from flightdeck.scoring.tables import suite_tables

    tables = suite_tables(questions, keys_by_id)  # built once, shared by every arm
    scores = {
        arm: load_arm(suite, arm, questions, keys_by_id, params, judge, tables) for arm in arms
    }
    return suite, questions, scores, manifest, _sources(scores, judge), told


def _calibrated_judge(suite: Suite, params: Params) -> JudgedBy | None:
    from flightdeck.rating.calibration import calibrated_judge

    return calibrated_judge(suite, params)


def _sources(scores: dict[str, ArmScore], judge: JudgedBy | None) -> dict[str, str]:
    """Where each arm's correctness came from, in words; empty when no judge was named."""
    from flightdeck.rating.calibration import people_words

    if judge is None:
        return {}
    judged = f"judge:{judge.spec.name}"
    return {
        arm: judge.words() if s.raters == (judged,) else people_words(s.raters)
        for arm, s in scores.items()
    }


def describe_void(evidence: dict[str, Any]) -> str:
    """The holdouts manifest's evidence in words: which key leaked, where, how often."""
    where = f"{evidence.get('file', '?')}:{evidence.get('line', '?')}"
    count = evidence.get("count", 1)
    more = f", {count} hits in all" if isinstance(count, int) and count > 1 else ""
    return f"the canary of question {evidence.get('question_id', '?')} in {where}{more}"


def score(
    suite_dir: Suite | Path | str,
    arms: Sequence[str] | None = None,
    *,
    params: Params | None = None,
    baseline: str | None = None,
    candidate: str | None = None,
    metrics: Path | None = None,
    report: Path | None = None,
    results_dir: Path | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> ScoreResult:
    """The whole of ``knowledge score``: score, write metrics, results and report, record.

    ``params`` default to the project's params.yaml, found as the CLI finds it, and ``arms``
    to its ``arms``. Outputs
    default to ``metrics/<suite>.json``, ``reports/<suite>.md`` (with its ``.svg``) and
    ``results/<suite>/`` under the project root (``params.root``). The ledger
    (``scores.jsonl``) gets each arm's hashes unless already there. The result says what was
    written (``written``) and which arms were recorded (``recorded``).
    """
    from flightdeck.perf import gc_paused
    from flightdeck.scoring.report import write_outputs

    if isinstance(suite_dir, str):
        suite_dir = Path(suite_dir)
    if params is None:  # ./params.yaml, else the nearest one above the suite folder
        params = load_params(near=suite_dir if isinstance(suite_dir, Path) else suite_dir.root)
    suite = as_suite(suite_dir, params)
    scored = list(params.arms if arms is None else arms)
    if baseline is None and candidate is None:
        baseline, candidate = params_comparison(params, scored)
    # Many small acyclic records are built and written: the cycle collector only costs time.
    with gc_paused():
        result = compute_scores(
            suite,
            scored,
            params=params,
            baseline=baseline,
            candidate=candidate,
            on_progress=on_progress,
        )
        written = write_outputs(
            result,
            metrics=metrics or suite.metrics_path,
            report=report or suite.report_path,
            results_dir=results_dir or suite.results_dir,
        )
    recorded = record_scores(suite, result)
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
    suite_dir: Suite | Path,
    arms: Sequence[str],
    *,
    params: Params,
    baseline: str | None = None,
    candidate: str | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> ScoreResult:
    """Score each arm once (ledger-checked) and compare candidate with baseline if asked.

    Writes nothing: :func:`score` is this plus the outputs and the ledger.
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
    from flightdeck.perf import gc_paused

    with gc_paused():
        suite, questions, scores, manifest, sources, told = _prepare(suite_dir, arms, params)
    _check_ledger(suite, scores)
    comparisons: tuple[Comparison, ...] = ()
    if baseline is not None and candidate is not None:
        if on_progress:
            on_progress(f"bootstrapping {candidate} vs {baseline}")
        comparisons = (
            compare_arms(
                scores[baseline],
                scores[candidate],
                seed=params.seed,
                resamples=params.resamples,
                confidence=params.confidence,
                threshold=params.threshold,
                decision=params.decision,
                cache_dir=cache_dir(params),
            ),
        )
    return ScoreResult(
        suite.name,
        len(questions),
        scores,
        comparisons,
        params,
        manifest.sealed_at,
        told.state,
        told,
        manifest.unchecked_repos,
        sources,
        {q.id: q.question for q in questions},
    )


def _check_ledger(suite: Suite, scores: dict[str, ArmScore]) -> None:
    """Refuse an arm whose answers changed since it was first scored (labels may change)."""
    from flightdeck.project import _only_line_endings

    ledger = suite.read_ledger()
    for arm, result in scores.items():
        if arm in ledger and ledger[arm][1] != result.answers_sha256:
            line, scored_sha256, when = ledger[arm]
            if _only_line_endings(suite.answers(arm), scored_sha256):
                raise InputError(
                    suite.answers(arm),
                    None,
                    f"answers of arm {arm!r} changed since scored on {when}: their line endings "
                    "are CRLF now; check out with core.autocrlf=false (the project's "
                    ".gitattributes keeps answer files -text)",
                )
            raise InputError(
                suite.ledger,
                line,
                f"arm {arm!r} was scored on {when} with other answers; each arm is scored "
                "once, so score the new answers under a new arm name",
            )


def record_scores(suite_dir: Suite | Path, result: ScoreResult) -> list[str]:
    """Append each arm's (answers, labels) hashes to scores.jsonl unless already recorded."""
    suite = as_suite(suite_dir)
    seen: set[tuple[str, str, str]] = set()
    if suite.ledger.is_file():
        for _, record in read_jsonl(suite.ledger):
            seen.add(
                (record["arm"], record["answers_sha256"], str(record.get("labels_sha256", "")))
            )
    added = []
    for arm, s in result.arms.items():
        if (arm, s.answers_sha256, s.labels_sha256) in seen:
            continue
        append_jsonl(
            suite.ledger,
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


# --- gate -------------------------------------------------------------------------------


def cache_dir(params: Params) -> Path:
    """The project cache folder (calibrated levels live under it)."""
    return params.root / CACHE_FOLDER


def gate(
    suite_dir: Suite | Path,
    *,
    pinned: str | None = None,
    candidate: str | None = None,
    params: Params,
) -> GateResult:
    """Pass when, on each metric, candidate - pinned is shown to be >= -gate_margin.

    The claim is read by the rule in force (params ``decision``) at its own threshold: the
    calibrated rule reads Tango's score statistic at a level found by exact enumeration, so a
    candidate truly worse by the margin passes at most 2.5% of the time at this n (the plain
    percentile bound: up to 8.2% at n = 40).
    """
    from flightdeck.scoring.decision import decide
    from flightdeck.scoring.rules import METRICS

    pinned = pinned or params.pinned  # params.yaml ``pinned``/``candidate`` (#15)
    candidate = candidate or params.candidate
    if pinned is None:
        raise InputError(
            "--pinned", None, "name the pinned arm: --pinned ARM, or pinned: in params.yaml"
        )
    if candidate is None:
        raise InputError(
            "--candidate",
            None,
            "name the candidate arm: --candidate ARM, or candidate: in params.yaml",
        )
    check_arm_name(pinned, where="--pinned")
    check_arm_name(candidate, where="--candidate")
    if pinned == candidate:
        raise InputError("--candidate", None, "the candidate is the pinned arm; name another arm")
    suite, _, scores, _, sources, _ = _prepare(suite_dir, [pinned, candidate], params)
    _check_ledger(suite, scores)
    comparison = compare_arms(
        scores[pinned],
        scores[candidate],
        seed=params.seed,
        resamples=params.resamples,
        confidence=params.confidence,
        threshold=params.threshold,
        decision=params.decision,
        cache_dir=cache_dir(params),
    )
    decisions = {}
    for m in METRICS:
        mc = comparison.metrics[m]
        both = zip(scores[candidate].vector(m), scores[pinned].vector(m), strict=True)
        decisions[m] = decide(
            scores[pinned].n,
            mc.candidate_only,
            mc.baseline_only,
            sum(x and y for x, y in both),
            threshold=-params.gate_margin,
            confidence=params.confidence,
            rule=params.decision,
            seeded_lo=mc.lo,
            seeded_hi=mc.hi,
            resamples=params.resamples,
            cache_dir=cache_dir(params),
            mirror=False,
            power=False,
            by_score=True,
        )
    # "not holds" rather than a comparison, so that a NaN bound fails the gate.
    failed = tuple(m for m in METRICS if not decisions[m].shown.holds)
    return GateResult(
        suite.name, pinned, candidate, params.gate_margin, comparison, failed, sources, decisions
    )

"""The knowledge task: seal a suite, report its status, score arms, gate a candidate.

These functions take typed values and return results; they never print, prompt or exit,
so the CLI and Python callers (and the DVC pipeline through the CLI) share them.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from flightdeck.params import Params
from flightdeck.project import (
    SEALED_FILES,
    SuitePaths,
    changed_files,
    next_version,
    open_suite,
    verify_sealed,
)
from flightdeck.scoring.rules import ArmScore, Comparison, check_labels, compare_arms, score_arm
from flightdeck.suite.records import (
    CANARY_PREFIX,
    Answer,
    ArmMeta,
    Key,
    Manifest,
    Question,
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
    from flightdeck.scoring.tables import SuiteTables


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


def load_suite_files(suite: SuitePaths, *, sealed: bool | None) -> tuple[list[Question], list[Key]]:
    """Questions and keys, with the cross-file checks: same ids, sources within ``as_of``."""
    questions = read_questions(suite.questions)
    keys = read_keys(suite.keys, sealed=sealed)
    by_id = {q.id: q for q in questions}
    key_ids = {k.id for k in keys}
    for key in keys:
        question = by_id.get(key.id)
        if question is None:
            raise InputError(
                suite.keys,
                key.line,
                f"id {key.id!r} has no question in questions.jsonl; "
                "the two files need the same ids",
            )
        for source in key.valid_sources:
            parsed = parse_source_uri(source.uri)
            if parsed is None:  # opaque: matched as a whole string
                continue
            if parsed.repo not in question.as_of:
                raise InputError(
                    suite.keys,
                    key.line,
                    f"valid source {source.uri!r} names repository {parsed.repo!r}, which is "
                    f"not in the question's as_of ({', '.join(question.as_of)}); fix the uri",
                )
    for question in questions:
        if question.id not in key_ids:
            raise InputError(
                suite.questions,
                question.line,
                f"id {question.id!r} has no key in keys.jsonl; the two files need the same ids",
            )
    return questions, keys


def seal(suite_dir: Path, *, repos: RepoSet, holdouts: Path | None = None) -> SealResult:
    """Validate a suite, give every key a fresh canary, write manifest.json, register canaries.

    manifest.json is written after keys.jsonl: a crash before it leaves a suite that simply
    seals again (with new canaries, none of which was registered yet). The canaries are
    registered last; a sealed, intact suite whose canaries are not yet in ``holdouts`` (a crash
    just before, or a suite sealed without ``--holdouts``) gets them registered by running
    seal again with ``--holdouts``. Anything else already sealed is refused.
    """
    suite = open_suite(suite_dir)
    if suite.manifest.exists():
        return _register_sealed(suite, holdouts)
    questions, keys = load_suite_files(suite, sealed=None)
    checked, unchecked = _check_sources(suite, questions, keys, repos)
    # Fresh canaries always: a canary copied from an earlier version may have leaked.
    sealed_keys = [
        Key(k.id, k.answer_key, k.required_facts, k.valid_sources, new_canary()) for k in keys
    ]
    write_jsonl(suite.keys, [k.to_json() for k in sealed_keys])
    manifest = Manifest(
        suite=suite.name,
        sealed_at=utc_now(),
        files={name: sha256_file(suite.root / name) for name in SEALED_FILES},
        flightdeck_version=__version__,
    )
    write_json(suite.manifest, manifest.to_json())
    if holdouts is not None:
        _register(holdouts, suite, manifest, sealed_keys)
    return SealResult(suite.name, manifest, len(questions), checked, tuple(sorted(unchecked)))


def _register(holdouts: Path, suite: SuitePaths, manifest: Manifest, keys: Sequence[Key]) -> None:
    from flightdeck.holdouts.registry import register_suite
    from flightdeck.jsonl import canonical_json

    register_suite(
        holdouts,
        suite=suite.name,
        manifest_sha256=sha256_bytes(canonical_json(manifest.to_json())),
        canaries={k.id: k.canary for k in keys if k.canary},
    )


def _register_sealed(suite: SuitePaths, holdouts: Path | None) -> SealResult:
    """Register an intact sealed suite's canaries, or refuse: it is never sealed again."""
    from flightdeck.holdouts.registry import suite_state

    manifest = verify_sealed(suite)  # refuses a changed file or a copied folder
    if holdouts is not None and suite_state(holdouts, suite.name) in (
        "no-manifest",
        "unregistered",
    ):
        keys = read_keys(suite.keys, sealed=True)
        _register(holdouts, suite, manifest, keys)
        questions = len(read_questions(suite.questions))
        return SealResult(suite.name, manifest, questions, 0, (), registered_only=True)
    raise InputError(
        suite.manifest,
        None,
        "suite is already sealed; a changed question is a new suite version: copy "
        f"questions.jsonl and keys.jsonl (not manifest.json) to {next_version(suite.name)} "
        "and seal that, never an edit",
    )


def _check_sources(
    suite: SuitePaths, questions: Sequence[Question], keys: Sequence[Key], repos: RepoSet
) -> tuple[int, set[str]]:
    """Each repo source exists at ``as_of`` with the recorded sha256, where the repo is at hand."""
    by_id = {q.id: q for q in questions}
    needed = {repo for q in questions for repo in q.as_of}
    # A repository params.yaml or --repo names must be there; only unnamed ones are skipped.
    unchecked = {name for name in needed if name not in repos.locations}
    for q in questions:
        for name, commit in q.as_of.items():
            if name not in unchecked and not repos.get(name).has_commit(commit):
                raise InputError(
                    suite.questions,
                    q.line,
                    f"commit {commit} is not in repository {name!r} "
                    f"({repos.locations[name]}); fix as_of or fetch the commit",
                )
    checked = 0
    for name in sorted(needed - unchecked):
        from flightdeck.suite.repos import sha256_at

        wanted = []
        for key in keys:
            for source in key.valid_sources:
                parsed = parse_source_uri(source.uri)
                if parsed is not None and parsed.repo == name:
                    wanted.append((key, source, by_id[key.id].as_of[name], parsed.path))
        hashes = sha256_at(repos.get(name), [(commit, path) for _, _, commit, path in wanted])
        for key, source, commit, path in wanted:
            actual = hashes[(commit, path)]
            if actual is None:
                raise InputError(
                    suite.keys,
                    key.line,
                    f"valid source {source.uri!r} does not exist at as_of {commit[:12]} of "
                    f"{name!r}; fix the path or the commit",
                )
            if actual != source.sha256:
                raise InputError(
                    suite.keys,
                    key.line,
                    f"valid source {source.uri!r} has sha256 {actual} at as_of {commit[:12]}, "
                    f"not {source.sha256}; record the hash of the file at as_of",
                )
            checked += 1
    return checked, unchecked


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

    @property
    def ready(self) -> bool:
        return (
            self.sealed
            and not self.changed
            and self.void is None
            and bool(self.arms)
            and all(a.meta and a.answers and not a.short_of_raters for a in self.arms)
        )


def status(suite_dir: Path, *, params: Params) -> SuiteStatus:
    """What a person checks before scoring: seal intact, not void, each arm's files."""
    suite = open_suite(suite_dir)
    questions = read_questions(suite.questions)
    ids = [q.id for q in questions]
    sealed = suite.manifest.is_file()
    manifest = read_manifest(suite.manifest) if sealed else None
    changed = tuple(changed_files(suite, manifest)) if manifest else ()
    ledger = _read_ledger(suite)
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
    return SuiteStatus(
        suite=suite.name,
        questions=len(questions),
        sealed=sealed,
        changed=changed,
        sealed_at=manifest.sealed_at if manifest else None,
        void=_void_evidence(params.holdouts, suite.name),
        arms=tuple(arms),
        holdouts=_holdouts_state(params.holdouts, suite.name),
    )


def _holdouts_state(holdouts: Path, suite: str) -> str:
    from flightdeck.holdouts.registry import suite_state

    return str(suite_state(holdouts, suite))


def _void_evidence(holdouts: Path, suite: str) -> dict[str, Any] | None:
    from flightdeck.holdouts.registry import void_evidence

    evidence: dict[str, Any] | None = void_evidence(holdouts, suite)
    return evidence


# --- score ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreResult:
    suite: str
    n: int
    arms: dict[str, ArmScore]
    comparisons: tuple[Comparison, ...]
    params: Params
    sealed_at: str = ""
    holdouts: str = "sealed"  # see SuiteStatus.holdouts


def _read_ledger(suite: SuitePaths) -> dict[str, tuple[int, str, str]]:
    """arm -> (line, answers sha256, scored_at) of the first time each arm was scored."""
    first: dict[str, tuple[int, str, str]] = {}
    if not suite.ledger.is_file():
        return first
    for line, record in read_jsonl(suite.ledger):
        arm, answers = record.get("arm"), record.get("answers_sha256")
        if not isinstance(arm, str) or not isinstance(answers, str):
            raise InputError(suite.ledger, line, "ledger record needs arm and answers_sha256")
        first.setdefault(arm, (line, answers, str(record.get("scored_at", "?"))))
    return first


ARM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*\Z")


def check_arm_name(arm: str) -> None:
    """An arm name becomes a file name: letters, digits and ._@+- only, no leading dot."""
    if not ARM_NAME.match(arm):
        raise InputError(
            "--arm",
            None,
            f"arm name {arm!r} must be letters, digits and . _ @ + - (it names files)",
        )


def load_arm(
    suite: SuitePaths,
    arm: str,
    questions: Sequence[Question],
    keys: dict[str, Key],
    params: Params,
    tables: SuiteTables | None = None,
) -> ArmScore:
    """Read and check one arm's answers, labels and meta, then score it."""
    ids = [q.id for q in questions]
    check_arm_name(arm)
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
    suite_dir: Path, arms: Sequence[str], params: Params
) -> tuple[SuitePaths, list[Question], dict[str, ArmScore], Manifest]:
    suite = open_suite(suite_dir)
    manifest = verify_sealed(suite)
    evidence = _void_evidence(params.holdouts, suite.name)
    if evidence is not None:
        raise InputError(
            params.holdouts / "manifest.json",
            None,
            f"suite {suite.name!r} is void: a canary leaked ({describe_void(evidence)}); its keys "
            "are spent, so seal a new suite version",
        )
    questions, keys = load_suite_files(suite, sealed=True)
    keys_by_id = {k.id: k for k in keys}
    from flightdeck.scoring.tables import suite_tables

    tables = suite_tables(questions, keys_by_id)  # built once, shared by every arm
    scores = {arm: load_arm(suite, arm, questions, keys_by_id, params, tables) for arm in arms}
    return suite, questions, scores, manifest


def describe_void(evidence: dict[str, Any]) -> str:
    """The holdouts manifest's evidence in words: which key leaked, where, how often."""
    where = f"{evidence.get('file', '?')}:{evidence.get('line', '?')}"
    count = evidence.get("count", 1)
    more = f", {count} hits in all" if isinstance(count, int) and count > 1 else ""
    return f"the canary of question {evidence.get('question_id', '?')} in {where}{more}"


def score(
    suite_dir: Path,
    arms: Sequence[str],
    *,
    params: Params,
    baseline: str | None = None,
    candidate: str | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> ScoreResult:
    """Score each arm once (ledger-checked) and compare candidate with baseline if asked."""
    if not arms:
        raise InputError("--arm", None, "name at least one arm to score")
    if len(set(arms)) != len(arms):
        raise InputError("--arm", None, "an arm is named twice; name each arm once")
    if (baseline is None) != (candidate is None):
        raise InputError("--baseline", None, "give --baseline and --candidate together")
    if baseline is not None and baseline == candidate:
        raise InputError("--candidate", None, "the candidate is the baseline; name another arm")
    for name in (baseline, candidate):
        if name is not None and name not in arms:
            raise InputError(
                "--arm", None, f"{name!r} is compared but not scored; add --arm {name}"
            )
    from flightdeck.perf import gc_paused

    with gc_paused():
        suite, questions, scores, manifest = _prepare(suite_dir, arms, params)
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
            ),
        )
    return ScoreResult(
        suite.name,
        len(questions),
        scores,
        comparisons,
        params,
        manifest.sealed_at,
        _holdouts_state(params.holdouts, suite.name),
    )


def _check_ledger(suite: SuitePaths, scores: dict[str, ArmScore]) -> None:
    """Refuse an arm whose answers changed since it was first scored (labels may change)."""
    ledger = _read_ledger(suite)
    for arm, result in scores.items():
        if arm in ledger and ledger[arm][1] != result.answers_sha256:
            line, _, when = ledger[arm]
            raise InputError(
                suite.ledger,
                line,
                f"arm {arm!r} was scored on {when} with other answers; each arm is scored "
                "once, so score the new answers under a new arm name",
            )


def record_scores(suite_dir: Path, result: ScoreResult) -> list[str]:
    """Append each arm's (answers, labels) hashes to scores.jsonl unless already recorded."""
    suite = SuitePaths(suite_dir)
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


@dataclass(frozen=True)
class GateResult:
    suite: str
    pinned: str
    candidate: str
    margin: float  # points
    comparison: Comparison
    failed: tuple[str, ...]  # metrics whose lower bound is below -margin

    @property
    def passed(self) -> bool:
        return not self.failed


def gate(suite_dir: Path, *, pinned: str, candidate: str, params: Params) -> GateResult:
    """Pass when, on each metric, the lower bound of candidate - pinned is >= -gate_margin."""
    from flightdeck.scoring.rules import METRICS, TOLERANCE

    if pinned == candidate:
        raise InputError("--candidate", None, "the candidate is the pinned arm; name another arm")
    suite, _, scores, _ = _prepare(suite_dir, [pinned, candidate], params)
    _check_ledger(suite, scores)
    comparison = compare_arms(
        scores[pinned],
        scores[candidate],
        seed=params.seed,
        resamples=params.resamples,
        confidence=params.confidence,
        threshold=params.threshold,
    )
    bar = -params.gate_margin / 100
    # "not >=" rather than "<", so that a NaN bound fails the gate instead of passing it.
    failed = tuple(m for m in METRICS if not comparison.metrics[m].lo >= bar - TOLERANCE)
    return GateResult(suite.name, pinned, candidate, params.gate_margin, comparison, failed)

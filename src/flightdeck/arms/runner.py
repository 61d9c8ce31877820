"""Run an arm as trials: one harness process per question, durable results, resumable.

:func:`run_experiment` is what ``flightdeck experiment run`` calls. For each question it has
no answer for yet, it gives the harness a read-only workspace (:mod:`flightdeck.arms.workspace`)
and the question (never the key) in a bubblewrap sandbox (:mod:`flightdeck.arms.sandbox`),
and collects the result (:mod:`flightdeck.arms.protocol`, :mod:`flightdeck.arms.trial`).
The arm's meta comes from :mod:`flightdeck.arms.arm_meta`; the answers and runs files it
appends to, record by record, from :mod:`flightdeck.arms.run_files`.

Guarantees:

- each finished trial is appended to ``suites/<suite>/answers/<arm>.jsonl`` with a flush and
  an fsync before the next is recorded, so killing the runner (even with SIGKILL) loses no
  finished trial; a rerun drops a torn last line and runs only the questions still missing;
- a trial runs in its own session (and, sandboxed, its own pid namespace), so ``timeout``
  kills the harness and every process it started; leftovers of a harness that exited are
  killed too, and a killed runner takes its sandboxes with it (``--die-with-parent``);
- a failed trial (timeout, non-zero exit, output that is not the result JSON, a citation
  outside the question's ``as_of``) is recorded with its reason in ``runs/<suite>/<arm>.jsonl``
  and never stops the others;
- every trial leaves ``traces/<suite>/<arm>/<id>.log``: stdout, stderr, the result file and
  the harness's ``FLIGHTDECK_TRACE`` log, each at most the output cap; the runner scans it for
  registered canaries as it lands (:mod:`flightdeck.arms.leak_check`): a hit fails the trial
  and voids the suite;
- a trial over a cap (:mod:`flightdeck.arms.limits`), with output that is no result (any
  bytes), or whose trace or answer cannot be written (a full disk) fails alone, with a
  one-line reason; the others run, and a rerun retries only it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import os
import secrets
import signal
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.arms import sandbox
from flightdeck.arms.arm_meta import (
    check_meta,
    default_by,
    default_model,
    harness_model,
    harness_path,
    parse_command,
    provenance_conflict,
    snapshot,
    with_provenance,
)
from flightdeck.arms.batch_trial import run_batches
from flightdeck.arms.harness_needs import harness_needs, refuse_without_inspect, widened
from flightdeck.arms.leak_check import LeakCheck
from flightdeck.arms.limits import Limits
from flightdeck.arms.run_files import (
    Appender,
    RunLock,
    answers_for_scored_arm,
    previous_meta_date,
    record_outcome,
    repair_torn_line,
    settle_rerun,
    sort_answers,
)
from flightdeck.arms.trial import TrialControl, TrialOutcome, TrialSpec, run_trial
from flightdeck.arms.workspace import DEFAULT_CAP_MB, Workspace, WorkspaceCache
from flightdeck.arms.workspace_plan import commit_order
from flightdeck.errors import InputError
from flightdeck.files.clock import utc_now
from flightdeck.files.jsonl import write_json
from flightdeck.params.arm_names import check_arm_name
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.suite.records import Question, read_answers, read_questions
from flightdeck.suite.repos import RepoSet
from flightdeck.version import __version__


@dataclass(frozen=True)
class RunConfig:
    """Everything one ``experiment run`` needs; paths are as the user gave them."""

    suite_dir: Path
    arm: str
    command: str
    root: Path = Path(".")  # project root: its ProjectPaths (traces, runs, cache) are here
    jobs: int = 1
    timeout: float | None = None
    model: str | None = None
    by: str | None = None  # who ran the arm, for the meta; None: git's user.name
    sandbox: str = "bwrap"  # "bwrap", or "none" to run harnesses unconfined
    network: bool | None = None  # reach the network; None: as the harness's --model needs
    network_allow: tuple[str, ...] = ()  # HOST:PORT targets alone (through the relay)
    pass_env: tuple[str, ...] = ()  # environment variables the harness gets
    bind: tuple[Path, ...] = ()  # host paths the harness may read (--bind), read-only
    limits: Limits = field(default_factory=Limits)  # per-trial caps
    holdouts: Path | None = None  # masked from the harness; None: <root>/holdouts
    workspace_cache_mb: int = DEFAULT_CAP_MB
    scratch: bool = False  # (#21) write in the project's scratch folder, apart from the pipeline


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """What a run did; ``failed`` non-empty is the negative verdict (exit 1)."""

    suite: str
    arm: str
    total: int  # questions in the suite
    already_answered: int  # before this run
    outcomes: tuple[TrialOutcome, ...]
    answers_path: Path
    meta_path: Path
    runs_path: Path
    traces_dir: Path
    repaired: str | None  # what was repaired in the answers file, if anything
    sandbox: dict[str, Any] = field(default_factory=dict)  # as the meta records it
    omissions: dict[str, int] = field(default_factory=dict)  # files left out, by reason
    workspace_peak_bytes: int = 0

    @property
    def failed(self) -> list[TrialOutcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def answered(self) -> int:
        return self.already_answered + sum(o.ok for o in self.outcomes)


def run_experiment(
    config: RunConfig,
    *,
    repos: RepoSet,
    on_start: Callable[[int, int], None] | None = None,
    on_trial: Callable[[TrialOutcome], None] | None = None,
) -> RunResult:
    """Run every question of the suite that has no answer yet; return what happened.

    ``repos`` are the project's (``Project.repos``, which ``Suite.run`` passes).
    ``on_start(pending, total)`` is called once the work is known, ``on_trial(outcome)`` as
    each trial ends (from the calling thread). Bad input raises :class:`InputError` before
    any trial starts.
    """
    check_arm_name(config.arm)
    if config.jobs < 1:
        raise InputError("--jobs", None, f"jobs must be at least 1, got {config.jobs}")
    if config.timeout is not None and config.timeout <= 0:
        raise InputError("--timeout", None, f"timeout must be positive, got {config.timeout:g}")
    if config.by is not None and not config.by.strip():
        raise InputError("--by", None, "is empty; say who ran the arm, or leave --by out")
    if config.workspace_cache_mb < 1:
        raise InputError(
            "--workspace-cache-mb", None, f"must be at least 1, got {config.workspace_cache_mb}"
        )
    named = harness_model(config.command)
    if config.model is not None and named is not None and named != config.model:
        raise InputError(
            "--model",
            None,
            f"the harness runs model {named!r}, not {config.model!r}; drop --model or make "
            "the two agree",
        )
    path = harness_path()
    argv = parse_command(config.command, path)
    paths = ProjectPaths(config.root, config.holdouts)
    suite = SuiteFolder(config.suite_dir, paths).opened(keys=False)
    suite = suite.with_scratch(config.arm) if config.scratch else suite  # (#21)
    suite.require_intact()
    # Before the policy and any trial: nothing of the cache is ever readable, first run included.
    paths.state.mkdir(parents=True, exist_ok=True)
    needs = harness_needs(argv)  # (#21) a built-in model agent's variables and network
    refuse_without_inspect(needs, argv, path)
    policy = sandbox_policy(widened(config, needs), argv, path, repos=repos)
    leaks = LeakCheck([paths.holdouts, paths.default_holdouts])
    questions = read_questions(suite.questions)
    answers_path = suite.answers(config.arm)
    meta_path = suite.meta(config.arm)
    runs_path = suite.runs(config.arm)
    traces_dir = suite.traces(config.arm)

    scored_path = answers_path
    scored = config.arm in suite.read_ledger()
    answers_path = answers_for_scored_arm(suite, config.arm, scored=scored)
    lock = RunLock(runs_path)
    try:
        repaired = repair_torn_line(answers_path)
        done = set()
        if answers_path.is_file():
            done = {a.id for a in read_answers(answers_path, (q.id for q in questions))}
        pending = [q for q in questions if q.id not in done]
        if scored and pending and answers_path == scored_path:
            suite.require_unchanged_if_scored(config.arm, None)  # trials to run: refused
        date = utc_now()
        meta: dict[str, Any] = {
            "runner": "harness",
            "by": config.by or default_by(config.root),
            "via": "flightdeck experiment run",
            "date": date,
            "model": config.model or default_model(config.command),
            "command": config.command,
            "knowledge_snapshot": snapshot(questions),
            "flightdeck_version": __version__,
            "sandbox": policy.meta(),
            "canary_check": leaks.describe(),
        } | ({} if needs is None else {"harness_needs": needs.meta(policy.opens, os.environ)})
        meta["date"] = (answers_path != scored_path and previous_meta_date(meta_path)) or date
        meta = check_meta(meta_path, meta, bool(done))
        repos.require_commits(
            (repo, commit, suite.questions, q.line)
            for q in pending
            for repo, commit in sorted(q.as_of.items())
        )
        if pending or not meta_path.is_file():  # a finished arm's meta stays as it was
            write_json(meta_path, meta)
        if on_start is not None:
            on_start(len(pending), len(questions))
        run_id = f"{date}-{os.getpid()}-{secrets.token_hex(3)}"  # two runs in one second differ
        spec = TrialSpec(
            argv, config.command, config.timeout, traces_dir, config.root, path, policy
        )
        ran = _run_all(
            pending,
            spec,
            repos,
            config,
            run_id,
            (answers_path, runs_path, meta_path),
            (meta, leaks),
            on_trial,
            needs is not None and needs.batch,
        )
        outcomes, omissions, peak = ran
        if any(o.ok for o in outcomes):
            sort_answers(answers_path, [q.id for q in questions])
        if answers_path != scored_path:
            settle_rerun(suite, config.arm, answers_path, scored_path)
    finally:
        lock.release()
    return RunResult(
        suite=suite.name,
        arm=config.arm,
        total=len(questions),
        already_answered=len(done),
        outcomes=tuple(outcomes),
        # a rerun is in place by now (settle_rerun): name the real file (#21)
        answers_path=scored_path,
        meta_path=meta_path,
        runs_path=runs_path,
        traces_dir=traces_dir,
        repaired=repaired,
        sandbox=meta["sandbox"],
        omissions=omissions,
        workspace_peak_bytes=peak,
    )


def policy_request(config: RunConfig) -> sandbox.PolicyRequest:
    """What the arm asks of its sandbox (the one place a built-in arm may widen it)."""
    fields = (config.pass_env, config.bind, config.limits, config.network_allow)
    return sandbox.PolicyRequest(config.sandbox, bool(config.network), *fields)


def sandbox_policy(
    config: RunConfig, argv: list[str], path: str, *, repos: RepoSet
) -> sandbox.SandboxPolicy:
    """The arm's sandbox, from the run's settings (bwrap tried once before any trial); the
    repositories it guards are ``repos``, the very set the trials read."""
    return sandbox.policy_for(
        policy_request(config),
        root=config.root,
        suite_dir=config.suite_dir,
        repos=list(repos.locations.values()),
        holdouts=ProjectPaths(config.root, config.holdouts).holdouts,
        argv=argv,
        path=path,
        cwd=Path.cwd().resolve(),
    )


def _run_all(
    pending: list[Question],
    spec: TrialSpec,
    repos: RepoSet,
    config: RunConfig,
    run_id: str,
    paths: tuple[Path, Path, Path],
    state: tuple[dict[str, Any], LeakCheck],
    on_trial: Callable[[TrialOutcome], None] | None,
    batched: bool = False,
) -> tuple[list[TrialOutcome], dict[str, int], int]:
    """The trials, and what the workspaces left out (by reason) and their peak disk."""
    if not pending:
        return [], {}, 0
    answers_path, runs_path, meta_path = paths
    meta, leaks = state
    checked = spec.policy.mode == "none"  # the sandbox mounts workspaces read-only
    cache = WorkspaceCache(
        repos,
        ProjectPaths(config.root).workspaces,
        cap_bytes=config.workspace_cache_mb << 20,
        checked=checked,
    )
    answers = Appender(answers_path)
    ledger = Appender(runs_path)
    record_lock = threading.Lock()
    control = TrialControl()
    ordered = commit_order(repos, pending)
    cache.plan(ordered)

    def one(question: Question) -> TrialOutcome | None:
        if control.stop.is_set():
            return None
        held: list[Workspace] = []

        def workspace_for(q: Question) -> Workspace:
            held.append(cache.acquire(q))
            return held[0]

        try:
            outcome = run_trial(
                question,
                workspace_for,
                cache.root,
                spec,
                control,
                cache.verify if checked else None,
            )
        finally:
            if held:
                cache.release(held[0])
        return record(outcome)

    def record(outcome: TrialOutcome) -> TrialOutcome:
        leaked = leaks.check(spec.root / outcome.trace, outcome.trace)
        if leaked is not None:
            outcome = dataclasses.replace(outcome, ok=False, reason=leaked, record=None)
        with record_lock:  # answer first: the ledger entry is a log, the answer is the result
            if outcome.ok and outcome.provenance is not None:
                outcome = _record_provenance(outcome, meta, meta_path)
            return record_outcome(outcome, answers, ledger, run_id)

    outcomes: list[TrialOutcome] = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=config.jobs)
    previous = _interrupt_on_sigterm()
    try:
        if batched:  # one process for many questions, each still a trial (arms/batch_trial.py)
            outcomes = run_batches(ordered, spec=spec, cache=cache, control=control,
                                   jobs=config.jobs, record=record, on_trial=on_trial,
                                   verify=cache.verify if checked else None)  # fmt: skip
        futures = [pool.submit(one, q) for q in ordered if not batched]
        for future in concurrent.futures.as_completed(futures):
            outcome = future.result()
            if outcome is not None:
                outcomes.append(outcome)
                if on_trial is not None:
                    on_trial(outcome)
    except BaseException:
        control.kill_all()  # trials not started are skipped, running ones are killed
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        answers.close()
        ledger.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        with contextlib.suppress(OSError):
            cache.close()
    order = {q.id: i for i, q in enumerate(pending)}
    omissions = dict(sorted(Counter(cache.omissions.values()).items()))
    return sorted(outcomes, key=lambda o: order[o.id]), omissions, cache.peak


def _record_provenance(
    outcome: TrialOutcome, meta: dict[str, Any], meta_path: Path
) -> TrialOutcome:
    """Write the first reported provenance into the meta; fail a trial that disagrees."""
    assert outcome.provenance is not None
    conflict = provenance_conflict(meta, outcome.provenance)
    if conflict is not None:
        return dataclasses.replace(outcome, ok=False, reason=conflict, record=None)
    if meta.get("provenance") is None:
        meta.update(with_provenance(meta, outcome.provenance))
        write_json(meta_path, meta)
    return outcome


def _interrupt_on_sigterm() -> Any:
    """Treat SIGTERM like Ctrl-C while trials run, so their process groups get killed."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)

"""Run an arm as trials: one harness process per question, durable results, resumable.

:func:`run_experiment` is what ``flightdeck experiment run`` calls. For each question it has
no answer for yet, it gives the harness a read-only workspace (:mod:`flightdeck.arms.workspace`)
and the question (never the key) in a bubblewrap sandbox (:mod:`flightdeck.arms.sandbox`),
and collects the result (:mod:`flightdeck.arms.protocol`, :mod:`flightdeck.arms.trial`).

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
- every trial leaves ``traces/<suite>/<arm>/<id>.log``: stdout, stderr and the harness's
  ``FLIGHTDECK_TRACE`` log, for the canary scan.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import fcntl
import json
import os
import shlex
import shutil
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from flightdeck import __version__
from flightdeck.arms import sandbox
from flightdeck.arms.trial import TrialControl, TrialOutcome, TrialSpec, run_trial
from flightdeck.arms.workspace import DEFAULT_CAP_MB, Workspace, WorkspaceCache, commit_order
from flightdeck.clock import utc_now
from flightdeck.errors import InputError
from flightdeck.jsonl import atomic_write, dumps_line, write_json, writing_to
from flightdeck.project import (
    CACHE_FOLDER,
    WORKSPACES_FOLDER,
    Suite,
    check_arm_name,
    open_suite,
)
from flightdeck.suite.records import Question, read_answers, read_meta, read_questions
from flightdeck.suite.repos import RepoSet


@dataclass(frozen=True)
class RunConfig:
    """Everything one ``experiment run`` needs; paths are as the user gave them."""

    suite_dir: Path
    arm: str
    command: str
    root: Path = Path(".")  # project root: traces/, runs/ and .flightdeck/ live here
    repos: Mapping[str, Path] = field(default_factory=dict)  # name -> clone or bundle
    jobs: int = 1
    timeout: float | None = None
    model: str | None = None
    by: str | None = None  # who ran the arm, for the meta; None: git's user.name
    sandbox: str = "bwrap"  # "bwrap", or "none" to run harnesses unconfined
    network: bool = False  # let the harness reach the network (an LLM arm's API)
    pass_env: tuple[str, ...] = ()  # environment variables the harness gets
    holdouts: Path | None = None  # masked from the harness; None: <root>/holdouts
    workspace_cache_mb: int = DEFAULT_CAP_MB


@dataclass(frozen=True)
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


def harness_path() -> str:
    """PATH for harnesses: flightdeck's virtualenv first, as if it were activated.

    So ``python -m flightdeck ...`` and ``flightdeck ...`` in a harness command mean this
    installation even when the shell that started flightdeck did not activate it.
    """
    path = os.environ.get("PATH", os.defpath)
    if sys.prefix == sys.base_prefix:
        return path
    bin_dir = os.path.dirname(sys.executable)
    return os.pathsep.join([bin_dir, *(p for p in path.split(os.pathsep) if p != bin_dir)])


def parse_command(command: str, path: str | None = None) -> list[str]:
    """Split the harness command as a POSIX shell would (no expansion); check it exists."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(
            "--harness", None, f"cannot split {command!r}: {exc}; fix the quoting"
        ) from None
    if not argv:
        raise InputError("--harness", None, "the harness command is empty; give a command")
    if shutil.which(argv[0], path=path) is None:
        raise InputError(
            "--harness",
            None,
            f"{argv[0]!r} is not an executable file or a command on PATH; check the command",
        )
    return argv


def harness_model(command: str) -> str | None:
    """The ``--model`` of a built-in model harness's command (``agent attached``, ``agent llm``)."""
    if "agent attached" not in command and "agent llm" not in command:
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    for i, arg in enumerate(argv):
        if arg == "--model" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--model="):
            return arg.partition("=")[2]
    return None


def default_model(command: str) -> str:
    """``--model`` when none is given: a built-in agent names its model, others are "none"."""
    if "agent repo-search" in command:
        return "none (flightdeck repo-search, BM25)"
    return harness_model(command) or "none"


def provenance_conflict(meta: dict[str, Any], provenance: dict[str, Any]) -> str | None:
    """Why a trial's reported provenance cannot join the arm's meta; None when it can."""
    earlier = meta.get("provenance")
    if earlier is not None and earlier != provenance:
        changed = sorted(
            k for k in set(earlier) | set(provenance) if earlier.get(k) != provenance.get(k)
        )
        return (
            f"the harness reports a different {', '.join(changed)} than the arm's earlier "
            "answers (its attachments or prompt changed?); use a new arm name"
        )
    model = provenance.get("model")
    if model is not None and model != meta.get("model"):
        return (
            f"the harness reports model {model!r} but the arm's meta says {meta.get('model')!r}; "
            "drop --model from experiment run or make the two agree"
        )
    return None


def with_provenance(meta: dict[str, Any], provenance: dict[str, Any]) -> dict[str, Any]:
    """The meta with the harness's provenance; its ``knowledge_snapshot`` replaces ``as_of``'s.

    A retrieval harness's snapshot (``{"retrieval": ...}``, the index it searched, e.g. its
    MCP server's) joins the ``as_of`` commits instead: the agent read both.
    """
    updated = {**meta, "provenance": provenance}
    if "knowledge_snapshot" in provenance:
        snapshot = provenance["knowledge_snapshot"]
        if isinstance(snapshot, dict) and set(snapshot) == {"retrieval"}:
            snapshot = {"as_of": meta.get("knowledge_snapshot"), **snapshot}
        updated["knowledge_snapshot"] = snapshot
    return updated


def _user(root: Path) -> str:
    """Who ran it, when ``--by`` does not say: git's ``user.name`` for the project repository.

    The login name says little (in CI and containers it is ``root``), while ``user.name`` is
    the name a person signs their commits with. The login name is the last resort, for a
    project with no git or no ``user.name``.
    """
    import getpass
    import subprocess

    try:
        found = subprocess.run(
            ["git", "-C", str(root), "config", "--get", "user.name"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git on PATH
        found = None
    if found is not None and found.returncode == 0 and found.stdout.strip():
        return found.stdout.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def repair_torn_line(path: Path) -> str | None:
    """Drop a last line cut short by a killed append; return what was done, if anything."""
    if not path.is_file():
        return None
    with path.open("rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return None
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            complete = isinstance(json.loads(tail), dict)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            complete = False
        if complete:
            handle.write(b"\n")
            message = "added the missing newline at the end"
        else:
            handle.truncate(cut)
            message = f"dropped a torn last line ({len(tail)} bytes) left by an interrupted run"
        handle.flush()
        os.fsync(handle.fileno())
    return message


def snapshot(questions: list[Question]) -> dict[str, list[str]]:
    """The knowledge snapshot of a harness arm: each repository's ``as_of`` commits."""
    commits: dict[str, set[str]] = {}
    for question in questions:
        for repo, commit in question.as_of.items():
            commits.setdefault(repo, set()).add(commit)
    return {repo: sorted(commits[repo]) for repo in sorted(commits)}


def _check_meta(path: Path, meta: dict[str, Any], has_answers: bool) -> dict[str, Any]:
    """Keep the first run's meta on resume; refuse to mix two harnesses in one arm."""
    if not path.is_file() or not has_answers:
        return meta
    old = read_meta(path).fields
    if old.get("runner") != "harness":
        raise InputError(path, None, "this arm was imported from a person; use another arm name")
    for name in ("command", "model"):
        if old.get(name) != meta[name]:
            raise InputError(
                path,
                None,
                f"the arm's answers came from {name} {old.get(name)!r}, not {meta[name]!r}; "
                "rerun with the same one, or use a new arm name",
            )
    was = old.get("sandbox")
    if was is not None and _sandbox_terms(was) != _sandbox_terms(meta["sandbox"]):
        raise InputError(
            path,
            None,
            f"the arm's answers ran with sandbox {_sandbox_terms(was)}, not "
            f"{_sandbox_terms(meta['sandbox'])}; rerun with the same --sandbox, --network and "
            "--pass-env, or use a new arm name",
        )
    snapshot = old.get("knowledge_snapshot") if "provenance" in old else meta["knowledge_snapshot"]
    return {
        **old,
        "knowledge_snapshot": snapshot,
        "last_run": meta["date"],
        "sandbox": was if was is not None else meta["sandbox"],
    }


def _sandbox_terms(value: Any) -> str:
    """The settings that change what a harness can do, as one comparable string."""
    if not isinstance(value, dict):
        return repr(value)
    if value.get("mode") == "none":
        return "none"
    names = ",".join(value.get("pass_env") or []) or "-"
    return f"bwrap (network {'on' if value.get('network') else 'off'}, env {names})"


class _Appender:
    """A JSONL file held open for a run; each record is flushed and fsynced as it lands.

    (``jsonl.append_jsonl`` without reopening the file per record.) A last line left without
    its newline by a killed run gets one first, so it never swallows the next record.
    """

    def __init__(self, path: Path) -> None:
        with writing_to(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] = path.open("ab+")
        size = self._handle.seek(0, os.SEEK_END)
        if size:
            self._handle.seek(size - 1)
            if self._handle.read(1) != b"\n":
                self._handle.write(b"\n")

    def append(self, record: Any) -> None:
        self._handle.write((dumps_line(record) + "\n").encode())
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


class _Lock:
    """An exclusive lock on the runs ledger: one run of an arm at a time."""

    def __init__(self, path: Path) -> None:
        with writing_to(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] = path.open("ab")
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._handle.close()
            raise InputError(
                path, None, "another run of this arm is in progress; wait for it to finish"
            ) from None

    def release(self) -> None:
        self._handle.close()


def run_experiment(
    config: RunConfig,
    *,
    on_start: Callable[[int, int], None] | None = None,
    on_trial: Callable[[TrialOutcome], None] | None = None,
) -> RunResult:
    """Run every question of the suite that has no answer yet; return what happened.

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
    suite = open_suite(config.suite_dir, project_root=config.root, keys=False)
    suite.require_intact()
    policy = sandbox_policy(config, argv, path)
    questions = read_questions(suite.questions)
    answers_path = suite.answers(config.arm)
    meta_path = suite.meta(config.arm)
    runs_path = suite.runs(config.arm)
    traces_dir = suite.traces(config.arm)

    scored_path = answers_path
    scored = config.arm in suite.read_ledger()
    answers_path = _answers_for_scored_arm(config.arm, answers_path, scored=scored)
    lock = _Lock(runs_path)
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
            "by": config.by or _user(config.root),
            "via": "flightdeck experiment run",
            "date": date,
            "model": config.model or default_model(config.command),
            "command": config.command,
            "knowledge_snapshot": snapshot(questions),
            "flightdeck_version": __version__,
            "sandbox": policy.meta(),
        }
        meta = _check_meta(meta_path, meta, bool(done))
        repos = RepoSet(config.repos, config.root / CACHE_FOLDER)
        repos.require_commits(
            (repo, commit, suite.questions, q.line)
            for q in pending
            for repo, commit in sorted(q.as_of.items())
        )
        if pending or not meta_path.is_file():  # a finished arm's meta stays as it was
            write_json(meta_path, meta)
        if on_start is not None:
            on_start(len(pending), len(questions))
        run_id = f"{date}-{os.getpid()}"
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
            meta,
            on_trial,
        )
        outcomes, omissions, peak = ran
        if any(o.ok for o in outcomes):
            _sort_answers(answers_path, [q.id for q in questions])
        if answers_path != scored_path:
            _settle_rerun(suite, config.arm, answers_path, scored_path)
    finally:
        lock.release()
    return RunResult(
        suite.name,
        config.arm,
        len(questions),
        len(done),
        tuple(outcomes),
        answers_path,
        meta_path,
        runs_path,
        traces_dir,
        repaired,
        meta["sandbox"],
        omissions,
        peak,
    )


def sandbox_policy(config: RunConfig, argv: list[str], path: str) -> sandbox.SandboxPolicy:
    """The arm's sandbox, from the run's settings (bwrap tried once before any trial)."""
    return sandbox.policy_for(
        config.sandbox,
        network=config.network,
        pass_env=config.pass_env,
        root=config.root,
        suite_dir=config.suite_dir,
        repos=list(config.repos.values()),
        holdouts=config.holdouts if config.holdouts is not None else config.root / "holdouts",
        argv=argv,
        path=path,
    )


def _answers_for_scored_arm(arm: str, answers_path: Path, *, scored: bool) -> Path:
    """Where this run writes: the answers file, or a rerun file when the arm was scored.

    The ledger forbids changing a scored arm's answers. A scored arm with trials left to run
    is refused (once the pending trials are known); one whose answers file is gone
    (``dvc repro -f`` removes stage outputs) is run again into ``answers/.<arm>.rerun.jsonl``
    and kept only if it gives the scored bytes.
    """
    if not scored or answers_path.is_file():
        return answers_path
    return answers_path.with_name(f".{arm}.rerun.jsonl")


def _settle_rerun(suite: Suite, arm: str, rerun: Path, answers_path: Path) -> None:
    """Keep a scored arm's rerun only when it reproduces the scored answers byte for byte."""
    from flightdeck.jsonl import sha256_file

    scored = suite.read_ledger()[arm]
    if rerun.is_file() and sha256_file(rerun) == scored[1]:
        os.replace(rerun, answers_path)
        return
    raise InputError(
        answers_path,
        None,
        f"arm {arm!r} was scored on {scored[2]}; this run's answers differ (kept in "
        f"{rerun.name}): its answers cannot change, so run them under a new arm name",
    )


def _sort_answers(path: Path, order: list[str]) -> None:
    """Rewrite the answers in the suite's order (atomically), for stable diffs; bytes kept."""
    rank = {qid: i for i, qid in enumerate(order)}
    lines = [line for line in path.read_bytes().splitlines(keepends=True) if line.strip()]
    keyed = sorted(lines, key=lambda line: rank.get(json.loads(line).get("id"), len(rank)))
    if keyed != lines:
        atomic_write(path, b"".join(keyed))


def _run_all(
    pending: list[Question],
    spec: TrialSpec,
    repos: RepoSet,
    config: RunConfig,
    run_id: str,
    paths: tuple[Path, Path, Path],
    meta: dict[str, Any],
    on_trial: Callable[[TrialOutcome], None] | None,
) -> tuple[list[TrialOutcome], dict[str, int], int]:
    """The trials, and what the workspaces left out (by reason) and their peak disk."""
    if not pending:
        return [], {}, 0
    answers_path, runs_path, meta_path = paths
    checked = spec.policy.mode == "none"  # the sandbox mounts workspaces read-only
    cache = WorkspaceCache(
        repos,
        config.root / WORKSPACES_FOLDER,
        cap_bytes=config.workspace_cache_mb << 20,
        checked=checked,
    )
    answers = _Appender(answers_path)
    ledger = _Appender(runs_path)
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
        with record_lock:  # answer first: the ledger entry is a log, the answer is the result
            if outcome.ok and outcome.provenance is not None:
                outcome = _record_provenance(outcome, meta, meta_path)
            if outcome.record is not None:
                answers.append(outcome.record)
            ledger.append({"run": run_id, **outcome.ledger_entry()})
        return outcome

    outcomes: list[TrialOutcome] = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=config.jobs)
    previous = _interrupt_on_sigterm()
    try:
        futures = [pool.submit(one, q) for q in ordered]
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

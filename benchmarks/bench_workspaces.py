"""Workspaces at scale and per-trial overhead of `flightdeck experiment run` (issue 12).

Targets: on a 12,000-file repository, 8 questions at 8 commits that each change 30 files
cost at most 2.5x the wall time and 1.5x the peak workspace disk of 1 question at 1
commit, with a no-op harness; the per-trial overhead after the first stays at most 50 ms
on the demo suite.

The repository is written with ``git fast-import`` (600 folders of 20 files, 0.5-6 KB of
text each, fixed seed), then bundled: the run reads it as a bundle, as the demo does. Each
scenario runs in its own process (``--src`` points it at another flightdeck to compare,
e.g. ``--src /work/main/src``), three times; wall time is the best run of the whole
``run_experiment`` call (workspaces, trials, clean-up). Peak disk is measured in a fourth
run by a thread that sums the blocks of the distinct inodes under
``.flightdeck/workspaces`` every 20 ms (``du``'s rule: a hard link counts once), beside the
cache's own accounting where the code has it. Run from the project root:

    .venv/bin/python -m benchmarks.bench_workspaces            # both parts
    .venv/bin/python -m benchmarks.bench_workspaces --demo     # only the demo overhead
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

RESULT = json.dumps({"answer": "noop", "citations": []})
NOOP = shlex.join(["sh", "-c", f"cat >/dev/null; printf '%s\\n' '{RESULT}'"])
FOLDERS, PER_FOLDER, COMMITS, CHANGED = 600, 20, 8, 30
ROOT = Path(__file__).resolve().parents[1]


def _text(rng: random.Random, size: int) -> bytes:
    words = ["gateway", "queue", "postgres", "adr", "runbook", "model", "owner", "deploy"]
    out, total = [], 0
    while total < size:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + "\n"
        out.append(line)
        total += len(line)
    return "".join(out).encode()


def make_repository(folder: Path) -> list[str]:
    """12,000 files at commit 1, then 7 commits changing 30 files each; the commit ids."""
    rng = random.Random(12)
    subprocess.run(["git", "init", "-q", "--bare", str(folder)], check=True)
    paths = [
        f"src/m{i // 30:02d}/p{i % 30:02d}/f{j:02d}.md"
        for i in range(FOLDERS)
        for j in range(PER_FOLDER)
    ]
    stream = bytearray()
    marks = 0

    def blob(data: bytes) -> int:
        nonlocal marks
        marks += 1
        stream.extend(b"blob\nmark :%d\ndata %d\n" % (marks, len(data)) + data + b"\n")
        return marks

    for number in range(COMMITS):
        changed = paths if number == 0 else rng.sample(paths, CHANGED)
        ids = {p: blob(_text(rng, rng.randint(500, 6000))) for p in changed}
        when = 1_700_000_000 + 60 * number
        message = f"commit {number}".encode()
        stream.extend(
            b"commit refs/heads/main\n"
            + b"committer Bench <bench@example.com> %d +0000\n" % when
            + b"data %d\n" % len(message)
            + message
            + b"\n"
        )
        for path, mark in ids.items():
            stream.extend(b"M 100644 :%d %s\n" % (mark, path.encode()))
        stream.extend(b"\n")
    subprocess.run(
        ["git", f"--git-dir={folder}", "fast-import", "--quiet"], input=bytes(stream), check=True
    )
    log = subprocess.run(
        ["git", f"--git-dir={folder}", "rev-list", "--reverse", "main"],
        capture_output=True,
        text=True,
        check=True,
    )
    return log.stdout.split()


def _blocks(top: Path) -> int:
    seen: set[int] = set()
    total = 0
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if info.st_ino not in seen:
                seen.add(info.st_ino)
                total += info.st_blocks * 512
    return total


def scenario(args: argparse.Namespace) -> None:
    """One run in this process: print {seconds, peak_sampled, peak_accounted} as JSON."""
    from tests.builders import project_repos

    from flightdeck.arms.runner import RunConfig, run_experiment

    root = Path(args.project)
    commits = json.loads(args.commits)
    suite = root / "suites" / "bench-v1"
    suite.mkdir(parents=True)
    with (suite / "questions.jsonl").open("w") as out:
        for i, commit in enumerate(commits):
            record = {"id": f"q{i}", "question": "?", "kind": "how-to"}
            out.write(json.dumps({**record, "as_of": {"big": commit}, "scope": []}) + "\n")
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak[0] = max(peak[0], _blocks(root / ".flightdeck" / "workspaces"))

    sampler = threading.Thread(target=sample, daemon=True)
    if args.sample:
        sampler.start()
    options = {"jobs": args.jobs}
    if args.sandbox:
        options["sandbox"] = args.sandbox
    config = RunConfig(suite, "noop", NOOP, root=root, **options)
    # opens nothing yet: the timed run clones the bundle
    repos = project_repos(root, {"big": Path(args.bundle)})
    started = time.perf_counter()
    result = run_experiment(config, repos=repos)
    seconds = time.perf_counter() - started
    stop.set()
    assert not result.failed, result.failed[:2]
    accounted = getattr(result, "workspace_peak_bytes", None)
    print(json.dumps({"seconds": seconds, "peak_sampled": peak[0], "peak_accounted": accounted}))


def run_scenario(
    src: Path, bundle: Path, commits: list[str], *, sample: bool, jobs: int, sandbox: str | None
) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=ROOT / ".flightdeck") as project:
        argv = [sys.executable, "-m", "benchmarks.bench_workspaces", "--scenario"]
        argv += ["--project", project, "--bundle", str(bundle), "--commits", json.dumps(commits)]
        argv += ["--jobs", str(jobs)] + (["--sample"] if sample else [])
        argv += ["--sandbox", sandbox] if sandbox else []
        env = {**os.environ, "PYTHONPATH": f"{src}:{ROOT}"}
        out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, cwd=ROOT)
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        return json.loads(out.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def bundle_opens(bundle: Path, cache: Path) -> None:
    """Opening the bundle: the first time clones it, later times find the clone by stat."""
    import resource

    from flightdeck.suite.repos import RepoSet

    times = []
    for _ in range(3):
        started = time.perf_counter()
        RepoSet({"big": bundle}, cache).get("big")
        times.append(time.perf_counter() - started)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"bundle open: first {times[0]:.2f} s (clone), then {1000 * times[1]:.1f} and "
        f"{1000 * times[2]:.1f} ms; this process's peak RSS {peak:.0f} MB"
    )


def big_repository(args: argparse.Namespace) -> None:
    (ROOT / ".flightdeck").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ROOT / ".flightdeck") as tmp:
        started = time.perf_counter()
        commits = make_repository(Path(tmp) / "big.git")
        bundle = Path(tmp) / "big.bundle"
        subprocess.run(
            ["git", f"--git-dir={tmp}/big.git", "bundle", "create", "-q", str(bundle), "--all"],
            check=True,
        )
        print(
            f"repository: {FOLDERS * PER_FOLDER} files, {COMMITS} commits x {CHANGED} changed, "
            f"bundle {bundle.stat().st_size / 1e6:.1f} MB, "
            f"made in {time.perf_counter() - started:.1f} s"
        )
        bundle_opens(bundle, Path(tmp) / "cache")
        for src in args.src:
            label = "this tree" if Path(src).resolve() == (ROOT / "src").resolve() else src
            sandbox = None if label != "this tree" else args.sandbox
            cases = {"1 question, 1 commit": commits[:1], "8 questions, 8 commits": commits}
            figures = {}
            for name, chosen in cases.items():
                times = []
                for _ in range(args.repeat):
                    run = run_scenario(
                        Path(src), bundle, chosen, sample=False, jobs=args.jobs, sandbox=sandbox
                    )
                    times.append(run["seconds"])
                disk = run_scenario(
                    Path(src), bundle, chosen, sample=True, jobs=args.jobs, sandbox=sandbox
                )
                figures[name] = (min(times), disk["peak_sampled"], disk["peak_accounted"])
                accounted = disk["peak_accounted"]
                print(
                    f"[{label}] {name}: best {min(times):.2f} s of {args.repeat} "
                    f"({', '.join(f'{t:.2f}' for t in times)}); "
                    f"peak disk {disk['peak_sampled'] / 1e6:.1f} MB sampled"
                    + (f", {accounted / 1e6:.1f} MB accounted" if accounted else "")
                )
            (t1, d1, _), (t8, d8, _) = figures.values()
            print(
                f"[{label}] ratio 8x8 / 1x1: wall {t8 / t1:.2f}x (target <= 2.5), "
                f"peak disk {d8 / d1:.2f}x (target <= 1.5)"
            )


def demo_overhead(args: argparse.Namespace) -> None:
    """The demo suite's 16 questions with a no-op harness, in a copy of the project."""
    from tests.builders import project_repos

    from flightdeck.arms.runner import RunConfig, run_experiment

    stamps: list[float] = []
    with tempfile.TemporaryDirectory(dir=ROOT / ".flightdeck") as tmp:
        root = Path(tmp)
        suite = root / "suites" / "knowledge-demo-v1"
        suite.mkdir(parents=True)
        source = ROOT / "suites" / "knowledge-demo-v1" / "questions.jsonl"
        (suite / "questions.jsonl").write_bytes(source.read_bytes())
        options = {"sandbox": args.sandbox} if args.sandbox else {}
        config = RunConfig(
            suite,
            "noop",
            NOOP,
            root=root,
            jobs=1,
            **options,
        )
        repos = project_repos(root, {"sdlc": ROOT / "demo" / "sdlc.bundle"})
        started = time.perf_counter()
        result = run_experiment(
            config, repos=repos, on_trial=lambda _o: stamps.append(time.perf_counter())
        )
        total = time.perf_counter() - started
    assert not result.failed
    bare = []
    for _ in range(len(stamps)):
        begin = time.perf_counter()
        subprocess.run(
            shlex.split(NOOP), input=b"{}", capture_output=True, start_new_session=True, check=True
        )
        bare.append(time.perf_counter() - begin)
    per_trial = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
    bare_each = sorted(bare)[len(bare) // 2]
    print(
        f"demo, {len(stamps)} no-op trials, --jobs 1, sandbox {args.sandbox or 'bwrap'}: "
        f"{total:.2f} s in all, first trial done after {stamps[0] - started:.2f} s; "
        f"after the first {1000 * per_trial:.1f} ms/trial, bare harness {1000 * bare_each:.1f} ms: "
        f"overhead {1000 * (per_trial - bare_each):.1f} ms/trial (target <= 50)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--bundle", help=argparse.SUPPRESS)
    parser.add_argument("--commits", help=argparse.SUPPRESS)
    parser.add_argument("--sample", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sandbox", default=None, help="bwrap (default) or none")
    parser.add_argument("--src", action="append", default=None, help="flightdeck sources to time")
    parser.add_argument("--demo", action="store_true", help="only the demo overhead")
    args = parser.parse_args()
    if args.scenario:
        scenario(args)
        return
    args.src = args.src or [str(ROOT / "src")]
    (ROOT / ".flightdeck").mkdir(exist_ok=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    if not args.demo:
        big_repository(args)
    demo_overhead(args)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

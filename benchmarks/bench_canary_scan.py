"""Canary-scan throughput beside cat, grep and ripgrep, in one run with the page cache warm.

    python benchmarks/gen_traces.py /tmp/fd-traces
    python benchmarks/bench_canary_scan.py /tmp/fd-traces --jobs 2 [--big-gib 10]

For each corpus (plain, gzip, zst) it first checks that the scan finds exactly the planted
hits of expected.json, then times --repeat rounds, each tool once a round (so a change of the
machine's load hits all of them alike): the whole `flightdeck holdout canary-scan` process
(start-up, manifest, scan, line numbers, void marks, report), the `canary_scan()` function
alone, and the reference tools with the same 10,000 canaries and the same files (`grep -F -c
-f`, `rg -F -c -f -jN`, `rg -z` for compressed files; `cat` and `gzip -dc`/`zstd -dc` as the
floor), page cache warm. Flightdeck's modules are compiled to bytecode first, as a wheel
install does. GB/s is decompressed text per second (1 GB = 1e9 bytes); CPU is user + system
seconds of the whole process tree and peak RSS its largest process (GNU time). The ratios
compare the process with each tool, best against best, median against median, and round by
round. --big-gib also scans one N GiB plain file and one N GiB (of text)
multi-member gzip file, to show that memory follows the chunk size, not the file size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flightdeck.holdouts.leaks import canary_scan

FLIGHTDECK = str(Path(sys.executable).with_name("flightdeck"))
PROCESS = "flightdeck holdout canary-scan (process)"
TIME = "/usr/bin/time"  # GNU time, for the peak RSS
GB = 1e9


def text_bytes(folder: Path) -> int:
    """Decompressed size of every file under ``folder`` (via a scan that finds nothing new)."""
    with tempfile.TemporaryDirectory() as tmp:
        return canary_scan(fresh_holdouts(folder.parent, Path(tmp)), [folder]).bytes_scanned


def fresh_holdouts(corpus: Path, tmp: Path) -> Path:
    """A copy of the corpus' holdouts folder: scans mark suites void, benchmarks start clean."""
    target = tmp / "holdouts"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(corpus / "holdouts", target)
    return target


@dataclass(frozen=True)
class Timing:
    """One run of a tool: wall seconds, CPU seconds (user + system, the whole tree), peak RSS."""

    wall: float
    cpu: float
    rss_mb: float


def run(cmd: list[str], prepare: Callable[[], object] = lambda: None) -> Timing:
    """One command, its output thrown away, timed by GNU time.

    The RSS comes from GNU time (the largest process of the command's tree): a child forked
    from this Python process would count this process's memory until it execs. CPU time is
    the tree's too (GNU time waits for it).
    """
    prepare()
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        process = subprocess.run(
            [TIME, "-f", "%M %U %S", "-o", report.name, *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - start
        # 1: a hit (flightdeck, grep) or no match (rg); GNU time passes the status through
        if process.returncode not in (0, 1):
            raise SystemExit(f"{cmd[0]} failed with {process.returncode}")
        rss, user, system = report.read().split()[-3:]
        return Timing(seconds, float(user) + float(system), int(rss) / 1024)


def interleaved(repeat: int, rows: dict[str, Callable[[], Timing]]) -> dict[str, list[Timing]]:
    """Every tool once per round, ``repeat`` rounds: a change of load hits all of them alike."""
    runs: dict[str, list[Timing]] = {name: [] for name in rows}
    for _ in range(repeat):
        for name, measure in rows.items():
            runs[name].append(measure())
    return runs


def check_planted(corpus: Path, folder: Path, tmp: Path, jobs: int) -> str:
    expected = {
        (e["file"], e["line"], e["canary"])
        for e in json.loads((corpus / "expected.json").read_text())
        if e["file"].startswith(folder.name + "/")
    }
    result = canary_scan(fresh_holdouts(corpus, tmp), [folder], jobs=jobs)
    found = {(str(h.file.relative_to(corpus)), h.line, h.canary) for h in result.hits}
    if found != expected:
        raise SystemExit(f"{folder}: missed {expected - found}, extra {found - expected}")
    return f"{len(found)}/{len(expected)} planted hits found, none extra"


def bench_corpus(
    corpus: Path, kind: str, tmp: Path, jobs: int, repeat: int
) -> tuple[int, dict[str, list[Timing]]]:
    folder = corpus / kind
    files = sorted(str(p) for p in folder.rglob("*") if p.is_file())
    patterns = str(corpus / "patterns.txt")
    size = text_bytes(folder)
    for _ in range(2):  # warm the page cache
        subprocess.run(["cat", *files], stdout=subprocess.DEVNULL, check=True)
    print(
        f"\n{kind}: {len(files)} files, {size / GB:.2f} GB of text; "
        + check_planted(corpus, folder, tmp, jobs)
    )
    holdouts = tmp / "holdouts"
    scan = [FLIGHTDECK, "holdout", "canary-scan", "--holdouts", str(holdouts), "--jobs", str(jobs)]

    def function() -> Timing:
        fresh_holdouts(corpus, tmp)
        start = time.perf_counter()
        canary_scan(holdouts, [folder], jobs=jobs)  # workers' CPU is not counted: NaN
        return Timing(time.perf_counter() - start, float("nan"), float("nan"))

    rows = {
        PROCESS: lambda: run([*scan, str(folder)], lambda: fresh_holdouts(corpus, tmp)),
        "canary_scan() (function)": function,
    }
    rg = shutil.which("rg")
    if kind == "plain":
        rows["cat"] = lambda: run(["cat", *files])
        rows["grep -F -c -f (LC_ALL=C)"] = lambda: run(
            ["env", "LC_ALL=C", "grep", "-F", "-c", "-f", patterns, *files]
        )
        if rg:
            rows[f"rg -F -c -f -j{jobs}"] = lambda: run(
                [rg, "-F", "-c", "-f", patterns, f"-j{jobs}", "--no-ignore", *files]
            )
    else:
        tool = "gzip" if kind == "gzip" else "zstd"
        rows[f"{tool} -dc (decompress only, 1 core)"] = lambda: run([tool, "-dc", *files])
        if rg:
            rows[f"rg -z -F -c -f -j{jobs}"] = lambda: run(
                [rg, "-z", "-F", "-c", "-f", patterns, f"-j{jobs}", "--no-ignore", *files]
            )
    return size, interleaved(repeat, rows)


def bench_big(corpus: Path, tmp: Path, gib: int, jobs: int) -> None:
    """One N GiB plain file and one multi-member gzip file of N GiB of text: time and RSS.

    Each is scanned clean, then with one canary appended at its very end: the worst case for
    line numbers, which take a second pass (for gzip, a second decompression).
    """
    big = tmp / "big"
    big.mkdir(exist_ok=True)
    text = bytearray((corpus / "plain" / "run-all-arms.jsonl").read_bytes())
    for planted in json.loads((corpus / "expected.json").read_text()):  # make it clean
        text = text.replace(planted["canary"].encode(), b"x" * len(planted["canary"]))
    member = gzip.compress(bytes(text), compresslevel=6, mtime=0)
    canary = json.loads((corpus / "expected.json").read_text())[0]["canary"]
    last = f'{{"leaked": "{canary}"}}\n'.encode()
    plain, gz = big / f"one-{gib}GiB.jsonl", big / f"one-{gib}GiB.jsonl.gz"
    with plain.open("wb") as out_plain, gz.open("wb") as out_gz:
        while out_plain.tell() < gib << 30:
            out_plain.write(text)
            out_gz.write(member)
    del text, member
    size = plain.stat().st_size
    holdouts = tmp / "holdouts"
    scan = [FLIGHTDECK, "holdout", "canary-scan", "--holdouts", str(holdouts), "--jobs", str(jobs)]
    print(f"\none file of {size / 2**30:.1f} GiB of text (the whole process, one run each):")
    print("| file | GB/s | seconds | peak RSS |\n|---|---:|---:|---:|")
    for path, tail in ((plain, last), (gz, gzip.compress(last, mtime=0))):
        for label in ("clean", "a hit in the last line"):
            subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
            timing = run([*scan, str(path)], lambda: fresh_holdouts(corpus, tmp))
            speed = (size + len(last) * (label != "clean")) / timing.wall / GB
            print(
                f"| {path.name}, {label} | {speed:.2f} | {timing.wall:.1f} | "
                f"{timing.rss_mb:.0f} MB |"
            )
            with path.open("ab") as out:
                out.write(tail)
        path.unlink()


def report(size: int, runs: dict[str, list[Timing]]) -> None:
    """The table, and the whole process's speed against every other tool in the same rounds."""
    print("| tool | GB/s (best) | GB/s (median) | CPU s (median) | peak RSS |")
    print("|---|---:|---:|---:|---:|")
    for name, timings in runs.items():
        walls = [t.wall for t in timings]
        cpu = statistics.median(t.cpu for t in timings)
        rss = max(t.rss_mb for t in timings)
        shown_cpu = "" if cpu != cpu else f"{cpu:.2f}"  # NaN: measured in-process
        memory = "" if rss != rss else f"{rss:.0f} MB"
        fastest, median = size / min(walls) / GB, size / statistics.median(walls) / GB
        print(f"| {name} | {fastest:.2f} | {median:.2f} | {shown_cpu} | {memory} |")
    ours = [t.wall for t in runs[PROCESS]]
    for name, timings in runs.items():
        if name == PROCESS or "function" in name:
            continue
        theirs = [t.wall for t in timings]
        per_round = [b / a for a, b in zip(ours, theirs, strict=True)]
        print(
            f"flightdeck (process) vs {name}: {min(theirs) / min(ours):.2f}x best, "
            f"{statistics.median(theirs) / statistics.median(ours):.2f}x median, "
            f"per round {min(per_round):.2f}-{max(per_round):.2f}x"
        )


def compile_bytecode() -> None:
    """Compile flightdeck's modules, as installing a wheel does: with PYTHONDONTWRITEBYTECODE
    set (as here) an editable install would compile every module at every start."""
    import compileall

    import flightdeck

    compileall.compile_dir(Path(flightdeck.__file__).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="the folder gen_traces.py wrote")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--big-gib", type=int, default=0, help="also scan one file this big")
    parser.add_argument("--kinds", default="plain,gzip,zst")
    args = parser.parse_args()
    compile_bytecode()
    print(f"cores {len(os.sched_getaffinity(0))}, jobs {args.jobs}, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(dir=args.corpus) as name:
        tmp = Path(name)
        for kind in args.kinds.split(","):
            size, runs = bench_corpus(args.corpus, kind, tmp, args.jobs, args.repeat)
            report(size, runs)
        if args.big_gib:
            bench_big(args.corpus, tmp, args.big_gib, args.jobs)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

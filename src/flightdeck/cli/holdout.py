"""``flightdeck holdout``: scan traces for leaked canaries, and unvoid a suite deliberately."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from flightdeck.cli._options import json_option, params_file_option
from flightdeck.errors import NegativeVerdict

if TYPE_CHECKING:  # the scanner loads when a command runs, keeping --help fast
    from flightdeck.holdouts.leaks import ScanResult
    from flightdeck.project import Project

PROGRESS_MIN_BYTES = 256 << 20  # a shorter scan finishes before a bar would help
SKIPPED_LISTED = 5  # sealed keys files named in the text summary; --json lists them all
F = TypeVar("F", bound=Callable[..., Any])


def _holdouts_option(func: F) -> F:
    func = params_file_option(func)
    return click.option(
        "--holdouts",
        "holdouts_dir",
        default=None,
        type=click.Path(file_okay=False, path_type=Path),
        help="The holdouts folder that holds manifest.json [params: holdouts, holdouts/].",
    )(func)


def _open(holdouts_dir: Path | None, params_file: Path | None) -> Project:
    """The project of --holdouts (params.yaml unread), else of params.yaml ``holdouts``."""
    from flightdeck.project import Project

    if holdouts_dir is not None:
        return Project.of_holdouts(holdouts_dir)
    from flightdeck.cli._options import open_project

    return open_project(params_file, ())


@click.group("holdout")
def holdout() -> None:
    """Keep sealed answer keys out of arms' reach: canaries, leak scans, void suites.

    Trials leave their traces in traces/<suite>/<arm>/; scan them after every run.

    \b
    Example:
        flightdeck holdout canary-scan --holdouts holdouts traces/
        flightdeck holdout unvoid --holdouts holdouts knowledge-demo-v1 --by ana --why "..."
    """


@holdout.command("canary-scan")
@_holdouts_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes to use (default: all cores).",
)
@click.pass_context
def canary_scan_command(
    ctx: click.Context,
    holdouts_dir: Path | None,
    params_file: Path | None,
    paths: tuple[Path, ...],
    as_json: bool,
    jobs: int | None,
) -> None:
    """Scan traces and logs for registered canaries; a hit voids its suite and exits 1.

    PATHS are files or folders (searched recursively): plain text, .gz, .zst, .bz2 or .xz.
    Trials leave their traces in traces/<suite>/<arm>/. Every suite with a hit is marked void
    in DIR/manifest.json, with the first hit and the count as evidence. The registered suites'
    sealed keys.jsonl files (matching their manifest.json) hold the canaries by design: they
    are skipped and listed. Every scan, clean or not, is recorded in DIR/scans.jsonl, so the
    report can say when a suite's traces were last scanned; a clean scan leaves
    DIR/manifest.json (a pipeline dependency) as it was. With --json, hits are also printed
    on stderr. Exit 0 when clean, 1 on any hit, 2 on bad input.

    \b
    Example:
        flightdeck holdout canary-scan --holdouts holdouts traces/
        flightdeck holdout canary-scan --holdouts holdouts traces/knowledge-demo-v1/ \\
            logs/retrieval.jsonl.gz
    """
    project = _open(holdouts_dir, params_file)
    holdouts_dir = project.holdouts
    plan = project.plan_canary_scan(paths)
    if plan.size >= PROGRESS_MIN_BYTES and sys.stderr.isatty():
        with click.progressbar(length=plan.size, label="scanning", file=sys.stderr) as bar:
            scan = project.canary_scan(plan, jobs=jobs, on_progress=bar.update)
    else:
        scan = project.canary_scan(plan, jobs=jobs, on_progress=None)
    result, newly_void = scan.found, list(scan.newly_void)
    if as_json:
        click.echo(json.dumps(_as_json(holdouts_dir, result, newly_void), indent=2))
        for line in scan_lines(holdouts_dir, result, newly_void) if not result.clean else ():
            click.echo(line, err=True)  # a hit must not hide in a pipeline's JSON output
    else:
        for line in scan_lines(holdouts_dir, result, newly_void):
            click.echo(line)
    if not result.clean:
        raise NegativeVerdict()


def _as_json(holdouts_dir: Path, result: ScanResult, newly_void: list[str]) -> dict[str, object]:
    from flightdeck.holdouts.manifest import manifest_path, scans_path

    return {
        "clean": result.clean,
        "hit_count": result.hit_count,
        "hits": [
            {
                "canary": hit.canary,
                "suite": hit.suite,
                "question_id": hit.question_id,
                "file": str(hit.file),
                "line": hit.line,
            }
            for hit in result.hits
        ],
        "suites": {
            suite: {"hits": count, "newly_void": suite in newly_void}
            for suite, count in result.suite_counts.items()
        },
        "files": result.files,
        "bytes_read": result.bytes_read,
        "bytes_scanned": result.bytes_scanned,
        "canaries": result.canaries,
        "unregistered": result.unregistered,
        "skipped_sealed_keys": [str(path) for path in result.sealed_keys],
        "manifest": str(manifest_path(holdouts_dir)),
        "scans": str(scans_path(holdouts_dir)),
    }


def scan_lines(holdouts_dir: Path, result: ScanResult, newly_void: list[str]) -> list[str]:
    from flightdeck.holdouts.manifest import manifest_path

    lines = [
        f"{hit.file}:{hit.line}: {hit.canary} suite {hit.suite} question {hit.question_id}"
        for hit in result.hits
    ]
    if result.hit_count > len(result.hits):
        lines.append(f"... and {result.hit_count - len(result.hits)} more hits, not listed")
    scanned = f"{_plural(result.files, 'file')}, {_size(result.bytes_scanned)} scanned"
    if result.clean:
        lines.append(
            f"clean: none of {_plural(result.canaries, 'registered canary', 'registered canaries')}"
            f" in {scanned}"
        )
    else:
        files_hit = len({hit.file for hit in result.hits})
        lines.append(
            f"{_plural(result.hit_count, 'canary hit')} in {_plural(files_hit, 'file')} "
            f"(of {scanned}); "
            f"void in {manifest_path(holdouts_dir)}:"
        )
        for suite, count in result.suite_counts.items():
            state = "newly void" if suite in newly_void else "already void"
            lines.append(f"  {suite}: {_plural(count, 'hit')} ({state})")
    if result.sealed_keys:
        listed = [str(path) for path in result.sealed_keys[:SKIPPED_LISTED]]
        if len(result.sealed_keys) > SKIPPED_LISTED:
            listed.append(f"and {len(result.sealed_keys) - SKIPPED_LISTED} more")
        skipped = _plural(len(result.sealed_keys), "sealed keys file")
        lines.append(f"skipped {skipped}: {', '.join(listed)}")
    if result.unregistered:
        lines.append(
            f"note: {_plural(result.unregistered, 'canary-shaped string')} not registered "
            "here (another holdouts folder's?)"
        )
    return lines


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else plural or singular + 's'}"


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return _plural(n, "byte")


@holdout.command("unvoid")
@_holdouts_option
@click.argument("suite")
@click.option("--by", "by", required=True, help="Who decides to unvoid (recorded).")
@click.option("--why", "why", required=True, help="Why the hit does not mean a leak (recorded).")
def unvoid_command(
    holdouts_dir: Path | None, params_file: Path | None, suite: str, by: str, why: str
) -> None:
    """Lift a suite's void status on purpose; who and why stay in the manifest's history.

    SUITE is the name it was sealed under. Scanning the same traces again voids it again:
    remove or move the file with the hit first.

    \b
    Example:
        flightdeck holdout unvoid --holdouts holdouts knowledge-demo-v1 \\
            --by ana --why "the hit was a test fixture copied into traces/, not a leak"
    """
    project = _open(holdouts_dir, params_file)
    evidence = project.unvoid(suite, by=by, why=why)
    click.echo(
        f"unvoided {suite}: was void on {evidence.file}:{evidence.line} "
        f"({_plural(evidence.count, 'hit')}); recorded in {project.holdouts_manifest}"
    )

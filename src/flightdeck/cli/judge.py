"""`flightdeck knowledge judge` and `knowledge calibrate`: judges, measured against people."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flightdeck.cli._options import open_project, params_options, suite_argument
from flightdeck.errors import NegativeVerdict

if TYPE_CHECKING:
    from flightdeck.rating.calibration_format import Calibration


@click.command("judge")
@suite_argument
@click.option("--judge", "judge", required=True, help="A judge declared under judges: in params.")
@click.option("--arm", "arms", multiple=True, required=True, help="Arm to judge (repeat).")
@params_options
def judge_command(
    suite: Path, judge: str, arms: tuple[str, ...], params_file: Path | None, repo: tuple[str, ...]
) -> None:
    """Judge each answer of the arms; write judgements/<judge>/<arm>.jsonl, never labels/.

    One fsynced line per answer, bound to the answer's hash and the judge's identity: a rerun
    judges only what is missing or stale, so a killed run resumes. Exits 1 when the judge
    gave no usable verdict on some answer (a rerun retries those).

    \b
    Example:
        flightdeck knowledge judge suites/knowledge-demo-v1 --judge facts \\
            --arm baseline-repo-search --arm baseline-projects
    """
    project = open_project(params_file, repo, near=suite)
    runs = project.suite(suite).judge(
        judge,
        arms=arms,
        on_progress=lambda line: click.echo(line, err=True) if "no verdict" in line else None,
    )
    for run in runs:
        extra = f", {run.dropped} stale removed" if run.dropped else ""
        click.echo(
            f"{run.arm}: {run.judged} judged now, {run.kept} already judged{extra} "
            f"({run.kept + run.judged}/{run.answers}); wrote {run.path}"
        )
    failed = [f"{run.arm} {qid}" for run in runs for qid in run.failed]
    if failed:
        raise NegativeVerdict(
            f"no verdict on {len(failed)} answer(s): {', '.join(failed[:10])}; run again to retry"
        )


@click.command("calibrate")
@suite_argument
@click.option("--judge", "judge", required=True, help="A judge declared under judges: in params.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the full calibration to this file.",
)
@click.option("--seed", type=int, default=None, help="Bootstrap seed [params: seed, 0].")
@click.option("--resamples", type=int, default=None, help="Bootstrap resamples [10000].")
@click.option("--min-raters", type=int, default=None, help="People per answer [2].")
@params_options
def calibrate_command(
    suite: Path,
    judge: str,
    json_path: Path | None,
    params_file: Path | None,
    repo: tuple[str, ...],
    **overrides: Any,
) -> None:
    """Measure a judge against the people's majority; write judgements/<judge>/calibration.json.

    Over every answer both rated, across arms: Cohen's kappa with a seeded bootstrap
    interval, percent agreement, the 2x2 table, kappa per question kind and the answers
    they disagree on. Calibrated means kappa >= judge_min_kappa (0.6) on >= 30 answers.

    \b
    Example:
        flightdeck knowledge calibrate suites/knowledge-demo-v1 --judge facts
    """
    from flightdeck.rating.calibration_format import write_calibration

    calibrating = open_project(params_file, repo, near=suite, **overrides).suite(suite)
    result = calibrating.calibrate(judge)
    if json_path is not None:
        write_calibration(json_path, result)
    _print(result)
    click.echo(f"wrote {calibrating.folder.calibration(judge)}")


def _print(r: Calibration) -> None:
    def num(x: object) -> str:  # None: undefined (UNSET only in a file older than #21)
        return f"{x:.2f}" if isinstance(x, int | float) else "undefined"

    t = r.table
    interval = "" if r.kappa_lo is None else f" [{num(r.kappa_lo)}, {num(r.kappa_hi)}]"
    agreement = "-" if r.agreement is None else f"{100 * r.agreement:.1f}%"
    click.echo(
        f"judge {r.judge.name} vs the people on {r.n} answers: kappa "
        f"{num(r.kappa)}{interval}, agreement {agreement}"
        + (f" ({r.kappa_reason})" if r.kappa_reason else "")
    )
    click.echo("                   people correct  people incorrect")
    click.echo(
        f"  judge correct    {t.judge_correct_people_correct:>14}  "
        f"{t.judge_correct_people_incorrect:>16}"
    )
    click.echo(
        f"  judge incorrect  {t.judge_incorrect_people_correct:>14}  "
        f"{t.judge_incorrect_people_incorrect:>16}"
    )
    for kind, k in r.by_kind.items():
        click.echo(
            f"  {kind}: kappa {num(k.kappa)} on {k.n}" + (f" ({k.reason})" if k.reason else "")
        )
    facts = r.facts
    if facts.available:
        click.echo(
            f"  facts: kappa {num(facts.kappa)}, agreement {num(facts.agreement)} on "
            f"{facts.n} fact verdicts of {facts.answers} answers"
            + (f" ({facts.reason})" if facts.reason else "")
        )
    else:
        click.echo(f"  facts: {facts.reason}")
    for d in r.disagreements:
        votes = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in d.votes.items())
        missing = f"; missing: {'; '.join(d.facts_missing)}" if d.facts_missing else ""
        click.echo(
            f"  disagree {d.arm} {d.id}: judge {'correct' if d.judge else 'incorrect'}, "
            f"people {'correct' if d.people else 'incorrect'} ({votes}){missing}"
        )
    if r.calibrated:
        click.echo(f"calibrated: kappa >= {r.min_kappa:g} on >= {r.min_answers} answers")
    else:
        click.echo(
            f"NOT calibrated: needs kappa >= {r.min_kappa:g} on >= {r.min_answers} answers; "
            "people keep rating every arm"
        )

"""`flightdeck knowledge show`: the verdict and per-arm table a scored suite came to."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from flightdeck.cli._options import json_option, params_file_option, report_path_option


@click.command("show")
@click.argument("suite", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option(
    "--metrics",
    "metrics_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Metrics JSON [metrics/<suite>.json].",
)
@report_path_option
@params_file_option
@json_option
def show_command(
    suite: Path | None,
    metrics_path: Path | None,
    report_path: Path | None,
    params_file: Path | None,
    as_json: bool,
) -> None:
    """Print a scored suite's verdict and per-arm table from its metrics and report.

    Reads metrics/<suite>.json and reports/<suite>.md as the last score wrote them and
    recomputes nothing, so it shows what the pipeline produced even when every stage was
    up to date. SUITE defaults to params.yaml `suite`.

    \b
    Example:
        flightdeck knowledge show suites/knowledge-demo-v1
        flightdeck knowledge show            # the suite params.yaml names
    """
    from flightdeck.cli._options import open_project
    from flightdeck.scoring.summary import read_summary, render

    project = open_project(params_file, (), near=suite)
    named = project.named_suite(suite)
    summary = read_summary(metrics_path or named.metrics_path, report_path or named.report_path)
    if as_json:
        data = dataclasses.asdict(summary)
        data["metrics_path"] = summary.metrics_path.as_posix()
        data["report_path"] = summary.report_path.as_posix()
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    for line in render(summary):
        click.echo(line)

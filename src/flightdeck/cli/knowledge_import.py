"""`flightdeck knowledge import-answers`: a person's answers, hashed from their snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import click

from flightdeck.cli._options import json_option, params_options, suite_argument


@click.command("import-answers")
@suite_argument
@click.option("--arm", required=True, help="Arm name: writes answers/<arm>.jsonl and its meta.")
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The person's answers: .jsonl {id, answer, citations} or .csv id,answer,citations.",
)
@click.option("--by", required=True, help="Who ran the arm.")
@click.option("--model", required=True, help="The chat product and model they used.")
@click.option("--date", required=True, help="When they ran it: YYYY-MM-DD or ISO 8601.")
@click.option(
    "--snapshot",
    "snapshot_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of the documents they had, laid out <repo>/<path>.",
)
@click.option(
    "--snapshot-commit",
    "snapshot_commit",
    multiple=True,
    metavar="REPO=SHA",
    help="Or: the commit each repository's documents were exported from (repeatable).",
)
@click.option(
    "--on-missing",
    type=click.Choice(["record", "error"]),
    default="record",
    show_default=True,
    help="A cited file the snapshot lacks: record it with the hash of no bytes, or refuse.",
)
@click.option("--replace", is_flag=True, help="Overwrite the arm's existing answers.")
@params_options
@json_option
def import_answers_command(
    *,
    suite: Path,
    arm: str,
    source: Path,
    by: str,
    model: str,
    date: str,
    snapshot_dir: Path | None,
    snapshot_commit: tuple[str, ...],
    on_missing: Literal["record", "error"],
    replace: bool,
    params_file: Path | None,
    repo: tuple[str, ...],
    as_json: bool,
) -> None:
    """Import answers a person produced, hashing each citation from their snapshot.

    The SHA-256 of a cited file comes from the documents the person had (a folder, or the
    commits they were exported from), not from as_of: an out-of-date attachment scores as
    stale. A CSV's delimiter (',', ';' or tab) is sniffed; its citations are uris separated
    by spaces, ';' or '|'. A URL citation is kept (opaque); one of a repository outside the
    question's as_of is kept with a warning and scores as fabricated. A sealed suite whose
    questions or keys changed is refused; an unsealed one gets a warning.

    \b
    Example:
        flightdeck knowledge import-answers suites/knowledge-demo-v1 --arm baseline-projects \\
            --from answers.csv --by ada --model "chat-model-1" --date 2026-11-20 \\
            --snapshot attachments/
    """
    from flightdeck.arms.people import ImportOptions
    from flightdeck.arms.snapshot import parse_snapshot_commits
    from flightdeck.cli._options import open_project, warn_if_unsealed

    importing = open_project(params_file, repo, near=suite).suite(suite)
    warn_if_unsealed(importing)
    options = ImportOptions(
        by=by,
        model=model,
        date=date,
        snapshot_dir=snapshot_dir,
        snapshot_commits=parse_snapshot_commits(snapshot_commit),
        on_missing=on_missing,
        replace=replace,
    )
    result = importing.import_answers(arm, source=source, options=options)
    for absent in result.absent:
        click.echo(
            f"warning: {source}:{absent.line}: {absent.uri} is not in the snapshot; "
            "recorded with the sha256 of no bytes",
            err=True,
        )
    for out in result.outside:
        click.echo(
            f"warning: {source}:{out.line}: citation {out.uri!r} names a repository outside "
            f"question {out.id}'s as_of ({', '.join(out.as_of)}); kept, it scores as fabricated",
            err=True,
        )
    if as_json:
        payload = {
            "suite": result.suite,
            "arm": result.arm,
            "answers": result.answers_path.as_posix(),
            "meta": result.meta_path.as_posix(),
            "answered": result.answered,
            "unanswered": result.unanswered,
            "absent_citations": [{"line": a.line, "id": a.id, "uri": a.uri} for a in result.absent],
            "outside_citations": [
                {"line": o.line, "id": o.id, "uri": o.uri} for o in result.outside
            ],
            "csv_delimiter": result.delimiter,
            "knowledge_snapshot": result.knowledge_snapshot,
        }
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(
        f"{result.suite} / {result.arm}: imported {len(result.answered)} answers for "
        f"{result.questions} questions into {result.answers_path}"
    )
    if result.unanswered:
        click.echo(f"unanswered (scored as missing): {', '.join(result.unanswered)}")
    click.echo(f"meta: {result.meta_path}")

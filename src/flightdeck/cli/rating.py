"""`flightdeck knowledge rate` and `knowledge agreement`: give labels blind, then compare raters.

``cli/knowledge.py`` lists both in the ``knowledge`` group's lazy commands (``ATTACHED``).
"""

from __future__ import annotations

import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from flightdeck.cli._options import (
    json_option,
    open_project,
    params_options,
    suite_argument,
    warn_if_unsealed,
)
from flightdeck.errors import EXIT_INTERRUPTED

if TYPE_CHECKING:
    from flightdeck.rating.agreement import SuiteAgreement
    from flightdeck.rating.session import CitationView, ItemView, RatingSession
    from flightdeck.scoring.stats import Kappa


@click.command("rate")
@suite_argument
@click.option("--rater", required=True, help="Your name, as it goes into every label.")
@click.option("--tui", is_flag=True, help="Rate in this terminal instead of a web page.")
@click.option(
    "--no-browser", is_flag=True, help="Serve the page and print its address; open nothing."
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port to serve on [a free one]."
)
@click.option(
    "--arm",
    "arms",
    multiple=True,
    help="Also rate this arm (repeatable), mixed blind with the rest [params.yaml arms].",
)
@click.option(
    "--adjudicate",
    is_flag=True,
    help="Rate only the answers the first two raters split on (a third rater's view).",
)
@click.option(
    "--review", is_flag=True, help="Open the review list even when every answer is rated."
)
@params_options
def rate_command(
    *,
    suite: Path,
    rater: str,
    tui: bool,
    no_browser: bool,
    port: int,
    arms: tuple[str, ...],
    adjudicate: bool,
    review: bool,
    params_file: Path | None,
    repo: tuple[str, ...],
) -> None:
    """Rate every answer of every arm blind, in your own random order, one at a time.

    Serves a page on 127.0.0.1 and opens it in your browser; without a browser (or with
    --tui) it asks in the terminal. Each label is saved as you confirm it, so you can stop
    at any time (Ctrl-C) and the next run resumes at your first unrated answer. Every
    action has a button (mouse and touch) as well as a key. Once all are rated the page
    lists your labels to revise any of them (a revision rewrites the label in place) until
    you press Finish; --review reopens that list later. The arms rated are params.yaml's
    `arms` (the ones the decision scores; every arm when it names none) plus each --arm,
    all mixed blind; --adjudicate shows a third rater only the answers the first two split
    on. A sealed suite whose questions or keys changed is refused; an unsealed one gets a
    warning.

    \b
    Example:
        flightdeck knowledge rate suites/knowledge-gold-v1 --rater ada
        flightdeck knowledge rate suites/knowledge-gold-v1 --rater bob --tui
        flightdeck knowledge rate suites/knowledge-gold-v1 --rater cy --adjudicate
        flightdeck knowledge rate suites/knowledge-gold-v1 --rater ada --arm scratch-run
    """
    rating = open_project(params_file, repo, near=suite).suite(suite)
    warn_if_unsealed(rating)
    from flightdeck.project.modes import ToRate

    to_rate = ToRate.SPLIT_ANSWERS if adjudicate else ToRate.EVERY_ANSWER
    chosen = rating.rate(rater, arms=arms, to_rate=to_rate)
    with chosen.session as session:
        _say_choice(chosen.choice.not_yet, chosen.choice.left_out)
        if session.first_unlabelled() is None and not (review and not tui):
            click.echo(f"nothing left to rate: {rater} has rated all {session.total} answers")
            return
        if not tui and not no_browser and not browser_available():
            click.echo("no browser here: rating in the terminal (--no-browser serves the page)")
            tui = True
        if tui:
            _rate_in_terminal(session)
        else:
            _rate_in_browser(session, port=port, open_page=not no_browser)


def _say_choice(not_yet: tuple[str, ...], left_out: tuple[str, ...]) -> None:
    """Name the arms left out of this pass, on stderr, so a missing one is never a surprise."""
    if not_yet:
        click.echo(f"note: params.yaml arms with no answers yet: {', '.join(not_yet)}", err=True)
    if left_out:
        click.echo(
            f"note: not in params.yaml arms, left out: {', '.join(left_out)} (--arm NAME adds one)",
            err=True,
        )


def browser_available() -> bool:
    """True when a graphical browser can be opened (text browsers would take the terminal)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _rate_in_browser(session: RatingSession, *, port: int, open_page: bool) -> None:
    import webbrowser

    from flightdeck.rating.server import RatingServer

    server = RatingServer(session, port=port)
    left = session.total - session.labelled
    click.echo(f"rating {left} of {session.total} answers as {session.rater}; open:")
    click.echo(server.url)
    click.echo("Finish on the page (or Ctrl-C) stops; every confirmed label is already saved.")
    if open_page:
        webbrowser.open(server.url)
    try:
        server.serve()
    except KeyboardInterrupt:
        click.echo(f"stopped: {session.labelled} of {session.total} rated; run again to resume")
        raise
    click.echo(f"done: {session.labelled} of {session.total} answers rated by {session.rater}")


# --- terminal mode ---------------------------------------------------------------------


def _rate_in_terminal(session: RatingSession) -> None:
    try:
        _prompt_items(session)
    except click.Abort as stop:  # Ctrl-C or end of input at a prompt: nothing unsaved is lost
        click.echo()
        click.echo(
            f"stopped: {session.labelled} of {session.total} rated; run again to resume",
            err=True,
        )
        # click turns both into Abort; end of input (``</dev/null``) is no interrupt: exit 0
        if not isinstance(stop.__context__, EOFError):
            click.get_current_context().exit(EXIT_INTERRUPTED)


def _prompt_items(session: RatingSession) -> None:
    position = session.first_unlabelled()
    while position is not None:
        view = session.view(position)
        _show(view)
        pages = {c.number: c.page for c in view.citations if c.pages > 1}
        more = " m N more lines of citation N," if pages else ""
        while True:
            facts: list[int] | str = click.prompt(
                f"Facts present (numbers like 1 3, all, none;{more} b back, q quit)",
                default=_facts_default(view),
                value_proc=partial(_parse_choice, n=len(view.facts), allow_nav=True),
            )
            if not (isinstance(facts, str) and facts.startswith("m")):
                break
            number = int(facts[1:]) if facts[1:] else min(pages, default=0)
            if number not in pages:
                click.echo("  that citation has no more lines to page through")
                continue
            cite = view.citations[number - 1]
            pages[number] = (pages[number] + 1) % cite.pages  # after the last, the first again
            _show_citation(session.citation_page(position, number, pages[number]))
        if facts == "b":
            position = max(0, position - 1)
            continue
        if facts == "q":
            click.echo(f"stopped: {session.labelled} of {session.total} rated; run again to resume")
            return
        correct = click.confirm("Correct?", default=len(facts) == len(view.facts) > 0)
        unsupported: list[int] = []
        if view.citations:
            unsupported = click.prompt(
                "Citations that do not support the claim (numbers, or none)",
                default=_flags_default(view),
                value_proc=partial(_parse_numbers, n=len(view.citations)),
            )
        ticks = [n in facts for n in range(1, len(view.facts) + 1)]
        result = session.save(position, correct, unsupported, ticks)
        click.echo("saved" if result.written else "unchanged")
        position = result.next_position
    click.echo(f"done: all {session.total} answers rated by {session.rater}")


def _facts_default(view: ItemView) -> str | None:
    if view.own is None:
        return None  # no default: an accidental Enter must not mark a fact absent
    if view.own.facts is not None:  # the facts ticked last time (#21)
        ticked = [str(n) for n, on in enumerate(view.own.facts, start=1) if on]
        return "all" if len(ticked) == len(view.facts) else " ".join(ticked) or "none"
    return "all" if view.own.correct else "none"


def _flags_default(view: ItemView) -> str:
    if view.own is None or not view.own.unsupported:
        return "none"
    return " ".join(str(n) for n in view.own.unsupported)


def _parse_choice(text: str, *, n: int, allow_nav: bool = False) -> list[int] | str:
    """``"1 3"`` -> [1, 3]; ``all``/``none``; ``b``/``q`` when navigation is allowed."""
    words = text.replace(",", " ").lower().split()
    if allow_nav and words in (["b"], ["q"]):
        return words[0]
    paging = "".join(words)
    if allow_nav and paging[:1] == "m" and (paging == "m" or paging[1:].isdigit()):
        return paging  # "m2": the next page of citation 2's lines
    return _parse_numbers(text, n=n)


def _parse_numbers(text: str, *, n: int) -> list[int]:
    """``"1 3"`` -> [1, 3]; ``all`` -> every number; ``none`` (or nothing) -> []."""
    words = text.replace(",", " ").lower().split()
    if words == ["all"]:
        return list(range(1, n + 1))
    if words in ([], ["none"], ["-"]):
        return []
    numbers = []
    for word in words:
        if not word.isdigit() or not 1 <= int(word) <= n:
            raise click.BadParameter(f"{word!r} is not a number from 1 to {n}")
        numbers.append(int(word))
    return sorted(set(numbers))


def _show(view: ItemView) -> None:
    click.echo()
    click.secho(
        f"[{view.position + 1}/{view.total}] {view.question_id} ({view.kind}) "
        f"- {view.labelled} rated",
        bold=True,
    )
    click.echo(f"Question: {view.question}")
    click.echo(f"Answer key: {view.answer_key}")
    click.echo("Required facts:")
    for number, fact in enumerate(view.facts, start=1):
        click.echo(f"  {number}. {fact}")
    click.echo("Answer:")
    # lines at \n alone (and \r\n): a lone \r or another separator is shown escaped
    for line in (view.answer or "(empty answer)").replace("\r\n", "\n").rstrip("\n").split("\n"):
        click.echo(f"  {_safe(line)}")
    click.echo("Citations:" if view.citations else "Citations: none")
    for cite in view.citations:
        _show_citation(cite)
    if view.own is not None:
        flagged = ", ".join(str(n) for n in view.own.unsupported) or "none"
        verdict = "correct" if view.own.correct else "not correct"
        click.echo(f"Your label: {verdict}; unsupported citations: {flagged}")


def _safe(text: str) -> str:
    """Harness-made (or repository) text for the terminal: control characters escaped, so an
    answer's escape sequences cannot redraw the screen, set the title or hide text."""
    from flightdeck.arms.limits import escape_control

    return escape_control(text.expandtabs())


def _show_citation(cite: CitationView) -> None:
    note = f"  ({_safe(cite.note)})" if cite.note else ""
    click.echo(f"  [{cite.number}] {_safe(cite.uri)}{note}")
    for shown in cite.lines:
        mark = ">" if shown.cited else " "
        click.echo(f"    {mark}{shown.number:>5} | {_safe(shown.text)}")
    if cite.pages > 1 and cite.lines:
        click.echo(
            f"    lines {cite.lines[0].number}-{cite.lines[-1].number} of {cite.first}-"
            f"{cite.last} (page {cite.page + 1} of {cite.pages}); m{cite.number} for more"
        )


# --- agreement -------------------------------------------------------------------------


@click.command("agreement")
@suite_argument
@click.option("--arm", "arms", multiple=True, help="Also this arm (repeatable) [params.yaml arms].")
@json_option
@params_options
def agreement_command(
    suite: Path,
    arms: tuple[str, ...],
    as_json: bool,
    params_file: Path | None,
    repo: tuple[str, ...],
) -> None:
    """Compare raters: kappa and agreement per pair, prevalence, disagreements to settle.

    The arms are params.yaml's `arms` (every arm when it names none) plus each --arm.

    \b
    Example:
        flightdeck knowledge agreement suites/knowledge-gold-v1
        flightdeck knowledge agreement suites/knowledge-gold-v1 --arm baseline-projects --json
    """
    chosen = open_project(params_file, repo, near=suite).suite(suite).agreement(arms=arms)
    result = chosen.agreement
    _say_choice(chosen.choice.not_yet, chosen.choice.left_out)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, sort_keys=True))
    else:
        _print_agreement(result)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _kappa(kappa: Kappa, items: str) -> str:
    if kappa.n == 0:
        return f"not compared ({kappa.reason})"
    value = f"{kappa.value:.2f}" if kappa.value is not None else f"n/a ({kappa.reason})"
    return f"kappa {value}, agreement {_pct(kappa.agreement)} over {kappa.n} {items}"


def _print_agreement(result: SuiteAgreement) -> None:
    for arm in result.arms:
        click.secho(f"{arm.arm}: {len(arm.raters)} raters, {arm.labels} labels", bold=True)
        if not arm.raters:
            click.echo("  no labels yet")
            continue
        by_rater = ", ".join(f"{r} {_pct(p)}" for r, p in arm.prevalence_by_rater.items())
        click.echo(f"  rated correct: {_pct(arm.prevalence)} of labels ({by_rater})")
        for pair in arm.pairs:
            a, b = pair.raters
            click.echo(
                f"  {a} vs {b}: correct {_kappa(pair.correct, 'answers')}; "
                f"unsupported {_kappa(pair.unsupported, 'citations')}"
            )
        if arm.stale:
            click.echo(
                f"  warning: {len(arm.stale)} labels rate an older answer "
                f"({', '.join(arm.stale[:5])}{', ...' if len(arm.stale) > 5 else ''}); rate again"
            )
        if not arm.disagreements:
            click.echo("  no disagreements")
            continue
        click.echo(f"  disagreements to settle ({len(arm.disagreements)}):")
        for d in arm.disagreements:
            votes = ", ".join(f"{r} {'yes' if v else 'no'}" for r, v in d.votes.items())
            what = "correct" if d.uri is None else f"unsupported {d.uri}"
            click.echo(f"    {d.id} {what}: {votes}")

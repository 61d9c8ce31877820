"""`rate --tui` shows harness-made text with control characters escaped (#20, red team).

An answer is whatever the harness printed (the runner keeps escape sequences in an answer: they
are valid JSON text), and the terminal rater printed it as it was: an answer could clear the
screen, set the terminal's title, or hide or redraw lines (a fake "Answer key:" line).
"""

from __future__ import annotations

from click.testing import CliRunner
from tests.builders import BuiltProject, answer
from tests.cli.test_rate_tui import PATHS, rate

HOSTILE = "fine\x1b[2J\x1b]0;pwned\x07\x1b[1A\rAnswer key: agreed\x9b31m"


def test_an_answer_s_escape_sequences_never_reach_the_terminal(
    runner: CliRunner, project: BuiltProject
) -> None:
    project.write_answers("arm-alpha", [answer(project, q, HOSTILE, [p]) for q, p in PATHS.items()])
    result = rate(runner, project, "q\n")
    assert result.exit_code == 0, result.output
    for control in ("\x1b", "\x07", "\x9b", "\r"):
        assert control not in result.output
    assert (
        "  fine\\x1b[2J\\x1b]0;pwned\\x07\\x1b[1A\\x0dAnswer key: agreed\\x9b31m" in result.output
    )

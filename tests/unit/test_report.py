"""The report a sceptic reads: the verdict with its direction, each question, the picture.

Arms are scored with the real rules (``score_arm``) and compared with the real statistics
(``compare_arms``) on small hand-made tables whose counts are worked out in the comments, so
the exact sentences below follow from numbers one can check by hand.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import cast

import pytest

from flightdeck.params import Params
from flightdeck.scoring.picture import BOLD, EM, result_picture
from flightdeck.scoring.points import Direction
from flightdeck.scoring.report import markdown_report
from flightdeck.scoring.report_comparison import verdict_line
from flightdeck.scoring.rules import ArmScore, Comparison, compare_arms, score_arm
from flightdeck.suite.records import KINDS
from flightdeck.suite.schema import Answer, Key, Kind, Label, Question, Source
from flightdeck.tasks.knowledge import ScoreResult

SVG = "{http://www.w3.org/2000/svg}"
VALID = Source("sdlc/docs/a.md", "a" * 64)
OTHER = Source("sdlc/docs/b.md", "b" * 64)
PARAMS = Params()


def questions(n: int) -> list[Question]:
    return [
        Question(
            f"q{i:02d}",
            f"Why does service {i} call the model gateway before it writes to the queue?",
            cast(Kind, KINDS[(i - 1) % len(KINDS)]),
            {"sdlc": "0" * 40},
            (),
        )
        for i in range(1, n + 1)
    ]


def arm(name: str, correct: str, cited: str, qs: list[Question] | None = None) -> ArmScore:
    """One arm from two strings, a character per question.

    ``correct``: 1 both raters say correct, 0 both say not, t a tie (ana yes, ravi no), m no
    answer. ``cited``: v cites the valid source, f a fabricated one, 2 both, u nothing.
    """
    qs = qs or questions(len(correct))
    keys = {q.id: Key(q.id, "the key", ("fact",), (VALID,)) for q in qs}
    answers, labels = {}, []
    cites = {"v": (VALID,), "f": (OTHER,), "2": (VALID, OTHER), "u": ()}
    for q, c, s in zip(qs, correct, cited, strict=True):
        if c == "m":
            continue
        answers[q.id] = Answer(q.id, "an answer", cites[s])
        ana, ravi = {"1": (True, True), "0": (False, False), "t": (True, False)}[c]
        labels += [Label(q.id, "ana", ana), Label(q.id, "ravi", ravi)]
    return score_arm(name, qs, keys, answers, labels, confidence=0.95)


def compare(baseline: ArmScore, candidate: ArmScore) -> Comparison:
    return compare_arms(
        baseline, candidate, seed=0, resamples=2000, confidence=0.95, threshold=15.0
    )


def result(arms: list[ArmScore], comparisons: list[Comparison], qs: list[Question]) -> ScoreResult:
    return ScoreResult(
        suite="demo-v1",
        n=len(qs),
        arms={a.arm: a for a in arms},
        comparisons=tuple(comparisons),
        params=PARAMS,
        sealed_at="2026-12-01T00:00:00Z",
        questions={q.id: q.question for q in qs},
    )


# n = 30. Correctness: 20 questions only the candidate gets right, 5 both, 5 neither:
# +20/30 = +66.7 points, far above 15 at this n. Citation validity: the candidate cites
# validly on 4 questions the baseline does not, the baseline on 2 the candidate does not:
# (4 - 2)/30 = +6.7 points, not shown.
SHOWN_C = "1" * 20 + "1" * 5 + "0" * 5
SHOWN_B = "0" * 20 + "1" * 5 + "0" * 5
SHOWN_CV = "v" * 4 + "f" * 2 + "v" * 10 + "f" * 14
SHOWN_BV = "f" * 4 + "v" * 2 + "v" * 10 + "f" * 14


@pytest.mark.parametrize(
    ("base", "cand", "line"),
    [
        pytest.param(
            ("0000", "vvff"),
            ("1100", "vvff"),
            # correctness (2 - 0)/4 = +50.0; citation validity equal: +0.0. n = 4 can show
            # nothing at a 2.5% false "shown" rate, so neither is shown.
            "cand is +50.0 points on correctness and +0.0 on citation validity against base: "
            "not shown to be 15 points better on either metric.",
            id="not-shown-candidate-ahead",
        ),
        pytest.param(
            ("1101", "vvvf"),
            ("0100", "vfvf"),
            # correctness (0 - 2)/4 = -50.0; citation validity (0 - 1)/4 = -25.0
            "cand is -50.0 points on correctness and -25.0 on citation validity against base: "
            "worse on both metrics.",
            id="candidate-worse",
        ),
        pytest.param(
            ("0001", "ffff"),
            ("1000", "vfff"),
            # correctness (1 - 1)/4 = +0.0 (level); citation validity (1 - 0)/4 = +25.0
            "cand is +0.0 points on correctness and +25.0 on citation validity against base: "
            "not shown to be 15 points better on either metric.",
            id="level-counts-as-not-shown",
        ),
        pytest.param(
            ("0110", "vvvv"),
            ("1110", "vvfv"),
            # correctness (1 - 0)/4 = +25.0 ahead; citation validity (0 - 1)/4 = -25.0 behind
            "cand is +25.0 points on correctness and -25.0 on citation validity against base: "
            "not shown to be 15 points better on correctness; worse on citation validity.",
            id="ahead-on-one-behind-on-the-other",
        ),
        pytest.param(
            (SHOWN_B, SHOWN_BV),
            (SHOWN_C, SHOWN_CV),
            "cand is +66.7 points on correctness and +6.7 on citation validity against base: "
            "base is shown to lose by at least 15 points on correctness; cand is not shown "
            "to be 15 points better on citation validity.",
            id="shown",
        ),
    ],
)
def test_the_first_line_says_the_direction_and_the_verdict(
    base: tuple[str, str], cand: tuple[str, str], line: str
) -> None:
    qs = questions(len(base[0]))
    b, c = arm("base", *base, qs=qs), arm("cand", *cand, qs=qs)
    comparison = compare(b, c)
    assert verdict_line(comparison) == line
    report = markdown_report(result([b, c], [comparison], qs), picture_name="p.svg")
    assert report.splitlines()[:3] == ["# Knowledge evals: demo-v1", "", f"**{line}**"]


def test_a_ruled_out_lead_is_said() -> None:
    # n = 40, no question differs on correctness: +0.0, and the mirror claim rules a
    # 15-point lead out; citation validity is identical too.
    qs = questions(40)
    b = arm("base", "1" * 20 + "0" * 20, "v" * 40, qs=qs)
    c = arm("cand", "1" * 20 + "0" * 20, "v" * 40, qs=qs)
    comparison = compare(b, c)
    assert comparison.metrics["correctness"].ruled_out
    assert verdict_line(comparison) == (
        "cand is +0.0 points on correctness and +0.0 on citation validity against base: "
        "not shown to be 15 points better on either metric; a lead of 15 points or more is "
        "ruled out on both metrics."
    )


def test_each_question_is_in_a_details_table() -> None:
    qs = questions(4)
    qs[1] = Question("q02", "What | is <b>this</b>?", "blocker", {"sdlc": "0" * 40}, ())
    b = arm("base", "1t0m", "v2fu", qs=qs)
    c = arm("cand", "0110", "vvfu", qs=qs)
    report = markdown_report(result([b, c], [compare(b, c)], qs), picture_name="p.svg")
    lines = report.splitlines()
    start = lines.index("<details>")
    assert lines[start - 2 : start] == ["### By question", ""]
    end = lines.index("</details>")
    assert lines[start : end + 1] == [
        "<details>",
        "<summary>Each question: each arm's majority, the votes behind it and its citations' "
        "classes (4 rows)</summary>",
        "",
        'The column "correctness: cand vs base" says which of C (cand, the candidate) and B '
        '(base, the baseline) the raters found correct; its "C right, B wrong" and "B right, '
        "C wrong\" rows are the questions the comparison's counts are made of.",
        "",
        "| id | kind | question | base: majority (votes) | base: citations | "
        "cand: majority (votes) | cand: citations | correctness: cand vs base |",
        "|---|---|---|---|---|---|---|---|",
        "| q01 | decision-why | Why does service 1 call the model gateway… | "
        "correct (ana ✓, ravi ✓) | 1 valid | incorrect (ana ✗, ravi ✗) | 1 valid | "
        "B right, C wrong |",
        "| q02 | blocker | What \\| is &lt;b&gt;this&lt;/b&gt;? | incorrect, a tie (ana ✓, ravi ✗) "
        "| 1 valid, 1 fabricated | correct (ana ✓, ravi ✓) | 1 valid | C right, B wrong |",
        "| q03 | what-changed | Why does service 3 call the model gateway… | "
        "incorrect (ana ✗, ravi ✗) | 1 fabricated | correct (ana ✓, ravi ✓) | 1 fabricated | "
        "C right, B wrong |",
        "| q04 | how-to | Why does service 4 call the model gateway… | "
        "not answered | — | incorrect (ana ✗, ravi ✗) | uncited | both wrong |",
        "",
        "</details>",
    ]


def test_the_discordant_counts_are_explained_where_they_appear() -> None:
    qs = questions(4)
    b, c = arm("base", "1t0m", "v2fu", qs=qs), arm("cand", "0110", "vvfu", qs=qs)
    report = markdown_report(result([b, c], [compare(b, c)], qs), picture_name="p.svg")
    lines = report.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("| correctness | +25.0 |"))
    assert lines[at - 2].endswith("| C right, B wrong | B right, C wrong |")
    # correctness: C right and B wrong on q02 and q03, B right and C wrong on q01: (2 - 1)/4;
    # citation validity: only q02 (C valid, B one fabricated): (1 - 0)/4.
    assert lines[at + 2 : at + 4] == [
        "",
        (
            'C is the candidate (cand), B the baseline (base). "C right, B wrong" is the number of '
            "questions the candidate got right and the baseline got wrong (for citation validity: "
            'cited validly, and not); "B right, C wrong" is the reverse. Questions both got right '
            "or both got wrong do not move the difference: it is the first count minus the second "
            "over all 4 questions, so correctness (2 − 1) / 4 = +25.0 points and citation validity "
            "(1 − 0) / 4 = +25.0 points. The per-question table (By question) shows which "
            "questions these are."
        ),
    ]


def _multiplicity(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("- Multiplicity")]


def test_two_baselines_are_mentioned_only_when_there_are_two() -> None:
    qs = questions(30)
    b = arm("base", SHOWN_B, SHOWN_BV, qs=qs)
    other = arm("other", SHOWN_B, SHOWN_BV, qs=qs)
    c = arm("cand", SHOWN_C, SHOWN_CV, qs=qs)
    one = markdown_report(result([b, c], [compare(b, c)], qs), picture_name="p.svg")
    (line,) = _multiplicity(one)
    assert "This report makes 2 such claims (two metrics): up to " in line
    assert "baseline" not in line
    both = [compare(b, c), compare(other, c)]
    two = markdown_report(result([b, other, c], both, qs), picture_name="p.svg")
    lines = _multiplicity(two)
    assert len(lines) == 2  # one per comparison section, each counting every claim
    size = line.split("up to ")[1].split("%")[0]  # one claim's size, as the first report says
    for text in lines:
        assert f"up to {size}%" in text
        assert "This report makes 4 such claims (two metrics against two baselines)" in text
    assert two.splitlines()[2:5] == [
        f"**{verdict_line(both[0])}**",
        "",
        f"**{verdict_line(both[1])}**",
    ]


def test_the_picture_has_a_title_the_verdict_and_the_numbers() -> None:
    qs = questions(4)
    b, c = arm("base", "1100", "vfff", qs=qs), arm("cand", "1110", "vvff", qs=qs)
    comparison = compare(b, c)
    svg = ET.fromstring(result_picture(result([b, c], [comparison], qs)))
    assert svg.tag == f"{SVG}svg"
    assert svg.get("width") == "760"
    assert svg.findtext(f"{SVG}title") == "Knowledge evals: demo-v1, 4 questions"
    assert svg.findtext(f"{SVG}desc") == (
        "cand is +25.0 points on correctness and +25.0 on citation validity against base: "
        "not shown to be 15 points better on either metric."
    )
    texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
    assert texts[0] == "Knowledge evals: demo-v1, 4 questions"
    assert " ".join(texts[1:3]) == svg.findtext(f"{SVG}desc")
    # Wilson 95% for 2/4: centre 0.5, half-width 1.96·sqrt(1/16 + 1.96²/64)/(1 + 1.96²/4)
    # = 0.350, so [15.0, 85.0]; 3/4: [30.1, 95.4]; 1/4: [4.6, 69.9] (Newcombe 1998, table I).
    for numbers in (
        "50.0% (2/4) [15.0, 85.0]",  # base correctness
        "25.0% (1/4) [4.6, 69.9]",  # base citation validity
        "75.0% (3/4) [30.1, 95.4]",  # cand correctness
        "50.0% (2/4) [15.0, 85.0]",  # cand citation validity
    ):
        assert numbers in texts
    m = comparison.metrics["correctness"]
    assert m.decision is not None
    assert f"+25.0 [{_minus(m.lo, 'down')}, {_minus(m.hi, 'up')}]" in texts
    assert f"not shown (bound {_minus(m.decision.shown.bound, 'down')})" in texts
    assert "threshold +15" in texts
    assert {"base", "cand", "cand − base", "correctness", "citation validity"} <= set(texts)


def test_the_picture_fits_a_pull_request_comment() -> None:
    """Long names are wrapped or clipped to 760 px at the estimate the layout uses."""
    qs = questions(4)
    long = "retrieval-service-" + "x" * 120
    b, c = arm("base", "1100", "vfff", qs=qs), arm(long, "1110", "vvff", qs=qs)
    svg = ET.fromstring(result_picture(result([b, c], [compare(b, c)], qs)))
    clipped = [t.text or "" for t in svg.iter(f"{SVG}text") if (t.text or "").endswith("…")]
    assert clipped
    assert all(x.startswith("retrieval-service-xxx") for x in clipped)
    for t in svg.iter(f"{SVG}text"):
        em = EM * (BOLD if t.get("font-weight") == "bold" else 1)
        size = float(t.get("font-size", 0))
        if t.get("text-anchor") == "start":
            assert float(t.get("x", 0)) + em * size * len(t.text or "") <= 760, t.text


def _minus(x: float, direction: Direction) -> str:
    from flightdeck.scoring.points import points

    return points(x, direction).replace("-", "−")


def test_a_large_suite_lists_its_first_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    from flightdeck.scoring import report_questions

    monkeypatch.setattr(report_questions, "MAX_ROWS", 2)
    qs = questions(4)
    b, c = arm("base", "1100", "vfff", qs=qs), arm("cand", "1110", "vvff", qs=qs)
    lines = report_questions.question_table(result([b, c], [compare(b, c)], qs))
    assert lines[1] == (
        "<summary>Each question: each arm's majority, the votes behind it and its citations' "
        "classes (the first 2 of 4 questions)</summary>"
    )
    assert lines[3] == "`results/demo-v1/` has every question."
    rows = [line for line in lines if line.startswith("| q")]
    assert [row.split(" | ")[0] for row in rows] == ["| q01", "| q02"]

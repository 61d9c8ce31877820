"""The built-in repo-search agent: BM25 checked against bm25s, ranking, citations, determinism."""

from __future__ import annotations

import hashlib
import io
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from flightdeck.arms.agents.bm25 import bm25_scores, idf, query_words
from flightdeck.arms.agents.repo_search import MAX_FILE_BYTES, read_workspace, search


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_bm25_by_hand() -> None:
    # Passages [a b c], [a a d], [e], [b d d d]; query "a d". N = 4, avglen = 11/4 = 2.75,
    # df(a) = df(d) = 2, so idf = ln(1 + 2.5/2.5) = ln 2 for both.
    # Passage 0: a once, len 3: ln2 * 1 / (1 + 1.5 * (0.25 + 0.75 * 3 / 2.75)) = 0.266362.
    tf = np.array([[1, 2, 0, 0], [0, 1, 0, 3]], dtype=float)
    lengths = np.array([3, 3, 1, 4], dtype=float)
    scores = bm25_scores(tf, lengths)
    assert idf(4, 2) == pytest.approx(math.log(2))
    assert scores[0] == pytest.approx(math.log(2) / (1 + 1.5 * (0.25 + 0.75 * 3 / 2.75)))
    assert scores[2] == 0.0


def test_bm25_matches_bm25s_and_rank_bm25() -> None:
    """Our scores equal bm25s's Lucene BM25 and rank-bm25's BM25Okapi (up to its idf)."""
    import bm25s

    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(40)]
    corpus = [[rng.choice(vocabulary) for _ in range(rng.randint(1, 30))] for _ in range(200)]
    query = ["w1", "w2", "w17", "w39"]
    tf = np.array([[doc.count(w) for doc in corpus] for w in query], dtype=float)
    lengths = np.array([len(doc) for doc in corpus], dtype=float)
    ours = bm25_scores(tf, lengths)

    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(corpus, show_progress=False)
    np.testing.assert_allclose(ours, retriever.get_scores(query), rtol=1e-5, atol=1e-6)

    from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

    okapi = BM25Okapi(corpus, k1=1.5, b=0.75)
    # rank-bm25 scores tf * (k1 + 1) / (tf + norm) with its own idf: rescale ours to compare.
    rescaled = np.zeros(len(corpus))
    for row, word in enumerate(query):
        df = int((tf[row] > 0).sum())
        per_word = bm25_scores(tf[row : row + 1], lengths) / idf(len(corpus), df)
        rescaled += per_word * okapi.idf[word] * (1.5 + 1)
    np.testing.assert_allclose(rescaled, okapi.get_scores(query), rtol=1e-9)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        pytest.param("Why did we choose Postgres?", ["choose", "postgres"], id="stop-words"),
        pytest.param("Who owns the CI/CD pipeline?", ["owns", "ci", "cd", "pipeline"], id="split"),
        pytest.param("deploy deploy DEPLOY", ["deploy"], id="distinct"),
        pytest.param("the of and", [], id="only-stop-words"),
        pytest.param("ADR 7 in v2", ["adr", "7", "v2"], id="digits"),
    ],
)
def test_query_words(question: str, words: list[str]) -> None:
    assert query_words(question) == words


def test_it_cites_the_best_passage_with_the_file_hash(tmp_path: Path) -> None:
    filler = "".join(f"line {i} about nothing in particular\n" for i in range(40))
    adr = filler + "## Decision\nWe chose Postgres because of JSONB.\nIt replaced MySQL.\n"
    ws = write(
        tmp_path,
        {
            "sdlc/docs/adr/0002-database.md": adr,
            "sdlc/README.md": "Welcome. See docs.\n",
            "sdlc/docs/runbooks/deploy.md": "Run make release to deploy.\n",
        },
    )
    trace = io.StringIO()
    result = search(ws, "Why did we choose Postgres?", trace=trace)
    assert result.citations[0] == ("sdlc/docs/adr/0002-database.md#L41-L43", sha(adr))
    assert len(result.citations) == 1
    assert result.answer == (  # from the line before the first query word ("postgres")
        "sdlc/docs/adr/0002-database.md#L41-L43:\n"
        "## Decision\nWe chose Postgres because of JSONB.\nIt replaced MySQL."
    )
    log = trace.getvalue()
    assert "files read, 0 skipped (" in log
    assert "read sdlc/README.md" not in log  # counted, not listed: the trace stays short
    assert "query words: choos postgr" in log  # stems (Porter2), as the passages count them
    assert f"cite sdlc/docs/adr/0002-database.md#L41-L43 sha256={sha(adr)}" in log


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("deploy with make\nstep two\nstep three\nend\n", id="final-newline"),
        pytest.param("deploy with make\nstep two\nstep three\nend", id="no-final-newline"),
    ],
)
def test_the_trace_gives_the_spans_the_citations_give(tmp_path: Path, text: str) -> None:
    # Four lines, with or without a final newline: the passage and the citation are L1-L4
    # (a final "\n" ends line 4; it does not start a line 5).
    ws = write(tmp_path, {"r/a.md": text, "r/b.md": "nothing relevant\n"})
    trace = io.StringIO()
    result = search(ws, "How do we deploy?", trace=trace)
    assert [uri for uri, _ in result.citations] == ["r/a.md#L1-L4"]
    log = trace.getvalue().splitlines()
    ranks = [line.split()[-1] for line in log if line.startswith("rank ")]
    assert ranks == ["r/a.md#L1-L4", "r/b.md#L1-L1"]
    assert "quote r/a.md#L1-L4" in log
    assert f"cite r/a.md#L1-L4 sha256={sha(text)}" in log


def test_the_trace_names_the_quoted_lines_of_a_longer_passage(tmp_path: Path) -> None:
    # A 30-line file: passages L1-L20, L11-L30, L21-L30 (window 20, stride 10, cut at the
    # file's end); the shortest holding the word ranks first. The quote starts a line before
    # the first query word (line 25) and runs to the file's end.
    lines = [f"filler line {n}" for n in range(1, 31)]
    lines[24] = "deploy with make release"
    ws = write(tmp_path, {"r/a.md": "\n".join(lines) + "\n"})
    trace = io.StringIO()
    result = search(ws, "How do we deploy?", trace=trace, passages="window")
    assert result.citations[0][0] == "r/a.md#L24-L30"
    log = trace.getvalue().splitlines()
    assert [line.split()[-1] for line in log if line.startswith("rank ")][:2] == [
        "r/a.md#L21-L30",
        "r/a.md#L11-L30",
    ]
    assert "quote r/a.md#L24-L30" in log


def test_path_words_count(tmp_path: Path) -> None:
    ws = write(tmp_path, {"r/CODEOWNERS": "docs/ @ada\n", "r/notes.md": "the owners met\n"})
    result = search(ws, "codeowners for docs")
    assert result.citations[0][0] == "r/CODEOWNERS#L1-L1"


def test_ties_are_broken_by_path_and_the_result_is_deterministic(tmp_path: Path) -> None:
    same = "The cache is flushed nightly.\n"
    ws = write(tmp_path, {"r/b.md": same, "r/a.md": same, "r/c/a.md": same})
    first = search(ws, "When is the cache flushed?")
    assert [uri for uri, _ in first.citations] == ["r/a.md#L1-L1", "r/b.md#L1-L1", "r/c/a.md#L1-L1"]
    for _ in range(3):
        assert search(ws, "When is the cache flushed?") == first


def test_no_match_gives_an_answer_without_citations(tmp_path: Path) -> None:
    ws = write(tmp_path, {"r/a.md": "nothing relevant\n"})
    result = search(ws, "Who owns billing?")
    assert result.citations == ()
    assert result.answer == "No passage in the workspace matches the question."
    assert search(tmp_path / "r", "the of").citations == ()


def test_binary_and_huge_files_are_skipped(tmp_path: Path) -> None:
    ws = write(
        tmp_path,
        {
            "r/logo.png": b"\x89PNG\0\0billing billing",
            "r/huge.txt": "billing " * (MAX_FILE_BYTES // 8 + 1),
            "r/ok.md": "billing is owned by ada\n",
        },
    )
    corpus = read_workspace(ws)
    assert corpus.paths == ["r/ok.md"]
    assert sorted(corpus.skipped) == ["r/huge.txt: larger than 2 MiB", "r/logo.png: binary"]
    assert search(ws, "billing").citations[0][0] == "r/ok.md#L1-L1"


def test_long_files_are_split_into_overlapping_windows(tmp_path: Path) -> None:
    lines = [f"filler {i}" for i in range(100)]
    lines[54] = "the retention policy is ninety days"
    text = "\n".join(lines) + "\n"
    ws = write(tmp_path, {"r/policy.md": text})
    result = search(ws, "retention policy", passages="window")
    uri, digest = result.citations[0]
    assert uri == "r/policy.md#L54-L60"  # a line before the hit, to the window's end
    assert digest == sha(text)
    assert result.passages[0].text.splitlines()[1] == "the retention policy is ninety days"


def test_non_ascii_words_match(tmp_path: Path) -> None:
    ws = write(tmp_path, {"r/a.md": "Die Größe ist fest.\n", "r/b.md": "other words\n"})
    assert search(ws, "größe").citations[0][0] == "r/a.md#L1-L1"


# Issue 24: the whole-passage mode reads the question's kind and composes its answer.


def test_stems_fold_inflections_and_agent_nouns() -> None:
    from flightdeck.arms.agents.bm25 import stem, stem_occurrences, terms_of

    assert {stem(w) for w in ("owns", "owner", "owners", "own")} == {"own"}
    assert {stem(w) for w in ("approve", "approvers", "approval", "approved")} == {"approv"}
    assert stem("policies") == stem("policy")
    assert stem("v1") == "v1"  # only plain ASCII words
    assert stem("Größe") == "Größe"
    flat = b" the owners own ownership owned policy policies shown "
    words = [flat[at + 1 : flat.find(b" ", at + 1)] for at in stem_occurrences(flat, "own")]
    assert words == [b"owners", b"own", b"owned"]  # "ownership" folds elsewhere, "shown" too
    assert len(stem_occurrences(flat, stem("policies"))) == 2  # "y" to "i": "polic" prefix
    assert terms_of("Who approves chart changes?") == [
        "approv",
        "chart",
        "chang",
        "approveschart",
        "chartchang",
    ]


@pytest.mark.parametrize(
    ("question", "given", "kind"),
    [
        pytest.param("Who owns billing?", None, "who-owns", id="who"),
        pytest.param("Which team maintains search?", None, "who-owns", id="which-team"),
        pytest.param("What is blocking the migration?", None, "blocker", id="blocking"),
        pytest.param("Why can't the export run yet?", None, "blocker", id="cant"),
        pytest.param("What changed in 3.8.0?", None, "what-changed", id="version"),
        pytest.param("Why did we pick Kafka?", None, "decision-why", id="why"),
        pytest.param("Why did we stop running our own Kafka?", None, "decision-why", id="own"),
        pytest.param("How do I rotate a key?", None, "how-to", id="default"),
        pytest.param("Who owns billing?", "blocker", "blocker", id="the-task-says"),
        pytest.param("Who owns billing?", "nonsense", "who-owns", id="unknown-given"),
    ],
)
def test_the_kind_is_the_tasks_else_read_from_the_words(
    question: str, given: str | None, kind: str
) -> None:
    from flightdeck.arms.agents.kinds import kind_of

    assert kind_of(question, given) == kind


def cited_lines_are_quoted(ws: Path, result: Any) -> bool:
    """Every citation's lines, read from the file, appear verbatim in the answer."""
    for uri, digest in result.citations:
        path, span = uri.split("#L")
        a, b = (int(n) for n in span.split("-L"))
        data = (ws / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest
        lines = data.decode().split("\n")[a - 1 : b]
        if "\n".join(lines).strip("\n") not in result.answer:
            return False
    return True


OLD_ADR = """\
# 3. Networking outline

## Status

Superseded by [ADR 0033](0033-ip-ranges.md)

## Decision

Staging uses 10.2.0.0/16 and production 10.3.0.0/16.
"""
NEW_ADR = """\
# 33. Networking outline

## Status

Accepted

## Context

The old ranges clash with the VPN to the data centre.

## Decision

Staging moves to 10.12.0.0/16 and production to 10.13.0.0/16.
"""


def test_a_superseded_record_is_followed_to_the_one_that_supersedes_it(tmp_path: Path) -> None:
    ws = write(
        tmp_path,
        {
            "r/docs/adr/0003-networking.md": OLD_ADR,
            "r/docs/adr/0033-ip-ranges.md": NEW_ADR,
            "r/README.md": "# Infra\n\nTerraform for the platform.\n",
        },
    )
    result = search(ws, "Which ranges do staging and production use?", kind="what-changed")
    assert "10.13.0.0/16" in result.answer  # 0033's decision, which the question never names
    assert "r/docs/adr/0033-ip-ranges.md#L11-L13" in [uri for uri, _ in result.citations]
    assert cited_lines_are_quoted(ws, result)


def test_a_decision_why_answer_quotes_the_records_context_and_consequences(
    tmp_path: Path,
) -> None:
    adr = (
        "# 7. Use Postgres for the job queue\n\n## Status\n\nAccepted\n\n## Context\n\n"
        "Redis lost jobs on failover twice in March.\n\n## Decision\n\nWe use Postgres "
        "with SKIP LOCKED for the job queue.\n\n## Consequences\n\nOne fewer service; "
        "the DBA team carries the pager.\n"
    )
    filler = "".join(f"# Note {n}\n\nThe job queue drains nightly.\n\n" for n in range(5))
    ws = write(tmp_path, {"r/docs/adr/0007-queue.md": adr, "r/notes.md": filler})
    result = search(ws, "Why is the job queue on Postgres?")  # the kind from its words
    for fact in ("failover twice", "SKIP LOCKED", "DBA team carries the pager"):
        assert fact in result.answer
    assert {uri.split("#")[0] for uri, _ in result.citations} == {"r/docs/adr/0007-queue.md"}
    assert cited_lines_are_quoted(ws, result)


def test_who_owns_reads_an_owners_file_whole(tmp_path: Path) -> None:
    owners = "# See the OWNERS docs\n\napprovers:\n  - ada\n  - grace\n\nreviewers:\n  - lin\n"
    code = "".join(f"// coredns provider helper {n}\nfunc f{n}() {{}}\n\n" for n in range(30))
    ws = write(
        tmp_path,
        {"r/provider/coredns/OWNERS": owners, "r/provider/coredns/coredns.go": code},
    )
    result = search(ws, "Who owns the CoreDNS provider?")
    assert result.citations[0][0] == "r/provider/coredns/OWNERS#L1-L8"
    assert all(name in result.answer for name in ("ada", "grace", "lin"))
    assert cited_lines_are_quoted(ws, result)


def test_a_release_question_finds_its_versions_section(tmp_path: Path) -> None:
    changelog = "# Changelog\n\n" + "".join(
        f"## [1.{n}.0]\n\n### Changed\n\n- Retries in the chart tuned (change {n}).\n\n"
        for n in range(9, 0, -1)
    )
    ws = write(tmp_path, {"r/CHANGELOG.md": changelog, "r/docs/retries.md": "# Retries\n\nx\n"})
    result = search(ws, "What changed in the chart in 1.4.0?")
    assert result.citations[0][0].startswith("r/CHANGELOG.md#")
    assert "## [1.4.0]" in result.passages[0].text
    assert "(change 4)" in result.answer


def test_a_cut_quote_cites_only_the_lines_it_quotes(tmp_path: Path) -> None:
    long = "## Steps\n\n" + "".join(
        f"{n}. run the backfill step {n} " + "x" * 60 + "\n" for n in range(55)
    )
    ws = write(tmp_path, {"r/docs/runbooks/backfill.md": long})
    result = search(ws, "How do I run the backfill?")
    uri = result.citations[0][0]
    end = int(uri.rsplit("-L", 1)[1])
    assert end < 57  # the quote stops before MAX_QUOTE_CHARS, and so does its span
    assert len(result.passages[0].text) <= 2400
    assert cited_lines_are_quoted(ws, result)


def test_a_long_codeowners_is_quoted_from_the_rule_that_matches(tmp_path: Path) -> None:
    rules = "".join(
        f"/terraform/environments/core-shared/app{n:03d}.tf @org/team-{n:03d} @org/audit-team\n"
        for n in range(80)
    )
    rules = rules.replace("app057.tf", "billing.tf")
    ws = write(tmp_path, {"r/.github/CODEOWNERS": "# Owners\n\n" + rules})
    result = search(ws, "Who owns the billing config in core shared?")
    assert "@org/team-057" in result.answer
    assert cited_lines_are_quoted(ws, result)


def test_a_docs_sites_markdown_template_is_read_by_sections(tmp_path: Path) -> None:
    page = (
        "---\ntitle: Revoke access\n---\n# <%= current_page.data.title %>\n\n## Steps\n\n"
        + "".join(f"Step {n}: check the console.\n" for n in range(40))
        + "\n## Caution\n\nStop the networking workflows first.\n"
    )
    ws = write(tmp_path, {"r/source/runbooks/revoke.html.md.erb": page})
    result = search(ws, "What caution applies to networking workflows?")
    quotes = {p.uri: p.text for p in result.passages}
    caution = quotes["r/source/runbooks/revoke.html.md.erb#L49-L51"]  # the section, whole
    assert caution.startswith("# <%= current_page.data.title %>\n## Caution")

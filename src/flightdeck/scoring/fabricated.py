"""What each fabricated citation is (#21): a real file that is not a valid source, or none.

The product page calls a citation fabricated when its uri matches none of the question's
valid sources, and the metrics count it so (``citations.fabricated``, unchanged). That
lumps a real file the answer cited wrongly with a file that does not exist, and "fabricated"
reads as invented. So each fabricated citation is also looked up in its repository at the
question's ``as_of``, and counted beside the total as exactly one of:

- ``fabricated_not_a_source``: the file exists at ``as_of``; it is just not a valid source;
- ``fabricated_no_such_file``: no such file at ``as_of`` (nor a repository of ``as_of``);
- ``fabricated_opaque``: an opaque uri (``https:`` ...), which cannot be looked up;
- ``fabricated_not_checked``: its repository is not at hand here, so it was not looked up.

The four add up to ``fabricated``. Only fabricated citations are looked up, through one
``git cat-file --batch`` process per repository, so an arm without them costs nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING

from flightdeck.errors import InputError
from flightdeck.suite.records import Question, parse_source_uri
from flightdeck.suite.repos import BlobReader, RepoSet

if TYPE_CHECKING:
    from flightdeck.scoring.outcomes import ScoreResult

NOT_A_SOURCE = "fabricated_not_a_source"
NO_SUCH_FILE = "fabricated_no_such_file"
OPAQUE = "fabricated_opaque"
NOT_CHECKED = "fabricated_not_checked"
SPLIT = (NOT_A_SOURCE, NO_SUCH_FILE, OPAQUE, NOT_CHECKED)
WORDS = {
    NOT_A_SOURCE: "not a valid source (file exists at as_of)",
    NO_SUCH_FILE: "no such file",
    OPAQUE: "not a repository file (an opaque uri)",
    NOT_CHECKED: "not looked up (repository not at hand)",
}


def with_fabricated_split(
    result: ScoreResult, *, repos: RepoSet, questions: Sequence[Question]
) -> ScoreResult:
    """``result`` with each arm's ``citations`` holding the split beside ``fabricated``.

    ``questions`` are the suite's, as scored (their ``as_of`` says where to look), and
    ``repos`` the project's (:attr:`flightdeck.project.Project.repos`).
    """
    import polars as pl

    from flightdeck.scoring.tables import ENGINE

    plans = [
        s.table.lazy()
        .select("id", "citations", "classes")
        .explode("citations", "classes")
        .filter(pl.col("classes") == "fabricated")
        .group_by("id", "citations", maintain_order=True)
        .len()
        for s in result.arms.values()
    ]
    found = pl.collect_all(plans, engine=ENGINE)  # every arm's in one go
    fabricated = {arm: frame.rows() for arm, frame in zip(result.arms, found, strict=True)}
    by_id = {q.id: q for q in questions} if any(fabricated.values()) else {}
    with _Lookup(repos) as lookup:
        arms = {
            arm: replace(
                s, citations=dict(s.citations) | split_counts(fabricated[arm], by_id, lookup)
            )
            for arm, s in result.arms.items()
        }
    return replace(result, arms=arms)


def split_counts(
    cited: list[tuple[str, str, int]], questions: dict[str, Question], lookup: _Lookup
) -> dict[str, int]:
    """How many fabricated citations fall in each part, from (question id, uri, how often)."""
    counts: Counter[str] = Counter()
    for qid, uri, times in cited:
        counts[lookup.kind(questions[qid], uri)] += times
    return {part: counts.get(part, 0) for part in SPLIT}


class _Lookup:
    """Files at a commit, asked through one git process per repository, each path once."""

    def __init__(self, repos: RepoSet) -> None:
        self.repos = repos
        self._stack = ExitStack()
        self._readers: dict[str, BlobReader | None] = {}
        self._seen: dict[tuple[str, str, str], bool] = {}
        self._kinds: dict[tuple[str, str], str] = {}  # (question id, uri): arms cite alike

    def __enter__(self) -> _Lookup:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def kind(self, question: Question, uri: str) -> str:
        """Which part of the split a fabricated ``uri`` of ``question`` falls in."""
        asked = (question.id, uri)
        if asked not in self._kinds:
            self._kinds[asked] = self._kind(question, uri)
        return self._kinds[asked]

    def _kind(self, question: Question, uri: str) -> str:
        parsed = parse_source_uri(uri)
        if parsed is None:
            return OPAQUE
        if parsed.repo not in question.as_of:
            return NO_SUCH_FILE  # a repository the question does not pin: nothing there
        reader = self._reader(parsed.repo)
        if reader is None:
            return NOT_CHECKED
        key = (parsed.repo, question.as_of[parsed.repo], parsed.path)
        if key not in self._seen:
            self._seen[key] = reader.read(key[1], key[2]) is not None
        return NOT_A_SOURCE if self._seen[key] else NO_SUCH_FILE

    def _reader(self, name: str) -> BlobReader | None:
        if name not in self._readers:
            try:
                repo = self.repos.get(name)
            except InputError:  # not configured here, or not at this path
                self._readers[name] = None
            else:
                self._readers[name] = self._stack.enter_context(repo.blobs())
        return self._readers[name]

"""The rating core and its web server: blind order, durable writes, resume, the token."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.error import HTTPError

import pytest
from tests.builders import BuiltProject, answer, build_project, sha
from tests.gitrepo import make_git_repo

from flightdeck.errors import BadLabel, InputError
from flightdeck.project.modes import ToRate
from flightdeck.project.paths import ProjectPaths
from flightdeck.project.suite_folder import SuiteFolder
from flightdeck.rating.items import order_key
from flightdeck.rating.server import RatingServer
from flightdeck.rating.session import RatingSession
from flightdeck.suite.records import read_labels
from flightdeck.suite.repos import RepoSet

ARMS = ("arm-alpha", "arm-beta")
PAGE = Path(__file__).resolve().parents[2] / "src" / "flightdeck" / "rating" / "page"
CLOCK = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def with_answers(project: BuiltProject) -> BuiltProject:
    """Both arms answer all four questions; arm-beta's q1 cites a span and odd uris."""
    paths = {
        "q1": "docs/adr/0001-database.md",
        "q2": "docs/runbooks/deploy.md",
        "q3": "CODEOWNERS",
        "q4": "CHANGELOG.md",
    }
    project.write_answers(
        ARMS[0], [answer(project, q, f"alpha says {q}", [p]) for q, p in paths.items()]
    )
    beta = [answer(project, q, f"beta says {q}", [p]) for q, p in paths.items()]
    beta[0]["citations"] = [
        {"uri": "sdlc/docs/adr/0001-database.md#L3", "sha256": sha("x")},
        {"uri": "https://wiki.example/adr-1", "sha256": sha("y")},
        {"uri": "sdlc/docs/gone.md", "sha256": sha("z")},
    ]
    project.write_answers(ARMS[1], beta)
    return project


@pytest.fixture
def rated(project: BuiltProject) -> BuiltProject:
    return with_answers(project)


def session(project: BuiltProject, rater: str = "ada") -> RatingSession:
    repos = {"sdlc": project.repo, "big": project.root / "repos" / "big"}
    suite = project.folder  # in its project: the cache holds the order secret
    return RatingSession(suite, rater, RepoSet(repos, project.root / "cache"), clock=lambda: CLOCK)


def labels_of(project: BuiltProject, arm: str) -> list[dict[str, Any]]:
    path = project.suite / "labels" / f"{arm}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def all_labels(project: BuiltProject) -> list[dict[str, Any]]:
    return [label | {"arm": arm} for arm in ARMS for label in labels_of(project, arm)]


# --- order and blindness -----------------------------------------------------------------


def test_order_is_seeded_by_suite_and_rater(rated: BuiltProject) -> None:
    with session(rated, "ada") as a1, session(rated, "ada") as a2, session(rated, "bob") as b:
        ada = [a1.view(i).answer for i in range(a1.total)]
        assert ada == [a2.view(i).answer for i in range(a2.total)]
        bob = [b.view(i).answer for i in range(b.total)]
    assert sorted(ada) == sorted(bob)
    assert ada != bob
    assert len(ada) == 8
    expected = sorted(
        ((arm, q) for arm in ARMS for q in ("q1", "q2", "q3", "q4")),
        key=lambda pair: order_key("demo-v1", "ada", *pair, secret=secret_of(rated)),
    )
    assert ada == [f"{'alpha' if arm == ARMS[0] else 'beta'} says {q}" for arm, q in expected]


def secret_of(project: BuiltProject) -> bytes:
    return ProjectPaths(project.root).rating_order_key.read_bytes()


def test_order_key_is_hmac_sha256_of_canonical_json() -> None:
    import hashlib
    import hmac

    message = b'["s","r","a","q"]'
    assert order_key("s", "r", "a", "q", secret=b"k") == (
        hmac.new(b"k", message, hashlib.sha256).hexdigest()
    )


def test_two_projects_with_the_same_names_get_unrelated_orders(tmp_path: Path) -> None:
    """Same suite, rater, arms and answers: only the projects' secrets differ."""
    orders, secrets = [], []
    for name in ("one", "two"):
        project = with_answers(build_project(tmp_path / name))
        with session(project) as rater:
            orders.append([rater.view(i).answer for i in range(rater.total)])
        secrets.append(secret_of(project))
        with session(project) as again:  # the secret persists: a restart keeps the order
            assert [again.view(i).answer for i in range(again.total)] == orders[-1]
    assert sorted(orders[0]) == sorted(orders[1])
    assert orders[0] != orders[1]
    assert secrets[0] != secrets[1]
    assert all(len(s) == 32 for s in secrets)
    unkeyed = sorted(orders[0], key=lambda text: text)  # nothing public predicts either order
    assert unkeyed not in orders


def test_the_page_never_holds_the_order_secret(rated: BuiltProject) -> None:
    with session(rated) as rater:
        secret = secret_of(rated)
        shown = json.dumps([rater.view(i).to_json() for i in range(rater.total)])
        page = "".join(p.read_text() for p in PAGE.iterdir() if p.is_file())
    for text in (shown, page):
        assert secret.hex() not in text
        assert secret.hex().upper() not in text
        assert secret.decode("latin-1") not in text
    assert ProjectPaths(rated.root).rating_order_key.stat().st_mode & 0o077 == 0


def test_views_and_ids_never_name_the_arm(rated: BuiltProject) -> None:
    with session(rated) as first, session(rated) as second:
        views = [first.view(i).to_json() for i in range(first.total)]
        text = json.dumps(views)
        for arm in ARMS:
            assert arm not in text
        # Only the answer itself, which the arm wrote, may give the arm away: no other field
        # of any view carries a trace of "alpha" or "beta" (the arms' answer texts say so).
        assert any("alpha" in v["answer"] for v in views)
        assert any("beta" in v["answer"] for v in views)
        for view in views:
            rest = json.dumps({k: v for k, v in view.items() if k != "answer"})
            assert "alpha" not in rest, rest
            assert "beta" not in rest, rest
        ids = [v["item"] for v in views]
        assert len(set(ids)) == len(ids)
        # fresh keys at every start: ids cannot be matched across sessions to guess arms
        assert set(ids).isdisjoint(first_ids(second))
    assert all("sha256" not in json.dumps(v["citations"]) for v in views)


def first_ids(s: RatingSession) -> set[str]:
    return {s.view(i).item_id for i in range(s.total)}


def test_other_raters_labels_are_never_shown(rated: BuiltProject) -> None:
    with session(rated, "bob") as bob:
        for i in range(bob.total):
            bob.save(i, True, [1])
    with session(rated, "ada") as ada:
        assert ada.first_unlabelled() == 0
        assert ada.labelled == 0
        assert all(ada.view(i).own is None for i in range(ada.total))


# --- cited lines -------------------------------------------------------------------------


def beta_q1(s: RatingSession) -> Any:
    return next(v for v in (s.view(i) for i in range(s.total)) if v.answer == "beta says q1")


def test_cited_lines_span_opaque_and_missing(rated: BuiltProject) -> None:
    with session(rated) as s:
        span, opaque, missing = beta_q1(s).citations
    assert [(n.number, n.text, n.cited) for n in span.lines] == [
        (1, "# ADR 1: Postgres", False),
        (2, "", False),
        (3, "We chose Postgres for JSONB support.", True),
    ]
    assert span.note == ""
    assert (opaque.lines, opaque.note) == ((), "not a repository file; not shown")
    assert (missing.lines, missing.note) == ((), "not found at as_of")


def test_lines_are_read_at_as_of_not_head(rated: BuiltProject) -> None:
    # the later commit rewrote the ADR; the rater must see it as the arm could
    with session(rated) as s:
        view = next(s.view(i) for i in range(s.total) if s.view(i).answer == "alpha says q1")
    assert view.citations[0].lines[0].text == "# ADR 1: Postgres"


@pytest.mark.parametrize(
    ("uri", "first", "last", "cited", "note"),
    [
        pytest.param("big.txt#L100-L102", 97, 105, [100, 101, 102], "", id="span-with-context"),
        pytest.param("big.txt#L1", 1, 4, [1], "", id="first-line"),
        pytest.param("big.txt#L5000", 4997, 5000, [5000], "", id="last-line"),
        pytest.param("big.txt", 1, 40, [], "", id="whole-file-first-page"),
        pytest.param(
            "big.txt#L4999-L5010",
            4996,
            5000,
            [4999, 5000],
            "the span ends past the end of the file (5000 lines)",
            id="ends-past-end",
        ),
        pytest.param(
            "big.txt#L6000",
            4998,
            5000,
            [],
            "the span starts past the end of the file (5000 lines)",
            id="starts-past-end",
        ),
        pytest.param("big.txt#L1-L1000", 1, 40, list(range(1, 41)), "", id="long-span-first-page"),
    ],
)
def test_cited_line_windows(
    tmp_path: Path, uri: str, first: int, last: int, cited: list[int], note: str
) -> None:
    project = suite_over_big_file(tmp_path, [f"big/{uri}"])
    with session(project) as s:
        (view,) = s.view(0).citations
    assert (view.lines[0].number, view.lines[-1].number) == (first, last)
    assert [line.number for line in view.lines if line.cited] == cited
    assert view.lines[0].text == f"line {first}"
    assert view.note == note


def suite_over_big_file(root: Path, uris: list[str], *, other_repo: bool = False) -> BuiltProject:
    """One question over a repository ``big`` holding a 5,000-line file."""
    project = build_project(root)
    (commit,) = make_git_repo(
        root / "repos" / "big", [{"big.txt": "".join(f"line {i}\n" for i in range(1, 5001))}]
    )
    question = {
        "id": "q1",
        "question": "What is on line 100?",
        "kind": "how-to",
        "as_of": {"big": commit},
        "scope": [],
    }
    (project.suite / "questions.jsonl").write_text(json.dumps(question) + "\n")
    key = json.loads((project.suite / "keys.jsonl").read_text().splitlines()[0])
    (project.suite / "keys.jsonl").write_text(json.dumps(key) + "\n")
    cites = [{"uri": uri, "sha256": sha("x")} for uri in uris]
    project.write_answers("solo", [{"id": "q1", "answer": "line 100", "citations": cites}])
    return project


def test_citation_of_a_repo_outside_as_of_is_shown_as_text(tmp_path: Path) -> None:
    project = suite_over_big_file(tmp_path, ["sdlc/CODEOWNERS"])
    with session(project) as s:
        (view,) = s.view(0).citations
    assert view.note == "repository 'sdlc' is not in this question's as_of; not shown"


# --- writes ------------------------------------------------------------------------------


def test_each_label_is_appended_at_once(rated: BuiltProject) -> None:
    with session(rated) as s:
        first = s.first_unlabelled()
        assert first == 0
        result = s.save(0, True, [])
        assert result.written
        assert result.next_position == 1
        (label,) = all_labels(rated)
        view = s.view(0)
    arm = label.pop("arm")
    assert label == {
        "id": view.question_id,
        "rater": "ada",
        "correct": True,
        "unsupported": [],
        "answer_sha256": sha_of_answer(rated, arm, view.question_id),
        "time": "2026-11-30T12:00:00Z",
    }
    path = rated.suite / "labels" / f"{arm}.jsonl"
    assert read_labels(path, ["q1", "q2", "q3", "q4"])[0].answer_sha256 == label["answer_sha256"]


def test_a_rater_name_differing_only_in_case_is_refused_before_any_label(
    rated: BuiltProject,
) -> None:
    """'Ada' would rate everything again beside 'ada', and scoring would then refuse both."""
    with session(rated) as s:
        s.save(0, True, [])
    (arm,) = {label["arm"] for label in all_labels(rated)}
    before = (rated.suite / "labels" / f"{arm}.jsonl").read_bytes()
    with pytest.raises(InputError) as caught:
        session(rated, "Ada")
    assert str(caught.value) == (
        f"--rater: 'Ada' differs only in case from rater 'ada' in "
        f"{rated.suite / 'labels' / f'{arm}.jsonl'}; rate as --rater 'ada' (one name for one "
        "person)"
    )
    assert (rated.suite / "labels" / f"{arm}.jsonl").read_bytes() == before


def sha_of_answer(project: BuiltProject, arm: str, qid: str) -> str:
    from flightdeck.suite.records import read_answers

    answers = read_answers(project.suite / "answers" / f"{arm}.jsonl", ["q1", "q2", "q3", "q4"])
    return next(a.sha256 for a in answers if a.id == qid)


def test_unsupported_numbers_become_the_cited_uris(rated: BuiltProject) -> None:
    with session(rated) as s:
        pos = beta_q1(s).position
        s.save(pos, False, [3, 1, 3])
        own = s.view(pos).own
    (label,) = labels_of(rated, ARMS[1])
    assert label["unsupported"] == ["sdlc/docs/adr/0001-database.md#L3", "sdlc/docs/gone.md"]
    assert own is not None
    assert own.unsupported == (1, 3)


def test_a_citation_number_out_of_range_is_refused(rated: BuiltProject) -> None:
    with session(rated) as s:
        # the order is keyed by the project's own secret (#20): find the item by its citations
        pos = next(p for p in range(s.total) if len(s.view(p).citations) == 1)
        with pytest.raises(BadLabel, match=r"citation 2 does not exist"):
            s.save(pos, True, [2])
    assert all_labels(rated) == []


def test_a_changed_label_replaces_the_old_line(rated: BuiltProject) -> None:
    with session(rated, "bob") as bob:
        for i in range(bob.total):
            bob.save(i, False, [])
    before = {arm: labels_of(rated, arm) for arm in ARMS}
    with session(rated) as s:
        # the order is keyed by the project's secret (#20): start at an item with a citation
        first = next(p for p in range(s.total) if s.view(p).citations)
        other = next(p for p in range(s.total) if p != first)
        s.save(first, True, [])
        s.save(other, True, [])
        s.save(first, False, [1])  # back to the first, changed
        arm_of_0 = next(a for a in ARMS if any(lb["rater"] == "ada" for lb in labels_of(rated, a)))
        view = s.view(first)
    mine = [lb for lb in all_labels(rated) if lb["rater"] == "ada"]
    assert len(mine) == 2
    assert len({(lb["arm"], lb["id"]) for lb in mine}) == 2
    changed = next(lb for lb in mine if lb["id"] == view.question_id and not lb["correct"])
    assert changed["unsupported"] == [view.citations[0].uri]
    # bob's lines are untouched, in their order
    for arm in ARMS:
        assert [lb for lb in labels_of(rated, arm) if lb["rater"] == "bob"] == before[arm]
    assert arm_of_0 in ARMS


def test_an_unchanged_label_is_not_rewritten(rated: BuiltProject) -> None:
    with session(rated) as s:
        s.save(0, True, [])
        files = {p: p.read_bytes() for p in (rated.suite / "labels").glob("*.jsonl")}
        result = s.save(0, True, [])
    assert not result.written
    assert {p: p.read_bytes() for p in files} == files


def test_restart_resumes_at_the_first_unlabelled(rated: BuiltProject) -> None:
    with session(rated) as s:
        for i in range(3):
            s.save(i, i % 2 == 0, [])
    with session(rated) as again:
        assert again.first_unlabelled() == 3
        assert again.labelled == 3
        own = again.view(1).own
        assert own is not None
        assert own.correct is False
        assert own.time == "2026-11-30T12:00:00Z"
        for i in range(3, again.total):
            result = again.save(i, True, [])
        assert result.next_position is None
    assert len(all_labels(rated)) == 8


def test_a_label_on_an_older_answer_counts_as_not_given(rated: BuiltProject) -> None:
    with session(rated) as s:
        s.save(0, True, [])
        qid = s.view(0).question_id
    (arm,) = [a for a in ARMS if labels_of(rated, a)]
    path = rated.suite / "answers" / f"{arm}.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        if record["id"] == qid:
            record["answer"] += " (edited)"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with session(rated) as s:
        assert s.first_unlabelled() == 0
        assert s.view(0).own is None
        s.save(0, False, [])
    (label,) = labels_of(rated, arm)
    assert label["correct"] is False
    assert label["answer_sha256"] == sha_of_answer(rated, arm, qid)


def test_a_torn_last_line_stays_apart_from_the_next_label(rated: BuiltProject) -> None:
    with session(rated) as s:
        s.save(0, True, [])
        (arm,) = [a for a in ARMS if labels_of(rated, a)]
        path = rated.suite / "labels" / f"{arm}.jsonl"
        later = next(i for i in range(1, s.total) if s.view(i).answer.startswith(arm[4:]))
        path.write_bytes(path.read_bytes() + b'{"id": "q')  # a kill mid-write by another tool
        s.save(later, True, [])
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == b'{"id": "q'
    assert json.loads(lines[2])["rater"] == "ada"


def test_two_raters_writing_at_once_lose_nothing(rated: BuiltProject) -> None:
    sessions = [session(rated, name) for name in ("ada", "bob", "cy")]

    def rate_all(s: RatingSession) -> None:
        for i in range(s.total):
            s.save(i, True, [])
        for i in range(s.total):  # every label changed: rewrites race with appends
            s.save(i, False, [])

    threads = [threading.Thread(target=rate_all, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in sessions:
        s.close()
    labels = all_labels(rated)
    assert len(labels) == 24
    assert all(lb["correct"] is False for lb in labels)


# --- bad input ---------------------------------------------------------------------------


def test_no_answers_is_an_input_error(project: BuiltProject) -> None:
    with pytest.raises(InputError, match=r"answers: no answers/<arm>.jsonl to rate"):
        session(project)


def test_an_unconfigured_repository_is_an_input_error(rated: BuiltProject) -> None:
    with pytest.raises(InputError, match=r"repository 'sdlc' is not configured"):
        RatingSession(rated.folder, "ada", RepoSet({}, rated.root / "cache"))


def test_a_missing_as_of_commit_is_an_input_error(rated: BuiltProject, tmp_path: Path) -> None:
    other = tmp_path / "other"
    make_git_repo(other, [{"a.txt": "a\n"}])
    with pytest.raises(
        InputError, match=r"questions.jsonl:1: commit [0-9a-f]{40} is not in repository 'sdlc'"
    ):
        RatingSession(rated.folder, "ada", RepoSet({"sdlc": other}, rated.root / "cache"))


@pytest.mark.parametrize("rater", ["", "  ", " ada"], ids=["empty", "blank", "padded"])
def test_a_bad_rater_name_is_an_input_error(rated: BuiltProject, rater: str) -> None:
    with pytest.raises(InputError, match=r"--rater: rater .* must be a non-empty name"):
        session(rated, rater)


def test_a_duplicate_label_in_the_file_is_an_input_error(rated: BuiltProject) -> None:
    label = {"id": "q1", "rater": "ada", "correct": True, "unsupported": []}
    rated.write_labels(ARMS[0], [label, label])
    with pytest.raises(InputError, match=r"arm-alpha.jsonl:2: duplicate label by rater 'ada'"):
        session(rated)


# --- the server --------------------------------------------------------------------------


@pytest.fixture
def server(rated: BuiltProject) -> Iterator[RatingServer]:
    with session(rated) as s:
        srv = RatingServer(s)
        thread = threading.Thread(target=srv.serve)
        thread.start()
        try:
            yield srv
        finally:
            srv.finish()
            thread.join(timeout=120)


def call(url: str, body: dict[str, Any] | None = None, host: str | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data)
    if host:
        request.add_header("Host", host)
    with urllib.request.urlopen(request, timeout=120) as response:
        raw = response.read()
        kind = response.headers["Content-Type"]
    return json.loads(raw) if kind.startswith("application/json") else raw.decode()


def status_of(url: str, host: str | None = None) -> int:
    with pytest.raises(HTTPError) as info:
        call(url, host=host)
    info.value.close()
    return info.value.code


def api(server: RatingServer, path: str) -> str:
    sep = "&" if "?" in path else "?"
    return f"http://127.0.0.1:{server.port}{path}{sep}token={server.token}"


def test_the_address_is_local_with_a_random_token(server: RatingServer) -> None:
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
    assert len(server.token) >= 32
    assert server.port > 0


@pytest.mark.parametrize(
    "path",
    ["/", "/app.js", "/style.css", "/api/start", "/api/item?pos=0", "/nothing"],
)
def test_requests_without_the_token_are_refused(server: RatingServer, path: str) -> None:
    base = f"http://127.0.0.1:{server.port}{path}"
    assert status_of(base) == 403
    sep = "&" if "?" in path else "?"
    assert status_of(f"{base}{sep}token=wrong{server.token}") == 403


def test_a_foreign_host_header_is_refused(server: RatingServer) -> None:
    assert status_of(api(server, "/api/start"), host="evil.example") == 403


def test_the_page_names_no_arm(server: RatingServer) -> None:
    page = call(server.url)
    assert "<title>Rating · demo-v1</title>" in page
    assert f"app.js?token={server.token}" in page
    for path in ("/app.js", "/style.css", "/api/start"):
        text = json.dumps(call(api(server, path)))
        assert all(arm not in text for arm in ARMS)


def test_label_then_next_over_http(server: RatingServer, rated: BuiltProject) -> None:
    start = call(api(server, "/api/start"))
    assert (start["rater"], start["total"], start["labelled"]) == ("ada", 8, 0)
    item = start["item"]
    reply = call(
        api(server, "/api/label"), {"item": item["item"], "correct": True, "unsupported": []}
    )
    assert reply["saved"] is True
    assert reply["next"]["position"] == 1
    assert reply["labelled"] == 1
    assert len(all_labels(rated)) == 1
    back = call(api(server, "/api/item?pos=0"))
    assert back["own"] == {
        "correct": True,
        "unsupported": [],
        "time": "2026-11-30T12:00:00Z",
        "facts": None,
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param({"item": "nope", "correct": True, "unsupported": []}, "unknown item", id="id"),
        pytest.param({"item": "x", "correct": "yes", "unsupported": []}, "correct true", id="bool"),
        pytest.param({"item": "x", "correct": True, "unsupported": "1"}, "list of", id="list"),
    ],
)
def test_a_bad_label_request_is_a_400(server: RatingServer, body: Any, message: str) -> None:
    with pytest.raises(HTTPError) as info:
        call(api(server, "/api/label"), body)
    error = json.loads(info.value.read())
    info.value.close()
    assert info.value.code == 400
    assert message in error["error"]


def test_after_the_last_label_the_review_list_then_finish_stops_the_server(
    rated: BuiltProject,
) -> None:
    with session(rated) as s:
        for i in range(s.total - 1):
            s.save(i, i % 2 == 0, [])
        srv = RatingServer(s)
        thread = threading.Thread(target=srv.serve)
        thread.start()
        item = call(api(srv, "/api/start"))["item"]
        reply = call(
            api(srv, "/api/label"), {"item": item["item"], "correct": True, "unsupported": []}
        )
        assert reply["next"] is None
        assert thread.is_alive()  # review mode: the rater may still revise any label
        review = call(api(srv, "/api/review"))
        assert (review["labelled"], review["total"]) == (s.total, s.total)
        assert [r["position"] for r in review["items"]] == list(range(s.total))
        verdicts = [r["correct"] for r in review["items"]]
        assert verdicts == [i % 2 == 0 for i in range(s.total - 1)] + [True]
        assert all("arm" not in r for r in review["items"])  # blind there too
        # Revising from the review list rewrites the label in place.
        first = call(api(srv, "/api/item?pos=0"))
        call(api(srv, "/api/label"), {"item": first["item"], "correct": False, "unsupported": []})
        assert call(api(srv, "/api/review"))["items"][0]["correct"] is False
        assert call(api(srv, "/api/finish"), {})["finished"] is True
        thread.join(timeout=120)
        assert not thread.is_alive()
    assert srv.finished.is_set()


def test_a_port_in_use_is_an_input_error(server: RatingServer) -> None:
    with pytest.raises(InputError, match=rf"--port: cannot serve on 127.0.0.1:{server.port} "):
        RatingServer(server.session, port=server.port)


# --- the judge, after rating (#14) -------------------------------------------------------


def test_the_page_shows_a_judge_disagreeing_only_after_the_rater_rated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner
    from tests.judging import N, build_judge_project, write_arm

    from flightdeck.cli import cli

    suite = build_judge_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["knowledge", "seal", str(suite)]).exit_code == 0
    write_arm(suite, "arm", [i % 2 == 0 for i in range(N)])
    judged = runner.invoke(
        cli, ["knowledge", "judge", str(suite), "--judge", "facts", "--arm", "arm"]
    )
    assert judged.exit_code == 0, judged.output
    with RatingSession(
        SuiteFolder(suite),
        "ana",
        RepoSet({"sdlc": tmp_path / "repos" / "sdlc"}, tmp_path / "cache"),
    ) as s:
        srv = RatingServer(s)
        thread = threading.Thread(target=srv.serve)
        thread.start()
        try:
            item = call(api(srv, "/api/start"))["item"]
            assert item["judges"] == []
            assert item["own"] is None
            facts_say = int(item["question_id"][1:]) % 2 == 0
            reply = call(
                api(srv, "/api/label"),
                {"item": item["item"], "correct": not facts_say, "unsupported": []},
            )
            assert reply["rated"]["question_id"] == item["question_id"]
            [note] = reply["rated"]["judges"]
            assert note["judge"] == "facts"
            assert note["correct"] is facts_say
            assert note["missing"] == (
                [] if facts_say else [f"Widgets value {item['question_id'][1:].lstrip('0') or '0'}"]
            )
            assert reply["next"]["judges"] == []  # the next answer is not rated yet
            again = call(api(srv, f"/api/item?pos={item['position']}"))
            assert again["judges"] == [note]  # going back shows it too
            nxt = reply["next"]
            agree = int(nxt["question_id"][1:]) % 2 == 0
            reply = call(
                api(srv, "/api/label"), {"item": nxt["item"], "correct": agree, "unsupported": []}
            )
            assert reply["rated"]["judges"] == []  # the judge agreed: nothing to show
        finally:
            srv.finish()
            thread.join(timeout=120)
    # The page itself draws the notes (app.js) only from what the server sent after rating.
    app = (Path(__file__).parents[2] / "src/flightdeck/rating/page/app.js").read_text()
    assert "showAfter(reply.rated)" in app
    assert (
        'id="after"'
        in (Path(__file__).parents[2] / "src/flightdeck/rating/page/index.html").read_text()
    )


# --- one arm, adjudication (#15) ----------------------------------------------------------


def test_arm_limits_the_items_to_that_arm(rated: BuiltProject) -> None:
    repos = RepoSet({"sdlc": rated.repo}, rated.root / "cache")
    with RatingSession(rated.folder, "ada", repos, arms=["arm-beta"]) as s:
        assert s.total == 4
        assert {s.view(i).answer for i in range(4)} == {f"beta says q{n}" for n in range(1, 5)}
    with pytest.raises(InputError, match=r"--arm: no answers for arm 'gamma'; the arms are "):
        RatingSession(rated.folder, "ada", repos, arms=["gamma"])


def test_adjudication_is_the_answers_the_first_two_raters_split_on(rated: BuiltProject) -> None:
    votes = {"ada": [True, True, False, False], "bob": [True, False, True, False]}
    rated.write_labels(
        "arm-alpha",
        [
            {"id": f"q{n + 1}", "rater": r, "correct": c, "unsupported": []}
            for r, marks in votes.items()
            for n, c in enumerate(marks)
        ]
        + [{"id": "q1", "rater": "dee", "correct": False, "unsupported": []}],
    )
    repos = RepoSet({"sdlc": rated.repo}, rated.root / "cache")
    with RatingSession(rated.folder, "cy", repos, to_rate=ToRate.SPLIT_ANSWERS) as s:
        # ada and bob split on q2 and q3 of arm-alpha; dee (third) does not count; arm-beta
        # has no labels, so nothing of it to adjudicate.
        assert sorted(s.view(i).question_id for i in range(s.total)) == ["q2", "q3"]
    rated.write_labels("arm-alpha", [])
    with pytest.raises(InputError, match="the first two raters split on no answer"):
        RatingSession(rated.folder, "cy", repos, to_rate=ToRate.SPLIT_ANSWERS)

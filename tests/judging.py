"""Fixtures for the judge tests: a 40-question suite, and a scripted OpenAI-compatible server.

The suite's 40 questions each require one fact, ``"<word> value <i>"``. Arm ``rated`` (two
people, ``ana`` and ``ravi``) and arm ``fresh`` (no labels) answer every question; whether an
answer states its fact, and what the people said, follow the patterns below, so the facts
judge's agreement with the people is known in advance.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests import loopback
from tests.builders import sha, write_jsonl
from tests.gitrepo import make_git_repo

from flightdeck.suite.records import KINDS

N = 40
DOC = "docs/values.md"
DOC_TEXT = "".join(f"- value {i}\n" for i in range(N))


def fact(i: int) -> str:
    return f"Widgets value {i}"


def qid(i: int) -> str:
    return f"q{i:02d}"


def build_judge_project(root: Path) -> Path:
    """params.yaml (with a facts judge), the repository and an unsealed 40-question suite."""
    as_of, _ = make_git_repo(root / "repos" / "sdlc", [{DOC: DOC_TEXT}, {DOC: "changed\n"}])
    suite = root / "suites" / "judged-v1"
    questions = [
        {
            "id": qid(i),
            "question": f"What is value {i}?",
            "kind": KINDS[i % len(KINDS)],
            "as_of": {"sdlc": as_of},
            "scope": [],
        }
        for i in range(N)
    ]
    keys = [
        {
            "id": qid(i),
            "answer_key": f"{fact(i)}.",
            "required_facts": [fact(i)],
            "valid_sources": [{"uri": f"sdlc/{DOC}", "sha256": sha(DOC_TEXT)}],
        }
        for i in range(N)
    ]
    write_jsonl(suite / "questions.jsonl", questions)
    write_jsonl(suite / "keys.jsonl", keys)
    (root / "params.yaml").write_text(
        "seed: 0\nresamples: 2000\nmin_raters: 2\nholdouts: holdouts\n"
        "repos:\n  sdlc: repos/sdlc\n"
        "judges:\n  facts:\n    kind: facts\n"
    )
    return suite


def answer_text(i: int, states: bool) -> str:
    # Plural, case and punctuation differ from the fact, which the facts judge folds away.
    return f"The WIDGETS' value \u2014 {i}: as documented." if states else f"Not documented ({i})."


def write_arm(suite: Path, arm: str, states: list[bool], *, meta: bool = True) -> list[dict]:
    records = [
        {
            "id": qid(i),
            "answer": answer_text(i, states[i]),
            "citations": [{"uri": f"sdlc/{DOC}", "sha256": sha(DOC_TEXT)}],
        }
        for i in range(N)
    ]
    write_jsonl(suite / "answers" / f"{arm}.jsonl", records)
    if meta:
        (suite / "answers" / f"{arm}.meta.json").write_text(
            json.dumps(
                {
                    "runner": "harness",
                    "by": "test",
                    "date": "2026-11-01",
                    "model": "none",
                    "knowledge_snapshot": {},
                }
            )
        )
    return records


def write_people(suite: Path, arm: str, ana: list[bool], ravi: list[bool]) -> None:
    labels = [
        {"id": qid(i), "rater": rater, "correct": votes[i], "unsupported": []}
        for rater, votes in (("ana", ana), ("ravi", ravi))
        for i in range(N)
    ]
    write_jsonl(suite / "labels" / f"{arm}.jsonl", labels)


class ScriptedModel(loopback.LoopbackServer):
    """An OpenAI-compatible chat completions server on 127.0.0.1, scripted by a function.

    ``reply(request_json) -> dict`` gives the tool-call arguments (or None for a plain text
    reply). ``requests`` keeps every request body; ``hold`` (an Event, when set) makes each
    request after the ``hold_after``-th wait until it is released.
    """

    def __init__(self, reply: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.hold_after: int | None = None
        self.release = threading.Event()
        super().__init__()

    def respond(self, request: loopback.Request) -> loopback.Reply:
        body = request.body
        with self.lock:
            self.requests.append(body)
            count = len(self.requests)
        if self.hold_after is not None and count > self.hold_after:
            self.release.wait(30)
        args = self.reply(body)
        message: dict[str, Any] = {"role": "assistant", "content": "no tool"}
        if args is not None:
            message = loopback.tool_call_message(f"call_{count}", "record_verdict", args)
        return 200, loopback.chat_completion(
            count, body.get("model", "?"), message, loopback.chat_usage(1, 1)
        )

    def close(self) -> None:
        self.release.set()
        super().close()


RUBRIC = "Judge the answer.\nQUESTION: {question}\nKEY: {answer_key}\nFACTS:\n{facts}\nANSWER:\n{answer}\n"


def substring_verdict(request: dict[str, Any]) -> dict[str, Any]:
    """A scripted model: each numbered fact is present when its last word is in the answer."""
    prompt = loopback.content_text(request["messages"][-1]["content"])
    facts_block = prompt.split("FACTS:\n", 1)[1].split("ANSWER:\n", 1)[0]
    answer = prompt.split("ANSWER:\n", 1)[1]
    facts = []
    for line in facts_block.strip().splitlines():
        number, _, text = line.partition(". ")
        word = text.split()[-1]
        present = f" {word}:" in answer
        facts.append({"number": int(number), "present": present, "quote": word if present else ""})
    return {"facts": facts, "contradicts_key": False}

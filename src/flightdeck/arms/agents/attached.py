"""The chat-product baseline through the API: the documents attached, the question, no tools.

What a person does in a chat product ("a project with the documents attached"), as a harness:

1. every file of the attachment folder goes into the model's context under its name, the
   name relative to the folder (``sdlc/docs/adr/0001.md``), laid out as
   :mod:`flightdeck.arms.snapshot` expects (the folder ``import-answers --snapshot``
   takes); binary and non-UTF-8 files, and any file holding a sealed-key canary, are left
   out and listed in the trace;
2. the question follows; one model call (:func:`flightdeck.arms.agents.inspect_call.ask`,
   which counts the prompt first and refuses what does not fit);
3. the answer ends with a ``Sources:`` list of attached file names; each is cited as that
   name and hashed from the attached bytes (:func:`~flightdeck.arms.snapshot.hash_from_folder`,
   the same mapping ``import-answers`` uses), so an attachment older than ``as_of`` scores
   stale. A name outside the question's ``as_of`` repositories cannot be a ``<repo>/<path>``
   citation: it is cited as the opaque ``attachment:<name>`` (scored fabricated), and a name
   that was not attached gets the hash of no bytes, as ``import-answers`` records it.

The result carries ``usage`` (tokens, cached tokens) and ``provenance`` (model, the folder's
sha256 and file count, the prompt's sha256) for the runner; see :mod:`flightdeck.arms.protocol`.
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from flightdeck.arms.agents.dry_run import attached_outputs, is_dry_run
from flightdeck.arms.snapshot import (
    EMPTY_SHA256,
    folder_files,
    hash_from_folder,
    snapshot_record,
)
from flightdeck.errors import InputError
from flightdeck.suite.records import CANARY_PREFIX, parse_source_uri

if TYPE_CHECKING:
    from inspect_ai.model import Model

    from flightdeck.arms.agents.inspect_call import Reply

HARNESS = "flightdeck experiment agent attached"
OPAQUE_SCHEME = "attachment:"
MAX_FILE_BYTES = 8 << 20  # a bigger attachment is left out (no chat product takes it whole)

SYSTEM_PROMPT = """\
You answer questions about a software team's work using only the documents attached below.
Each document is given between <document name="..."> and </document>; its name is its path.

Answer the question briefly and precisely, from the documents alone. If they do not hold the
answer, say so. End your reply with a line "Sources:" followed by one line per document you
used, each "- " and the document's name exactly as given (you may add #L<a>-L<b> for lines).
Write "Sources: none" if you used no document."""
QUESTION_TEMPLATE = "Question: {question}"
PROMPT_SHA256 = hashlib.sha256(
    (SYSTEM_PROMPT + "\n\n" + QUESTION_TEMPLATE).encode("utf-8")
).hexdigest()

_SOURCES_RE = re.compile(r"^\W*sources?\W*:\W*?(?P<rest>.*)$", re.IGNORECASE)
_BULLET_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s*")
_STRIP = " \t`'\"<>[]()*,;."


@dataclass(frozen=True)
class Document:
    name: str
    text: str


@dataclass(frozen=True)
class Attachments:
    folder: Path
    documents: tuple[Document, ...]  # in the context, sorted by name
    left_out: tuple[str, ...]  # "<name>: why"
    names: frozenset[str]  # every file of the folder, in the context or not
    snapshot: dict[str, Any]  # the meta's knowledge_snapshot: folder, sha256, files


def load_attachments(folder: Path) -> Attachments:
    """Read the folder's files; what cannot go into a chat context is left out, with why."""
    if not folder.is_dir():
        raise InputError(folder, None, "attachment folder not found; it holds <repo>/<path>")
    files = folder_files(folder)
    documents, left_out = [], []
    for name, path in files:
        why = None
        if path.stat().st_size > MAX_FILE_BYTES:
            why = f"over {MAX_FILE_BYTES >> 20} MiB"
        else:
            data = path.read_bytes()
            if b"\0" in data[:8192]:
                why = "binary"
            elif CANARY_PREFIX.encode() in data:
                why = "holds a sealed-key canary"
            else:
                try:
                    documents.append(Document(name, data.decode("utf-8")))
                except UnicodeDecodeError:
                    why = "not UTF-8"
        if why is not None:
            left_out.append(f"{name}: {why}")
    if not documents:
        raise InputError(folder, None, "no text file to attach; put the documents in <repo>/<path>")
    return Attachments(
        folder,
        tuple(documents),
        tuple(left_out),
        frozenset(name for name, _ in files),
        snapshot_record(folder),
    )


def documents_block(attachments: Attachments) -> str:
    """The documents as the model sees them: each under its name, in name order."""
    parts = []
    for d in attachments.documents:
        end = "" if d.text.endswith("\n") else "\n"
        parts.append(f'<document name="{d.name}">\n{d.text}{end}</document>')
    return "\n\n".join(parts)


def parse_reply(text: str) -> tuple[str, list[str]]:
    """The answer before the last ``Sources:`` line, and the names listed after it."""
    lines = text.strip().splitlines()
    at = next((i for i in range(len(lines) - 1, -1, -1) if _SOURCES_RE.match(lines[i])), None)
    if at is None:
        return text.strip(), []
    match = _SOURCES_RE.match(lines[at])
    assert match is not None
    entries = re.split(r"[,;]", match["rest"])
    entries += [_BULLET_RE.sub("", line) for line in lines[at + 1 :]]
    names: list[str] = []
    for entry in entries:
        name = entry.strip(_STRIP)
        if not name or name.lower() in ("none", "n/a"):
            continue
        name = name.split()[0].strip(_STRIP) if name.split() else name
        if name and name not in names:
            names.append(name)
    return "\n".join(lines[:at]).strip(), names


def _normal(path: str) -> bool:
    return not any(part in ("", ".", "..") for part in path.split("/"))


def map_citations(
    names: list[str], attachments: Attachments, as_of: Mapping[str, str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """``(uri, sha256)`` for each cited name, hashed from the attachments; notes on each oddity."""
    notes: list[str] = []
    cited: list[tuple[str, tuple[str, str] | None, str]] = []  # (uri, repo pair, name)
    for raw in names:
        name = raw.removeprefix("./")
        parsed = parse_source_uri(name)
        base = name.partition("#")[0]
        if parsed is not None and parsed.repo in as_of and _normal(parsed.path):
            uri = name
            if parsed.start is not None and (parsed.end or parsed.start) < parsed.start:
                uri = base  # a span that ends before it starts says nothing: drop it
            cited.append((uri, (parsed.repo, parsed.path), base))
        else:
            cited.append((OPAQUE_SCHEME + urllib.parse.quote(base, safe="/"), None, base))
    hashes = hash_from_folder(attachments.folder, {pair for _, pair, _ in cited if pair})
    citations = []
    for uri, pair, name in cited:
        if pair is not None:
            digest = hashes.get(pair)
            if digest is None:
                notes.append(f"{name}: not attached; recorded with the sha256 of no bytes")
                digest = EMPTY_SHA256
        elif name in attachments.names:
            where = ", ".join(sorted(as_of))
            notes.append(f"{name}: outside the question's as_of ({where}); cited as {uri}")
            digest = hashlib.sha256((attachments.folder / name).read_bytes()).hexdigest()
        else:
            notes.append(f"{name}: not attached, not in as_of; cited as {uri}, empty sha256")
            digest = EMPTY_SHA256
        if (uri, digest) not in citations:
            citations.append((uri, digest))
    return citations, notes


def outside(attachments: Attachments, as_of: Mapping[str, str]) -> list[str]:
    """Attached documents no citation of this question can name as ``<repo>/<path>``."""
    return [
        d.name
        for d in attachments.documents
        if "/" not in d.name or d.name.partition("/")[0] not in as_of
    ]


def answer(
    task: Mapping[str, Any],
    attachments: Attachments,
    model: str | Model,
    *,
    max_tokens: int,
    context_window: int | None = None,
    max_retries: int = 5,
    trace: TextIO | None = None,
) -> dict[str, Any]:
    """The protocol result for one question: answer, citations, usage, provenance."""
    from flightdeck.arms.agents.inspect_call import ask

    as_of = task["as_of"]
    log = trace.write if trace is not None else (lambda _text: 0)
    log(f"attached: {attachments.folder} ({len(attachments.documents)} documents in context)\n")
    for line in attachments.left_out:
        log(f"left out: {line}\n")
    for name in outside(attachments, as_of):
        log(f"outside the question's as_of ({', '.join(sorted(as_of))}): {name}\n")
    if isinstance(model, str) and is_dry_run(model):
        model = dry_run_model(model, attachments, max_tokens, max_retries)
    reply: Reply = ask(
        model,
        SYSTEM_PROMPT,
        documents_block(attachments),
        QUESTION_TEMPLATE.format(question=task["question"]),
        max_tokens=max_tokens,
        context_window=context_window,
        max_retries=max_retries,
    )
    count = reply.count
    log(
        f"prompt: {count.tokens} tokens ({count.method}); window {count.window} "
        f"({count.window_source}); answer budget {count.max_tokens}\n"
    )
    log(f"stop: {reply.stop_reason}; usage: {reply.usage}\n==> reply <==\n{reply.text}\n")
    text, names = parse_reply(reply.text)
    citations, notes = map_citations(names, attachments, as_of)
    for note in notes:
        log(f"citation: {note}\n")
    return {
        "answer": text,
        "citations": [{"uri": uri, "sha256": sha} for uri, sha in citations],
        "usage": {**reply.usage, "counted_input_tokens": count.tokens},
        "provenance": provenance(attachments, str(model), count.method, max_tokens),
    }


def provenance(
    attachments: Attachments, model: str, count_method: str, max_tokens: int
) -> dict[str, Any]:
    """What the arm's meta records: the same for every question of a run."""
    record = {
        "harness": HARNESS,
        "model": model,
        "knowledge_snapshot": attachments.snapshot,
        "documents_in_context": len(attachments.documents),
        "left_out": list(attachments.left_out),
        "prompt_sha256": PROMPT_SHA256,
        "token_count": count_method,
        "max_tokens": max_tokens,
    }
    if is_dry_run(model):
        record["dry_run"] = True
    return record


def dry_run_model(name: str, attachments: Attachments, max_tokens: int, max_retries: int) -> Model:
    """``mockllm/...`` scripted to answer from the attachments (:mod:`~.dry_run`), offline."""
    from flightdeck.models import ModelSettings, get_model

    documents = [(d.name, d.text) for d in attachments.documents]
    settings = ModelSettings(
        name,
        max_tokens=max_tokens,
        max_retries=max_retries,
        model_args={"custom_outputs": attached_outputs(name, documents)},
    )
    return get_model(settings, memoize=False)

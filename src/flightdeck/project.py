"""A suite folder on disk: where its files are, and whether they still match the seal."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.jsonl import sha256_file
from flightdeck.suite.records import Manifest, read_manifest

SEALED_FILES = ("questions.jsonl", "keys.jsonl")


@dataclass(frozen=True)
class SuitePaths:
    """The files of ``suites/<suite>/``, as the spec lays them out."""

    root: Path

    @property
    def name(self) -> str:
        return self.root.resolve().name

    @property
    def questions(self) -> Path:
        return self.root / "questions.jsonl"

    @property
    def keys(self) -> Path:
        return self.root / "keys.jsonl"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def ledger(self) -> Path:
        return self.root / "scores.jsonl"

    def answers(self, arm: str) -> Path:
        return self.root / "answers" / f"{arm}.jsonl"

    def meta(self, arm: str) -> Path:
        return self.root / "answers" / f"{arm}.meta.json"

    def labels(self, arm: str) -> Path:
        return self.root / "labels" / f"{arm}.jsonl"

    def arms(self) -> list[str]:
        """Arms with an answers file, sorted."""
        folder = self.root / "answers"
        if not folder.is_dir():
            return []
        # a dot-file (``.<arm>.rerun.jsonl``, a scored arm's rerun) is not an arm
        return sorted(
            p.name[: -len(".jsonl")] for p in folder.glob("*.jsonl") if not p.name.startswith(".")
        )


def read_ledger(suite: SuitePaths) -> dict[str, tuple[int, str, str]]:
    """arm -> (line, answers sha256, scored_at) of the first time each arm was scored."""
    from flightdeck.jsonl import read_jsonl

    first: dict[str, tuple[int, str, str]] = {}
    if not suite.ledger.is_file():
        return first
    for line, record in read_jsonl(suite.ledger):
        arm, answers = record.get("arm"), record.get("answers_sha256")
        if not isinstance(arm, str) or not isinstance(answers, str):
            raise InputError(suite.ledger, line, "ledger record needs arm and answers_sha256")
        first.setdefault(arm, (line, answers, str(record.get("scored_at", "?"))))
    return first


def require_unchanged_if_scored(suite: SuitePaths, arm: str, answers_sha256: str | None) -> None:
    """Refuse answers for an arm the ledger says was scored, unless they are the scored bytes.

    ``answers_sha256`` None means "would add or change answers" (a run with trials to do).
    The same bytes again (a pipeline re-running a deterministic stage) are allowed.
    """
    scored = read_ledger(suite).get(arm)
    if scored is None or scored[1] == answers_sha256:
        return
    raise InputError(
        suite.answers(arm),
        None,
        f"arm {arm!r} was scored on {scored[2]}; its answers cannot change: import or run "
        "them under a new arm name",
    )


def open_suite(path: Path) -> SuitePaths:
    """A suite folder that exists and holds questions.jsonl, or an InputError."""
    if not path.is_dir():
        raise InputError(path, None, "suite folder not found; pass a folder such as suites/<suite>")
    suite = SuitePaths(path)
    if not suite.questions.is_file():
        raise InputError(suite.questions, None, "file not found; a suite needs questions.jsonl")
    if not suite.keys.is_file():
        raise InputError(suite.keys, None, "file not found; a suite needs keys.jsonl")
    return suite


def changed_files(suite: SuitePaths, manifest: Manifest) -> list[str]:
    """Sealed files whose bytes no longer match the manifest's hashes."""
    changed = []
    for name in SEALED_FILES:
        path = suite.root / name
        if not path.is_file() or sha256_file(path) != manifest.files.get(name):
            changed.append(name)
    return changed


def verify_sealed(suite: SuitePaths) -> Manifest:
    """The manifest, after checking the sealed files still match it."""
    if not suite.manifest.is_file():
        raise InputError(
            suite.manifest,
            None,
            f"suite is not sealed; run `flightdeck knowledge seal {suite.root}` first",
        )
    manifest = read_manifest(suite.manifest)
    if manifest.suite != suite.name:
        raise InputError(
            suite.manifest,
            None,
            f"seals suite {manifest.suite!r}, but the folder is {suite.name!r}: a copied suite "
            "is a new version; copy only questions.jsonl and keys.jsonl and seal the copy",
        )
    for name in changed_files(suite, manifest):
        if _only_line_endings(suite.root / name, manifest.files.get(name)):
            raise InputError(
                suite.root / name,
                None,
                f"{name} changed since sealing: its line endings are CRLF now; check out with "
                "core.autocrlf=false (the project's .gitattributes keeps suite files -text)",
            )
        raise InputError(
            suite.root / name,
            None,
            "changed after sealing (it no longer matches manifest.json); a changed question "
            f"is a new suite version ({next_version(suite.name)}), never an edit: restore the file",
        )
    return manifest


def _only_line_endings(path: Path, sealed_sha256: str | None) -> bool:
    """Whether the file is the sealed bytes with LF turned into CRLF (git's autocrlf)."""
    from flightdeck.jsonl import sha256_bytes

    if sealed_sha256 is None or not path.is_file():
        return False
    data = path.read_bytes()
    return b"\r\n" in data and sha256_bytes(data.replace(b"\r\n", b"\n")) == sealed_sha256


def next_version(name: str) -> str:
    """``knowledge-gold-v1`` -> ``knowledge-gold-v2``; a name without a version gets ``-v2``."""
    match = re.fullmatch(r"(.*-v)(\d+)", name)
    return f"{match[1]}{int(match[2]) + 1}" if match else f"{name}-v2"

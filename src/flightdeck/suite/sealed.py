"""Whether a suite's sealed files still match its manifest, and how to say when they do not.

:class:`~flightdeck.project.suite_folder.SuiteFolder` holds the paths and asks here: a copied
suite, a file changed after sealing, and a file whose only change is CRLF line endings (git's
autocrlf) each get their own message, with the next suite version to seal instead of an edit.
"""

from __future__ import annotations

import re
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.files.jsonl import canonical_json, sha256_bytes, sha256_file
from flightdeck.project.names import SEALED_FILES
from flightdeck.suite.records import Manifest


def registered_sha256(manifest: Manifest) -> str:
    """The SHA-256 the holdouts registry keeps of a suite's seal: of its canonical JSON."""
    return sha256_bytes(canonical_json(manifest.to_json()))


def changed_files(root: Path, manifest: Manifest) -> list[str]:
    """Sealed files of the suite folder ``root`` whose bytes no longer match the manifest."""
    changed = []
    for name in SEALED_FILES:
        path = root / name
        if not path.is_file() or sha256_file(path) != manifest.files.get(name):
            changed.append(name)
    return changed


def verified(root: Path, name: str, manifest_file: Path, manifest: Manifest) -> Manifest:
    """``manifest``, after refusing a copied suite (another name) or a changed sealed file."""
    if manifest.suite != name:
        raise InputError(
            manifest_file,
            None,
            f"seals suite {manifest.suite!r}, but the folder is {name!r}: a copied suite "
            "is a new version; copy only questions.jsonl and keys.jsonl and seal the copy",
        )
    for file in changed_files(root, manifest):
        if only_line_endings(root / file, manifest.files.get(file)):
            raise InputError(
                root / file,
                None,
                f"{file} changed since sealing: its line endings are CRLF now; check out with "
                "core.autocrlf=false (the project's .gitattributes keeps suite files -text)",
            )
        raise InputError(
            root / file,
            None,
            "changed after sealing (it no longer matches manifest.json); a changed question "
            f"is a new suite version ({next_version(name)}), never an edit: restore "
            "the file",
        )
    return manifest


def only_line_endings(path: Path, sealed_sha256: str | None) -> bool:
    """Whether ``path`` is the bytes once hashed (sealed, scored) with LF made CRLF (autocrlf).

    The seal check and the score ledger use it to name that cause apart from a real change.
    """
    if sealed_sha256 is None or not path.is_file():
        return False
    data = path.read_bytes()
    return b"\r\n" in data and sha256_bytes(data.replace(b"\r\n", b"\n")) == sealed_sha256


def next_version(name: str) -> str:
    """``knowledge-gold-v1`` -> ``knowledge-gold-v2``; a name without a version gets ``-v2``."""
    match = re.fullmatch(r"(.*-v)(\d+)", name)
    return f"{match[1]}{int(match[2]) + 1}" if match else f"{name}-v2"

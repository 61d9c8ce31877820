"""Build file trees from dicts, as dvc's ``tmp_dir.gen`` does.

A value is the file's content: ``str`` or ``bytes`` as is, a ``list`` of records as JSON
Lines, any other ``dict`` as a folder of its own (``{"suites": {"x": {...}}}``) unless its key
ends in ``.json`` (then it is written as one JSON document). Keys may hold ``/`` for nested
paths. Returns the paths written, in order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def gen(root: Path, tree: Mapping[str, Any]) -> list[Path]:
    """Write ``tree`` under ``root``; folders are made as needed."""
    written: list[Path] = []
    for name, content in tree.items():
        path = root / name
        if isinstance(content, Mapping) and not name.endswith(".json"):
            path.mkdir(parents=True, exist_ok=True)
            written += gen(path, content)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        elif isinstance(content, list):
            path.write_text("".join(json.dumps(r) + "\n" for r in content), encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
        written.append(path)
    return written

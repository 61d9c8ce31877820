"""Every file's passages as the whole-passage mode ranks them, as arrays over the workspace.

:func:`.passages.blocks` gives each file's passages; this lays them out as global line ranges
of the one buffer the repo-search arm counts words in (files one after another), with each
passage's heading path (its own heading and its ancestors', as pairs of passage and line, so
a word in a heading counts again) and its weight for the question's kind (:mod:`.kinds`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from flightdeck.arms.agents import kinds
from flightdeck.arms.agents.passages import Block, blocks, is_heading

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_ASCII_WORD_RE = re.compile(r"[a-z0-9]+")


def section_arrays(
    paths: list[str], data: list[bytes], file_first_line: npt.NDArray[np.int64], kind: str
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    list[tuple[int, ...]],
    tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    npt.NDArray[np.float64],
]:
    """Every file's passages (:func:`.passages.blocks`) as global line ranges.

    Also each passage's heading path as (passage, global line) pairs, and its weight for the
    question's kind (:func:`.kinds.file_weight` times :func:`.kinds.section_weight`).
    """
    import numpy as np

    files: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    contexts: list[tuple[int, ...]] = []
    pair_block: list[int] = []
    pair_line: list[int] = []
    weights: list[float] = []
    for f, (path, raw) in enumerate(zip(paths, data, strict=True)):
        lines = raw.decode("utf-8", "replace").split("\n")
        found = blocks(path, lines) or [Block(0, len(lines))]
        offset = int(file_first_line[f])
        file_weight = kinds.file_weight(kind, path)
        heading_words: dict[int, set[str]] = {}
        for block in found:
            own = (block.start,) if is_heading(lines[block.start]) else ()
            path_lines = block.context + own
            said: set[str] = set()
            for n in path_lines:
                if n not in heading_words:  # a heading's ASCII words: what section names use
                    heading_words[n] = set(_ASCII_WORD_RE.findall(lines[n].lower()))
                said |= heading_words[n]
                pair_block.append(len(files))
                pair_line.append(offset + n)
            weights.append(file_weight * kinds.section_weight(kind, said))
            files.append(f)
            starts.append(offset + block.start)
            ends.append(offset + block.end)
            contexts.append(block.context)
    as_array = np.array
    return (
        as_array(files, dtype=np.int64),
        as_array(starts, dtype=np.int64),
        as_array(ends, dtype=np.int64),
        contexts,
        (as_array(pair_block, dtype=np.int64), as_array(pair_line, dtype=np.int64)),
        as_array(weights, dtype=np.float64),
    )

"""The documented model examples, read out of the docs themselves (never a hand-copied list).

Four places document how to run a model arm, and each is read as it ships:

- the fenced shell blocks of ``README.md`` and ``examples/*.md`` (```` ```sh ````, ```` ```bash ````
  or unmarked) that run ``flightdeck experiment agent llm|attached``: the whole block, as one
  shell script (its ``export`` lines and comments included);
- the ``Example:`` block of every command's ``--help`` that runs one, as one script;
- the commented entries of a ``params.yaml`` (the shipped one, or the one ``flightdeck init``
  writes): a commented ``harnesses`` entry whose command runs a model agent, and a commented
  ``harness_sandbox:`` mapping; :func:`commented_params` also gives the file as a team has it
  after deleting those ``#``.

An example added to any of them is picked up by the next test run. Only ``pip install`` lines
are left out of a block (the test's virtualenv has the extras; the block's own line is kept in
:attr:`Example.skipped`, and the test checks the extra it names exists).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

MODEL_AGENT_RE = re.compile(r"\bexperiment agent (?:llm|attached)\b")
_FENCE_RE = re.compile(r"^```(\w*)\s*$")
_SHELL = {"", "sh", "bash", "shell", "console"}
# a shell example's lines: a command a user types, a comment, or a continued line
_SHELL_LINE_RE = re.compile(r"^(?:flightdeck|export|pip|python|dvc|git|cd|#)\b")
_ENTRY_RE = re.compile(r"^(?P<indent> *)# (?P<key>[\w.-]+):(?: |$)")
_CONTINUED_RE = re.compile(r"^(?P<indent> *)#(?P<rest> {3,}\S.*)$")


@dataclass(frozen=True)
class Example:
    """One documented example: where it is written and the shell text to run."""

    where: str  # "README.md:123", "--help of experiment agent llm", "params.yaml:25"
    script: str
    skipped: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.where


def fenced_examples(path: Path, root: Path) -> Iterator[Example]:
    """The model-agent shell blocks of a markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    shown = path.relative_to(root).as_posix()
    block: list[str] | None = None
    start, language = 0, ""
    for number, line in enumerate(lines, 1):
        fence = _FENCE_RE.match(line.strip())
        if block is None and fence is not None:
            block, start, language = [], number, fence[1]
        elif block is not None and line.strip() == "```":
            text = "\n".join(block)
            if language in _SHELL and MODEL_AGENT_RE.search(text) and _is_shell(block):
                kept = [x for x in block if not x.strip().startswith("pip install")]
                skipped = tuple(x.strip() for x in block if x.strip().startswith("pip install"))
                yield Example(f"{shown}:{start}", "\n".join(kept) + "\n", skipped)
            block = None
        elif block is not None:
            block.append(line)


def _is_shell(block: list[str]) -> bool:
    """Whether every line of a block is a command, a comment, or continues the line before."""
    continued = False
    for line in block:
        if line.strip() and not continued and not _SHELL_LINE_RE.match(line.strip()):
            return False
        continued = line.rstrip().endswith("\\")
    return True


def markdown_examples(root: Path) -> list[Example]:
    """README.md's and examples/*.md's model-agent blocks."""
    files = [root / "README.md", *sorted((root / "examples").glob("*.md"))]
    return [e for path in files for e in fenced_examples(path, root)]


def _commands(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        yield " ".join(path), command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


def help_examples(group: click.Group) -> list[Example]:
    """The ``Example:`` block of each of ``group``'s commands that runs a model agent.

    The block is one script, as a user pastes it: its lines, continuation lines (``\\``)
    joined.
    """
    found = []
    for name, command in _commands(group):
        text = (command.help or "").split("Example:", 1)
        if len(text) < 2 or not MODEL_AGENT_RE.search(text[1]):
            continue
        logical: list[str] = []
        for raw in text[1].splitlines():
            line = raw.strip()
            if not line:
                continue
            if logical and logical[-1].endswith("\\"):
                logical[-1] = logical[-1][:-1].rstrip() + " " + line
            else:
                logical.append(line)
        found.append(Example(f"--help of {name}", "\n".join(logical) + "\n"))
    return found


@dataclass(frozen=True)
class CommentedParams:
    """A params.yaml's commented model entries, and the file with them uncommented."""

    path: str
    harnesses: dict[str, str]  # arm -> harness command, from commented entries
    uncommented: str  # the file's text with those entries (and harness_sandbox) uncommented
    lines: dict[str, int] = field(default_factory=dict)  # arm -> its line in the file


def commented_params(text: str, shown: str) -> CommentedParams:
    """Find the commented model entries of a params.yaml text (see the module docstring)."""
    import yaml

    lines = text.splitlines()
    out = list(lines)
    harnesses: dict[str, str] = {}
    where: dict[str, int] = {}
    i = 0
    while i < len(lines):
        entry = _ENTRY_RE.match(lines[i])
        if entry is None:
            i += 1
            continue
        indent = len(entry["indent"])
        group = [i]
        j = i + 1
        while j < len(lines):
            more = _CONTINUED_RE.match(lines[j])
            if more is None or len(more["indent"]) != indent:
                break
            group.append(j)
            j += 1
        plain = [_uncomment(lines[k], indent) for k in group]
        try:
            value: Any = yaml.safe_load("\n".join(x[indent:] for x in plain))
        except yaml.YAMLError:
            value = None
        key = entry["key"]
        item = value.get(key) if isinstance(value, dict) else None
        is_harness = isinstance(item, str) and MODEL_AGENT_RE.search(item) is not None
        if is_harness or (key == "harness_sandbox" and isinstance(item, dict | type(None))):
            for k, line in zip(group, plain, strict=True):
                out[k] = line
            if is_harness:
                assert isinstance(item, str)
                harnesses[key] = item
                where[key] = i + 1
        i = j
    return CommentedParams(shown, harnesses, "\n".join(out) + "\n", where)


def _uncomment(line: str, indent: int) -> str:
    """``  #   text`` -> ``    text``: the ``#`` and the one space after it removed."""
    head, _, rest = line[indent:].partition("#")
    assert head == "", line
    return " " * indent + rest[1:]

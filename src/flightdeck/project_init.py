"""`flightdeck init`: a git repository becomes a knowledge-evals project in one step.

It writes the generic pipeline (dvc.yaml, the same file this project runs its demo with),
a params.yaml to fill in, the .gitattributes that keep git from rewriting hashed files, the
.gitignore entries, empty suites/ and holdouts/, and a GitHub Actions workflow; then runs
``dvc init`` when the repository has no .dvc yet. Nothing is overwritten without ``force``:
every target is checked before the first byte is written, so a refusal changes nothing.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.jsonl import atomic_write
from flightdeck.version import __version__

WORKFLOW = Path(".github") / "workflows" / "knowledge-evals.yml"
# target -> template in flightdeck/templates
TEMPLATES = {
    Path("params.yaml"): "params.yaml.tmpl",
    Path("dvc.yaml"): "dvc.yaml.tmpl",
    Path(".gitattributes"): "gitattributes.tmpl",
    WORKFLOW: "knowledge-evals.yml.tmpl",
}
FOLDERS = (Path("suites"), Path("holdouts"))
GITIGNORE = (".venv", ".flightdeck/", "dvc_plots/")
SUITE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


@dataclass(frozen=True)
class InitResult:
    root: Path
    written: tuple[Path, ...]  # relative to root
    gitignore_added: tuple[str, ...]
    dvc_initialised: bool


def template(name: str) -> str:
    """A template shipped in the package, as text."""
    return files("flightdeck.templates").joinpath(name).read_text(encoding="utf-8")


def git_toplevel(folder: Path) -> Path:
    """The top of the git work tree holding ``folder``; refuses anything else."""
    if not folder.is_dir():
        raise InputError(folder, None, "no such folder; create it and `git init` it first")
    proc = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise InputError(
            folder,
            None,
            "not inside a git repository; run `git init` first (the pipeline's outputs are "
            "git-tracked)",
        )
    return Path(proc.stdout.strip())


def init_project(
    root: Path, *, suite: str = "knowledge-gold-v1", force: bool = False, dvc: bool = True
) -> InitResult:
    """Write the project's files into ``root`` (a folder of a git work tree)."""
    if not SUITE_NAME.match(suite):
        raise InputError("--suite", None, f"suite name {suite!r} must be letters, digits and . _ -")
    toplevel = git_toplevel(root)
    texts = {
        target: template(name).replace("__SUITE__", suite).replace("__VERSION__", __version__)
        for target, name in TEMPLATES.items()
    }
    if not force:
        for target in TEMPLATES:
            if (root / target).exists():
                raise InputError(
                    root / target,
                    None,
                    "already exists; flightdeck init never overwrites a file: move it away, "
                    "or pass --force to replace it",
                )
    for target in TEMPLATES:
        if (root / target).is_dir():
            raise InputError(root / target, None, "is a folder; move it away")
    written: list[Path] = []
    for target, text in texts.items():
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(root / target, text)
        written.append(target)
    for folder in FOLDERS:
        keep = root / folder / ".gitkeep"
        if not keep.exists():
            keep.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(keep, b"")
            written.append(folder / ".gitkeep")
    added = _append_gitignore(root / ".gitignore")
    initialised = False
    if dvc and not (root / ".dvc").exists():
        from dvc.repo import Repo

        Repo.init(str(root), subdir=root.resolve() != toplevel.resolve())
        initialised = True
    return InitResult(root, tuple(written), added, initialised)


def _entry(line: str) -> str:
    """A .gitignore line as the entry it names: ``/.venv/`` and ``.venv`` are the same."""
    return line.strip().strip("/")


def _append_gitignore(path: Path) -> tuple[str, ...]:
    """Add the entries .gitignore lacks, after what it has; an entry already there is kept."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    have = {_entry(line) for line in old.splitlines() if line.strip() and line[0] != "#"}
    missing = tuple(entry for entry in GITIGNORE if _entry(entry) not in have)
    if missing:
        lead = "" if not old or old.endswith("\n") else "\n"
        block = "# flightdeck init\n" + "".join(f"{entry}\n" for entry in missing)
        atomic_write(path, old + lead + block)
    return missing

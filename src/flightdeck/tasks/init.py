"""`flightdeck init`: a git repository becomes a knowledge-evals project in one step.

It writes the generic pipeline (dvc.yaml, the same file this project runs its demo with),
a params.yaml to fill in, the .gitattributes that keep git from rewriting hashed files, the
.gitignore entries, empty suites/ and holdouts/, and a GitHub Actions workflow; then runs
``dvc init`` when the repository has no .dvc yet. Nothing is overwritten without ``force``:
every target is checked before the first byte is written, so a refusal changes nothing.

The workflow installs flightdeck pinned (#21): ``flightdeck-evals @ git+URL@<full commit>``
or a wheel the team built and committed, never a name from the package index (where
``flightdeck`` is an unrelated project). The pin is ``--install``, else the commit this
flightdeck was installed from (its ``direct_url.json``, PEP 610); an install that names no
commit CI could fetch (a local folder, an index) is refused with the fix.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.files.jsonl import atomic_write
from flightdeck.project import names
from flightdeck.project.modes import ExistingFiles
from flightdeck.version import DISTRIBUTION

WORKFLOW = Path(".github") / "workflows" / "knowledge-evals.yml"
# target -> template in flightdeck/templates
TEMPLATES = {
    Path(names.PARAMS_FILE): "params.yaml.tmpl",
    Path(names.PIPELINE_FILE): "dvc.yaml.tmpl",
    Path(".gitattributes"): "gitattributes.tmpl",
    WORKFLOW: "knowledge-evals.yml.tmpl",
}
FOLDERS = (Path(names.SUITES_FOLDER), Path(names.HOLDOUTS_FOLDER))
GITIGNORE = (".venv", f"{names.STATE_FOLDER.as_posix()}/", "dvc_plots/")
SUITE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
COMMIT = re.compile(r"[0-9a-f]{40}\Z")
GIT_PIN = re.compile(r"(git\+(?:https|ssh)://[^\s@]+(?:@[^\s@/]+/[^\s@]+)?)@([0-9a-fA-F]{40})\Z")
WHEEL = re.compile(r"flightdeck_evals-[^/\\]+\.whl\Z")
INSTALL_FIX = (
    "pass --install git+https://HOST/OWNER/REPO@<full 40-hex commit> (the flightdeck you run) "
    "or --install <path of a flightdeck_evals wheel you built and committed>"
)


@dataclass(frozen=True)
class Install:
    """What CI's pip installs: a requirement pinned to one commit, or a committed wheel."""

    requirement: str
    note: str  # where the pin came from, written beside it in the workflow


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
    root: Path,
    *,
    suite: str = "knowledge-gold-v1",
    existing: ExistingFiles = ExistingFiles.REFUSE,
    dvc: bool = True,
    install: str | None = None,
) -> InitResult:
    """Write the project's files into ``root`` (a folder of a git work tree).

    A file already there is refused unless ``existing=ExistingFiles.REPLACE`` (``--force``);
    ``dvc`` runs ``dvc init`` when .dvc/ is missing. ``install`` pins what CI installs (see
    :func:`install_requirement`).
    """
    existing = ExistingFiles(existing)  # a bool here is a bug: it must not turn the check off
    if not SUITE_NAME.match(suite):
        raise InputError("--suite", None, f"suite name {suite!r} must be letters, digits and . _ -")
    toplevel = git_toplevel(root)
    pinned = install_requirement(root, install)
    texts = {
        target: template(name)
        .replace("__SUITE__", suite)
        .replace("__INSTALL_NOTE__", pinned.note)
        .replace("__INSTALL__", pinned.requirement)
        for target, name in TEMPLATES.items()
    }
    if existing is ExistingFiles.REFUSE:
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


def install_requirement(root: Path, given: str | None) -> Install:
    """CI's pin: ``given`` (a git URL at a full commit, or a wheel in ``root``), else ours.

    Without ``given`` it is the commit this flightdeck was installed from, read from the
    distribution's ``direct_url.json``; an index install or a local folder names none.
    """
    if given is None:
        return _installed()
    text = given.strip()
    pin = GIT_PIN.match(text)
    if pin:
        url, commit = pin[1], pin[2].lower()
        return Install(
            f"{DISTRIBUTION} @ {url}@{commit}", f"commit {commit} (flightdeck init --install)"
        )
    if text.endswith(".whl") and "://" not in text:
        wheel = Path(text)
        if wheel.is_absolute() or ".." in wheel.parts:
            raise InputError(
                "--install",
                None,
                f"{text!r}: give the wheel's path inside the project, as committed",
            )
        if not WHEEL.match(wheel.name):
            raise InputError(
                "--install",
                None,
                f"{text!r} is not a flightdeck_evals wheel (flightdeck_evals-<version>-...whl)",
            )
        if not (root / wheel).is_file():
            raise InputError(
                root / wheel,
                None,
                "no such wheel; build it (pip wheel --no-deps -w DIR <flightdeck checkout>) "
                "and commit it",
            )
        return Install(
            f"./{wheel.as_posix()}",
            "a wheel committed in this repository (flightdeck init --install)",
        )
    raise InputError(
        "--install", None, f"{text!r} can move or names the package index; {INSTALL_FIX}"
    )


def _installed() -> Install:
    """The pin of the flightdeck running now, from its PEP 610 ``direct_url.json``."""
    from importlib import metadata

    try:
        raw = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        raw = None
    info = json.loads(raw) if raw else {}
    url, vcs = str(info.get("url", "")), info.get("vcs_info") or {}
    commit = str(vcs.get("commit_id", "")).lower()
    if vcs.get("vcs") == "git" and COMMIT.match(commit) and not url.startswith("file:"):
        return Install(
            f"{DISTRIBUTION} @ git+{url}@{commit}", f"commit {commit}, the flightdeck that ran init"
        )
    if "dir_info" in info and url.startswith("file://"):
        folder = url.removeprefix("file://")
        head = subprocess.run(
            ["git", "-C", folder, "rev-parse", "HEAD"], capture_output=True, text=True, check=False
        )
        at = f" (its HEAD is {head.stdout.strip()})" if head.returncode == 0 else ""
        where = f"the local folder {folder}{at}, which CI cannot fetch"
    elif not info:
        where = "a package index or an unknown source, which names no commit"
    else:
        where = f"{url or 'an archive'}, which names no commit CI can fetch"
    raise InputError("--install", None, f"{DISTRIBUTION} was installed from {where}; {INSTALL_FIX}")

"""Rebuild the second held-out public corpus's bundles from the upstream repositories.

Each bundle holds one branch, ``main``, with one commit per upstream snapshot the
questions pin. A commit's tree is the upstream commit's tree cut down to its
documentation files (markdown, ``.erb`` pages, CODEOWNERS/OWNERS/MAINTAINERS and licence files),
byte for byte, at the same paths; the upstream history is left out, so a bundle is
kilobytes instead of the repositories' megabytes. Author, committer and date are fixed
(the date is the upstream commit's), so the commit ids printed are the same on every
machine and every git version.

Run (the upstream clones are plain ``git clone --bare`` of the GitHub repositories)::

    python benchmarks/heldout-public-v2/build_repos.py \\
        --upstream tdr-docs=/path/to/nationalarchives/tdr-dev-documentation.git \\
        --upstream rke2=/path/to/rancher/rke2.git \\
        --upstream terraform-aws-eks=/path/to/terraform-aws-modules/terraform-aws-eks.git \\
        --out benchmarks/heldout-public-v2/repos
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Snapshot:
    tag: str
    upstream_commit: str


@dataclass(frozen=True)
class Corpus:
    name: str
    github: str
    licence: str
    snapshots: tuple[Snapshot, ...]


CORPORA = (
    Corpus(
        "tdr-docs",
        "nationalarchives/tdr-dev-documentation",
        "MIT",
        (
            Snapshot("upstream-2024-01-24", "ce51a4baab61fb951a02feda5e1de2bfb0c7048c"),
            Snapshot("upstream-2026-06-12", "7b67a6fa947f796e22cbbddd01944fd5b97932e3"),
        ),
    ),
    Corpus(
        "rke2",
        "rancher/rke2",
        "Apache-2.0",
        (
            Snapshot("upstream-2024-08-30", "058ce32a9c1cd052de8238e8a71caa917014025a"),
            Snapshot("upstream-2026-08-21", "6ce1a8019e9d0b81eb7a715edbc2b8ac12d26da0"),
        ),
    ),
    Corpus(
        "terraform-aws-eks",
        "terraform-aws-modules/terraform-aws-eks",
        "Apache-2.0",
        (
            Snapshot("v20.37.2", "8a0efdbbc84180a26e0bacfd2b6fcfceac53b3b6"),
            Snapshot("v21.19.0", "bef29c4d9523523e57fe898643fde2895106b339"),
        ),
    ),
)

KEEP = re.compile(
    r"(\.md|\.erb|(^|/)CODEOWNERS|(^|/)OWNERS[^/]*|(^|/)MAINTAINERS|(^|/)LICEN[CS]E[^/]*)$"
)
IDENTITY = "flightdeck heldout corpus v2"
EMAIL = "heldout@flightdeck.invalid"


def _git(
    git_dir: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"})
    base.update(env or {})
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        input=stdin,
        capture_output=True,
        env=base,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _kept_entries(upstream: Path, commit: str) -> bytes:
    listing = _git(upstream, "ls-tree", "-r", "-z", "--full-tree", commit)
    kept = [
        entry
        for entry in listing.split(b"\0")
        if entry and KEEP.search(entry.split(b"\t", 1)[1].decode())
    ]
    return b"".join(entry + b"\0" for entry in kept)


def build(corpus: Corpus, upstream: Path, out: Path) -> list[tuple[Snapshot, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo.git"
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        (repo / "objects" / "info" / "alternates").write_text(
            str((upstream / "objects").resolve()) + "\n"
        )
        parent: str | None = None
        made = []
        for snap in corpus.snapshots:
            date = (
                _git(upstream, "log", "-1", "--format=%cI", snap.upstream_commit).decode().strip()
            )
            subject = (
                _git(upstream, "log", "-1", "--format=%s", snap.upstream_commit).decode().strip()
            )
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            _git(repo, "read-tree", "--empty", env=index)
            _git(
                repo,
                "update-index",
                "-z",
                "--index-info",
                stdin=_kept_entries(upstream, snap.upstream_commit),
                env=index,
            )
            tree = _git(repo, "write-tree", env=index).decode().strip()
            message = (
                f"{corpus.github}@{snap.upstream_commit}: documentation files\n\n"
                f"Upstream subject: {subject}\n"
                "The tree is the upstream tree's *.md, *.erb, CODEOWNERS, OWNERS, MAINTAINERS"
                " and licence files,\n"
                f"unchanged; the upstream history is not included. Licence: {corpus.licence}.\n"
            )
            who = {
                "GIT_AUTHOR_NAME": IDENTITY,
                "GIT_AUTHOR_EMAIL": EMAIL,
                "GIT_AUTHOR_DATE": date,
                "GIT_COMMITTER_NAME": IDENTITY,
                "GIT_COMMITTER_EMAIL": EMAIL,
                "GIT_COMMITTER_DATE": date,
            }
            args = ["commit-tree", tree, *(["-p", parent] if parent else [])]
            parent = _git(repo, *args, stdin=message.encode(), env=who).decode().strip()
            _git(repo, "tag", snap.tag, parent)
            made.append((snap, parent))
        assert parent is not None
        _git(repo, "update-ref", "refs/heads/main", parent)
        out.mkdir(parents=True, exist_ok=True)
        target = out / f"{corpus.name}.bundle"
        partial = target.with_suffix(".bundle.tmp")
        _git(repo, "bundle", "create", str(partial.resolve()), "main", "--tags")
        partial.replace(target)
        return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--upstream", action="append", default=[], metavar="NAME=GITDIR", required=True
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "repos")
    args = parser.parse_args(argv)
    upstreams = dict(item.split("=", 1) for item in args.upstream)
    for corpus in CORPORA:
        if corpus.name not in upstreams:
            print(f"skipped {corpus.name}: no --upstream {corpus.name}=GITDIR", file=sys.stderr)
            continue
        for snap, commit in build(corpus, Path(upstreams[corpus.name]), args.out):
            print(f"{corpus.name} {snap.tag} upstream {snap.upstream_commit} -> {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

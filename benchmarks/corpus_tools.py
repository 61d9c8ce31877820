"""The held-out corpora's two tools, for any corpus folder: rebuild its bundles, check its keys.

A corpus folder (``benchmarks/heldout-public``, ``benchmarks/heldout-public-v2``) holds
``suite/``, ``repos/<name>.bundle`` and ``corpus.json``, which says where the bundles come
from: each repository's upstream snapshots, which files of an upstream tree are kept
(``keep``, a regular expression over the path, and ``kept_words``, how the commit message
says it) and the fixed author (``identity``). The tools are the same for every corpus; only
that file differs::

    python -m benchmarks.corpus_tools check-facts benchmarks/heldout-public-v2
    python -m benchmarks.corpus_tools build-repos benchmarks/heldout-public \\
        --upstream cloud-platform=/path/to/ministryofjustice/cloud-platform.git \\
        --upstream govuk-infrastructure=/path/to/alphagov/govuk-infrastructure.git \\
        --upstream kube-prometheus=/path/to/prometheus-operator/kube-prometheus.git

``build-repos``: each bundle holds one branch, ``main``, with one commit per upstream
snapshot the questions pin. A commit's tree is the upstream commit's tree cut down to the
kept files, byte for byte, at the same paths; the upstream history is left out, so a bundle
is kilobytes instead of the repositories' megabytes. Author, committer and date are fixed
(the date is the upstream commit's), so the commit ids printed are the same on every
machine and every git version.

``check-facts``: a fact counts as present when its normalised text (NFKC, casefolded,
whitespace runs as one space) is a substring of a valid source's normalised text at the
question's ``as_of`` commit. This is how the keys were checked when they were written: a
fact a reader cannot find in the sources would make the suite unfair to every arm. It reads
the bundles through git; nothing is written. Exit 1 and one line per fact that is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

EMAIL = "heldout@flightdeck.invalid"


@dataclass(frozen=True)
class Snapshot:
    tag: str
    upstream_commit: str


@dataclass(frozen=True)
class Repository:
    name: str
    github: str
    licence: str
    snapshots: tuple[Snapshot, ...]


@dataclass(frozen=True)
class Corpus:
    """A corpus folder's ``corpus.json``: where its bundles come from, what they keep."""

    folder: Path
    identity: str  # the fixed author and committer of every bundle commit
    keep: re.Pattern[str]  # the upstream paths a snapshot keeps
    kept_words: str  # the same, as the commit message says it
    repositories: tuple[Repository, ...]

    @classmethod
    def read(cls, folder: Path) -> Corpus:
        data = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
        return cls(
            folder=folder,
            identity=data["identity"],
            keep=re.compile(data["keep"]),
            kept_words=data["kept_words"],
            repositories=tuple(
                Repository(
                    repo["name"],
                    repo["github"],
                    repo["licence"],
                    tuple(Snapshot(s["tag"], s["upstream_commit"]) for s in repo["snapshots"]),
                )
                for repo in data["repositories"]
            ),
        )


# --- build-repos ----------------------------------------------------------------------------


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


def _kept_entries(corpus: Corpus, upstream: Path, commit: str) -> bytes:
    listing = _git(upstream, "ls-tree", "-r", "-z", "--full-tree", commit)
    kept = [
        entry
        for entry in listing.split(b"\0")
        if entry and corpus.keep.search(entry.split(b"\t", 1)[1].decode())
    ]
    return b"".join(entry + b"\0" for entry in kept)


def build(
    corpus: Corpus, repository: Repository, upstream: Path, out: Path
) -> list[tuple[Snapshot, str]]:
    """Write ``out/<name>.bundle`` from the upstream git dir; the snapshots and their commits."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo.git"
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
        (repo / "objects" / "info" / "alternates").write_text(
            str((upstream / "objects").resolve()) + "\n"
        )
        parent: str | None = None
        made = []
        for snap in repository.snapshots:
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
                stdin=_kept_entries(corpus, upstream, snap.upstream_commit),
                env=index,
            )
            tree = _git(repo, "write-tree", env=index).decode().strip()
            message = (
                f"{repository.github}@{snap.upstream_commit}: documentation files\n\n"
                f"Upstream subject: {subject}\n"
                f"The tree is the upstream tree's {corpus.kept_words} files,\n"
                "unchanged; the upstream history is not included. "
                f"Licence: {repository.licence}.\n"
            )
            who = {
                "GIT_AUTHOR_NAME": corpus.identity,
                "GIT_AUTHOR_EMAIL": EMAIL,
                "GIT_AUTHOR_DATE": date,
                "GIT_COMMITTER_NAME": corpus.identity,
                "GIT_COMMITTER_EMAIL": EMAIL,
                "GIT_COMMITTER_DATE": date,
            }
            args = ["commit-tree", tree, *(["-p", parent] if parent else [])]
            parent = _git(repo, *args, stdin=message.encode(), env=who).decode().strip()
            _git(repo, "tag", snap.tag, parent)
            made.append((snap, parent))
        if parent is None:
            raise SystemExit(f"{repository.name}: corpus.json lists no snapshot")
        _git(repo, "update-ref", "refs/heads/main", parent)
        out.mkdir(parents=True, exist_ok=True)
        target = out / f"{repository.name}.bundle"
        partial = target.with_suffix(".bundle.tmp")
        _git(repo, "bundle", "create", str(partial.resolve()), "main", "--tags")
        partial.replace(target)
        return made


def build_repos(corpus: Corpus, upstreams: dict[str, str], out: Path) -> int:
    for repository in corpus.repositories:
        if repository.name not in upstreams:
            print(
                f"skipped {repository.name}: no --upstream {repository.name}=GITDIR",
                file=sys.stderr,
            )
            continue
        for snap, commit in build(corpus, repository, Path(upstreams[repository.name]), out):
            print(f"{repository.name} {snap.tag} upstream {snap.upstream_commit} -> {commit}")
    return 0


# --- check-facts ----------------------------------------------------------------------------


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def check_facts(folder: Path) -> int:
    """Print each required fact missing from its valid sources; 1 when one is, else 0."""
    questions = {q["id"]: q for q in map(json.loads, (folder / "suite" / "questions.jsonl").open())}
    keys = [json.loads(line) for line in (folder / "suite" / "keys.jsonl").open()]
    missing = 0
    with tempfile.TemporaryDirectory() as tmp:
        clones: dict[str, Path] = {}
        for bundle in sorted((folder / "repos").glob("*.bundle")):
            clones[bundle.stem] = Path(tmp) / bundle.stem
            subprocess.run(
                ["git", "clone", "-q", "--bare", str(bundle), str(clones[bundle.stem])], check=True
            )
        for key in keys:
            question = questions[key["id"]]
            texts = []
            for source in key["valid_sources"]:
                repo, path = source["uri"].split("#")[0].split("/", 1)
                blob = f"{question['as_of'][repo]}:{path}"
                shown = subprocess.run(
                    ["git", f"--git-dir={clones[repo]}", "show", blob],
                    capture_output=True,
                    check=False,
                )
                if shown.returncode != 0:
                    print(f"{key['id']}: {source['uri']} is not at {question['as_of'][repo][:12]}")
                    missing += 1
                    continue
                texts.append(normalise(shown.stdout.decode()))
            for fact in key["required_facts"]:
                if not any(normalise(fact) in text for text in texts):
                    print(f"{key['id']}: fact {fact!r} is in none of its valid sources")
                    missing += 1
    print(f"{len(keys)} keys, {missing} problems")
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="corpus_tools.py", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check-facts", help="every required fact is in a valid source")
    check.add_argument("corpus", type=Path, help="the corpus folder (suite/, repos/)")
    rebuild = commands.add_parser("build-repos", help="rebuild the bundles from upstream")
    rebuild.add_argument("corpus", type=Path, help="the corpus folder (corpus.json)")
    rebuild.add_argument(
        "--upstream", action="append", default=[], metavar="NAME=GITDIR", required=True
    )
    rebuild.add_argument("--out", type=Path, default=None, help="default: CORPUS/repos")
    args = parser.parse_args(argv)
    if not (args.corpus / "suite" / "questions.jsonl").is_file():
        parser.error(f"{args.corpus}: no suite/questions.jsonl there; name a corpus folder")
    if args.command == "check-facts":
        return check_facts(args.corpus)
    if not (args.corpus / "corpus.json").is_file():
        parser.error(f"{args.corpus}: no corpus.json there; it says where the bundles come from")
    upstreams = dict(item.split("=", 1) for item in args.upstream)
    out = args.out if args.out is not None else args.corpus / "repos"
    return build_repos(Corpus.read(args.corpus), upstreams, out)


if __name__ == "__main__":
    sys.exit(main())

"""A new suite folder: one example question and key, and a README that explains each field.

JSONL has no comments, so the explanations live in the suite's README.md; questions.jsonl and
keys.jsonl each hold one example record that already passes ``knowledge check`` (its source
is a real file at the pinned commit, its sha256 left for seal to compute), so an author edits
working lines rather than starting from a blank page.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from flightdeck.errors import InputError
from flightdeck.files.jsonl import atomic_write, dumps_line, encode_lines
from flightdeck.project.names import KEYS_FILE, QUESTIONS_FILE
from flightdeck.suite.records import KINDS
from flightdeck.suite.repos import RepoSet, Repository

SUITE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
FILES = ("README.md", QUESTIONS_FILE, KEYS_FILE)


@dataclass(frozen=True)
class NewSuite:
    suite: str
    folder: Path
    as_of: dict[str, str]  # repository -> the full commit the revision resolved to
    written: tuple[Path, ...]


def parse_as_of(values: tuple[str, ...]) -> dict[str, str]:
    """``--as-of REPO=REV`` pairs -> mapping; REV is a tag, branch or (short) commit."""
    pairs: dict[str, str] = {}
    for value in values:
        repo, sep, rev = value.partition("=")
        if not sep or not repo or not rev or "/" in repo:
            raise InputError(
                "--as-of", None, f"{value!r} is not REPO=REV; e.g. --as-of sdlc=v1.2 or sdlc=main"
            )
        if repo in pairs:
            raise InputError("--as-of", None, f"repository {repo!r} is named twice; name it once")
        pairs[repo] = rev
    if not pairs:
        raise InputError("--as-of", None, "name at least one repository: --as-of sdlc=<rev>")
    return pairs


def resolve_commit(repo: Repository, rev: str) -> str:
    """The full 40-hex commit a tag, branch or short hash names, through ``git rev-parse``."""
    proc = subprocess.run(
        [
            "git",
            f"--git-dir={repo.git_dir}",
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{rev}^{{commit}}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}", proc.stdout.strip()):
        raise InputError(
            "--as-of",
            None,
            f"{rev!r} names no commit of repository {repo.name!r} ({repo.location}) "
            "(an unknown tag or branch, or a short hash that is ambiguous); "
            "give a tag, a branch or a longer hash",
        )
    return proc.stdout.strip()


def new_suite(suite_dir: Path, revisions: Mapping[str, str], *, repos: RepoSet) -> NewSuite:
    """Create ``suite_dir`` with the example files; refuses a folder that already has any."""
    name = suite_dir.resolve().name
    if not SUITE_NAME.match(name):
        raise InputError(
            suite_dir, None, f"suite name {name!r} must be letters, digits and . _ - (e.g. x-v1)"
        )
    for file in FILES:
        if (suite_dir / file).exists():
            raise InputError(
                suite_dir / file,
                None,
                "already exists; a suite is never overwritten: pick a new suite name (…-v2)",
            )
    as_of: dict[str, str] = {}
    example: tuple[str, str] | None = None
    for repo_name, rev in revisions.items():
        if repo_name not in repos.locations:
            raise InputError(
                "--as-of",
                None,
                f"repository {repo_name!r} is in neither params.yaml repos: nor --repo; "
                f"add it (--repo {repo_name}=PATH)",
            )
        repo = repos.get(repo_name)
        as_of[repo_name] = resolve_commit(repo, rev)
        if example is None:
            example = (repo_name, _example_file(repo, as_of[repo_name]))
    assert example is not None
    texts = {
        QUESTIONS_FILE: encode_lines([_question(as_of, example)]),
        KEYS_FILE: encode_lines([_key(example)]),
        "README.md": _readme(name, as_of, example).encode("utf-8"),
    }
    suite_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for file in FILES:
        atomic_write(suite_dir / file, texts[file])
        written.append(suite_dir / file)
    return NewSuite(name, suite_dir, as_of, tuple(written))


def _example_file(repo: Repository, commit: str) -> str:
    """A file to cite in the example: a README if there is one, else the first file."""
    files = [path for path, _ in repo.list_files(commit)]
    if not files:
        raise InputError(
            "--as-of",
            None,
            f"commit {commit[:12]} of {repo.name!r} holds no file; pin a commit with documents",
        )
    readmes = [p for p in files if p.split("/")[-1].lower().startswith("readme")]
    return min(readmes or files, key=lambda p: (p.count("/"), p))


def _question(as_of: dict[str, str], example: tuple[str, str]) -> dict[str, object]:
    repo, path = example
    return {
        "id": "q01",
        "question": f"What does {path} in {repo} say? (an example: replace it)",
        "kind": "how-to",
        "as_of": as_of,
        "scope": [f"{repo}/**"],
    }


def _key(example: tuple[str, str]) -> dict[str, object]:
    repo, path = example
    return {
        "id": "q01",
        "answer_key": "The answer a rater compares with (an example: replace it).",
        "required_facts": [path.split("/")[-1]],
        "valid_sources": [{"uri": f"{repo}/{path}"}],
    }


def _readme(name: str, as_of: dict[str, str], example: tuple[str, str]) -> str:
    repo, path = example
    pins = "\n".join(f"- `{r}` at `{c}`" for r, c in as_of.items())
    kinds = ", ".join(f"`{k}`" for k in KINDS)
    question_line = dumps_line(
        {
            "id": "q01",
            "question": "How do we deploy?",
            "kind": "how-to",
            "as_of": {repo: as_of[repo]},
            "scope": [f"{repo}/**"],
        }
    )
    key_line = dumps_line(
        {
            "id": "q01",
            "answer_key": "Run make release, then tag the commit.",
            "required_facts": ["make release"],
            "valid_sources": [{"uri": f"{repo}/{path}"}],
        }
    )
    return f"""# Suite {name}

Written by `flightdeck knowledge new`. The repositories are pinned at:

{pins}

`questions.jsonl` and `keys.jsonl` hold one JSON object per line (no comments: JSON has none,
so this file explains them). Each holds one example record for question `q01`: replace it
with your own questions, one line each, the same ids in both files.

## questions.jsonl: what an arm may read

```json
{question_line}
```

- `id`: unique, non-empty; the same id names the question's key.
- `question`: what a person would ask.
- `kind`: one of {kinds}.
- `as_of`: repository name -> full 40-hex commit. The arm reads these commits, nothing newer.
  Resolve a tag or branch with `git rev-parse v1.2^{{commit}}`.
- `scope`: git glob pathspecs over `<repo>/<path>` (`*` stays in a folder, `**` spans
  folders); `[]` means every file of the `as_of` repositories.

## keys.jsonl: sealed until scored

```json
{key_line}
```

- `answer_key`: the answer a rater compares with.
- `required_facts`: every one must be in an answer for it to be correct.
- `valid_sources`: the files (or `<repo>/<path>#L3-L9` spans) a good answer cites. Leave
  `sha256` out: `flightdeck knowledge seal` computes it from the file at `as_of` and writes
  it into the sealed keys. A URL source (`https://...`) is opaque: without a `sha256` it gets
  the hash of the URL itself, which a person's citation of the same URL also gets.
- No `canary`: seal writes it.

## Next

```
flightdeck knowledge check suites/{name}    # every seal check, writes nothing
flightdeck knowledge seal suites/{name}     # for good: a changed question is a new suite
```
"""

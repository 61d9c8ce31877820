"""Check that every required fact of the v2 held-out suite is in one of its valid sources.

A fact counts as present when its normalised text (NFKC, casefolded, whitespace runs as one
space) is a substring of a valid source's normalised text at the question's ``as_of``
commit. This is how the keys were checked when they were written: a fact a reader cannot
find in the sources would make the suite unfair to every arm. It reads the bundles
through git; nothing is written.

Run: ``python benchmarks/heldout-public-v2/check_facts.py`` (exit 1 and one line per fact
that is missing).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

HERE = Path(__file__).parent


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def main() -> int:
    questions = {q["id"]: q for q in map(json.loads, (HERE / "suite" / "questions.jsonl").open())}
    keys = [json.loads(line) for line in (HERE / "suite" / "keys.jsonl").open()]
    missing = 0
    with tempfile.TemporaryDirectory() as tmp:
        clones: dict[str, Path] = {}
        for bundle in sorted((HERE / "repos").glob("*.bundle")):
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


if __name__ == "__main__":
    sys.exit(main())

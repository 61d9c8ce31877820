"""BM25 as the repo-search arm scores passages: the words it counts and the formula.

The question's words (NFKC, casefolded, stop words dropped, neighbouring words also glued
together), the words a file's path adds (a CODEOWNERS file says "owns"), whole-word
occurrences found in one space-separated buffer, and the scores.

BM25 (Lucene's variant, as bm25s computes it by default)::

    score(p) = sum over query words w of
               idf(w) * tf(w, p) / (tf(w, p) + k1 * (1 - b + b * len(p) / avglen))
    idf(w)   = ln(1 + (N - df(w) + 0.5) / (df(w) + 0.5))

with N passages, df(w) the passages holding w, k1 = 1.5, b = 0.75 (Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009; Lucene's idf keeps it
positive). We compute it ourselves, vectorised over the query's words only, instead of
calling bm25s or rank-bm25: both build an index of every word of every passage first, which
is what a search engine amortises over many queries but a one-question trial pays in full
(about 3 s for a 5,000-file repository, against a 2 s budget for the whole answer). The tests
check our scores against bm25s's.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from flightdeck.arms.agents.passages import words as text_words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

K1, B = 1.5, 0.75

_STOP_WORDS = """
    a about after all also an and any are as at be been before being but by can could did
    do does doing done for from had has have how i if in into is it its just may me might more
    most must my no not of on once only or other our out over own same should so some such
    than that the their them then there these they this those through to too under until up
    us very was we were what when where which while who whom whose why will with would you
    your"""
STOP_WORDS = frozenset(_STOP_WORDS.split())

# Bytes of a word: ASCII letters and digits, and every byte of a UTF-8 multi-byte character.
# Everything else separates words; the translation also lowercases ASCII.
_SEPARATE = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128) else 32
    for c in range(256)
)


# File names whose meaning is a convention, not their words: what a question calls them.
_OWNERSHIP = ["code", "owner", "owners", "owns", "maintainers"]
_NAMED_FILES = dict.fromkeys(("codeowners", "owners", "owners_aliases", "maintainers"), _OWNERSHIP)


def path_words_of(path: str) -> list[str]:
    """The words a file's path adds to each of its passages (CODEOWNERS: code, owns, ...).

    The file's name is read without its extension and in any case: ``OWNERS.md``,
    ``Maintainers.txt`` and ``CODEOWNERS`` all say who owns.
    """
    found = text_words(path)
    name = path.rsplit("/", 1)[-1].lower()
    return found + _NAMED_FILES.get(name.split(".", 1)[0] if "." in name[1:] else name, [])


def path_terms_of(path: str) -> list[str]:
    """:func:`path_words_of` folded by :func:`stem`, as the whole-passage mode counts them."""
    return [stem(word) for word in path_words_of(path)]


def query_words(question: str, *, compounds: bool = False) -> list[str]:
    """The distinct words of a question that BM25 scores: normalised, stop words dropped.

    With ``compounds``, each two neighbouring words also count glued together, as code
    names things: "review bot" finds ``src/reviewbot/``, "job queue" ``jobqueue``.
    """
    seen: dict[str, None] = {}
    kept = [
        word
        for word in text_words(question)
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit())
    ]
    for word in kept:
        seen.setdefault(word, None)
    if compounds:
        for left, right in zip(kept, kept[1:], strict=False):
            if left.isalpha() and right.isalpha():
                seen.setdefault(left + right, None)
    return list(seen)


# Words a team writes two ways, the short and the long (or a phrase and a prefix): a
# question in one finds a document in the other. Each word of a question also counts as its
# partners; they are general English and engineering abbreviations, not any repository's.
_SAME = (
    ("kubernetes", "k8s"),
    ("database", "db"),
    ("repository", "repo"),
    ("configuration", "config"),
    ("environment", "env"),
    ("documentation", "docs"),
    ("infrastructure", "infra"),
    ("authentication", "authn"),
    ("authorisation", "authorization", "authz"),
    ("certificate", "cert"),
    ("dependency", "deps"),
    ("organisation", "organization", "org"),
    ("colour", "color"),
    ("behaviour", "behavior"),
    ("licence", "license"),
)
_PHRASES = ((re.compile(r"\bmore than one\b|\bmultiple\b|\bseveral\b"), "multi"),)


def _partners() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for group in _SAME:
        for word in group:
            table[word] = tuple(w for w in group if w != word)
    return table


_PARTNERS = _partners()


def terms_of(question: str) -> list[str]:
    """The distinct terms of a question as the whole-passage mode scores them: stems.

    Each word is folded by :func:`stem` ("owners", "owns" and "owner" are one term;
    "approve" and "approvers" another); digits and words with other characters stay as they
    are, and neighbouring alphabetic words also count glued together as in
    :func:`query_words`. A word also brings the words written for it elsewhere
    (:data:`_SAME`: "k8s" and "kubernetes", "docs" and "documentation"; "more than one"
    brings "multi").
    """
    seen: dict[str, None] = {}
    for word in query_words(question, compounds=True):
        seen.setdefault(stem(word), None)
    for word in query_words(question):
        for partner in _PARTNERS.get(word, _PARTNERS.get(word.rstrip("s"), ())):
            seen.setdefault(stem(partner), None)
    lowered = question.casefold()
    for pattern, partner in _PHRASES:
        if pattern.search(lowered):
            seen.setdefault(stem(partner), None)
    return list(seen)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter2 (snowballstemmer's English), then an agent noun's "-er" folded to its verb.

    Porter2 keeps "owner" apart from "own" and "maintainer" from "maintain", which is the
    difference between a question ("who owns ...") and the file that answers it ("owners:").
    Words that are not plain ASCII letters, or of fewer than four letters, stay as they are.
    """
    if len(word) < 4 or not (word.isascii() and word.isalpha()):
        return word
    folded: str = _english().stemWord(word)
    if folded.endswith("er") and len(folded) > 4:
        folded = folded[:-2]
    return folded


@lru_cache(maxsize=1)
def _english() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def stem_occurrences(haystack: bytes, term: str) -> list[int]:
    """Start offsets of every whole word of ``haystack`` whose :func:`stem` is ``term``.

    One pass over the buffer for the term's prefix (Porter2's "y" to "i" aside, a stem is a
    prefix of the words it folds), then each hit's word is stemmed and kept if it folds to
    the term. A term that is not plain ASCII letters (digits, compounds of other scripts) is
    matched whole.
    """
    if len(term) < 3 or not (term.isascii() and term.isalpha()):
        return occurrences(haystack, term.encode())
    prefix = (term[:-1] if term.endswith("i") and len(term) > 3 else term).encode()
    needle = b" " + prefix
    folds: dict[bytes, bool] = {}  # each distinct word stemmed once
    found, at = [], haystack.find(needle)
    while at != -1:
        end = haystack.find(b" ", at + 1)
        word = haystack[at + 1 : end]
        keep = folds.get(word)
        if keep is None:
            keep = folds[word] = stem(word.decode("utf-8", "replace")) == term
        if keep:
            found.append(at)
        at = haystack.find(needle, end)
    return found


def occurrences(haystack: bytes, word: bytes) -> list[int]:
    """Start offsets of ``word`` as a whole word in a space-separated, space-padded buffer."""
    needle = b" " + word + b" "
    found, at = [], haystack.find(needle)
    while at != -1:
        found.append(at)  # flat[at] is the space before the word: big[at] is its first byte
        at = haystack.find(needle, at + len(word) + 1)
    return found


def bm25_scores(
    tf: npt.NDArray[np.float64], lengths: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """BM25 of each passage (rows of ``tf``: one per query word) given passage lengths."""
    import numpy as np

    count = lengths.shape[0]
    if count == 0 or tf.shape[0] == 0:
        return np.zeros(count)
    average = float(lengths.mean()) or 1.0
    df = (tf > 0).sum(axis=1)
    idf = np.log(1.0 + (count - df + 0.5) / (df + 0.5))
    norm = K1 * (1.0 - B + B * lengths / average)
    scores: npt.NDArray[np.float64] = (idf[:, None] * tf / (tf + norm[None, :])).sum(axis=0)
    return scores


def idf(n: int, df: int) -> float:
    """Lucene's BM25 idf, for readers checking :func:`bm25_scores` by hand."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def spaced_words(data: bytes) -> bytes:
    """``data`` with words lowercased and everything else a space, padded with a space.

    Each word then has a space on both sides, as :func:`occurrences` expects; offsets are
    those of ``data`` plus one.
    """
    return b" " + data.translate(_SEPARATE) + b" "

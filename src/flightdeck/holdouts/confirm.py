"""Reading a canary where a needle fired: decode the bytes around it, find the canary's tail.

A needle (:mod:`flightdeck.holdouts.needles`) says only that an encoded piece of the prefix
is there. This module decodes a small window of raw bytes every way the scan sees through
and returns each canary it finds with the raw offset where it starts, so that one canary
reached by several needles (or in two overlapping windows) counts once. The decodings, each
tracked back to raw offsets:

- text escapes, applied up to three times (``&amp;#70;`` -> ``&#70;`` -> ``F``): percent
  ``%46``, JSON ``\\u0046`` and ``\\n``-style escapes, ``\\x46``, HTML decimal, hex and named
  references (Python's HTML5 table);
- UTF-16 and UTF-32 in both byte orders, at each alignment;
- base64 and base64url runs (line-wrapped too), at each of the four character phases;
- then whitespace, line breaks and zero-width characters are dropped and ASCII letters
  lowered, so a canary split by a line break or written in another case reads whole.

Only windows where a needle fired are decoded (a few kB each), so the cost follows the hits,
not the size of the traces.
"""

from __future__ import annotations

import binascii
import functools
import re
from typing import Any

from flightdeck.holdouts.needles import CANARY_LEN, PREFIX, TAIL_LEN, Form

_PREFIX_LOWER = PREFIX.decode("ascii").lower()
_HEX = frozenset("0123456789abcdef")
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_DROPPED = frozenset(" \t\r\n\f\v\u00a0\u00ad\u200b\u200c\u200d\u2028\u2029\u2060\ufeff")
# Compiled when a needle first fires (a clean scan never needs them), cached by re
_ESCAPE = (
    r"%([0-9A-Fa-f]{2})|\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})|\\([nrtbf/\\\"'])"
    r"|&#[xX]([0-9A-Fa-f]{1,6});?|&#([0-9]{1,7});?|&([A-Za-z][A-Za-z0-9]{1,31};?)"
)
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_BASE64_RUN = r"[A-Za-z0-9+/_\-\s]{24,}"
_URL_TO_STD = str.maketrans("-_", "+/")
ROUNDS = 3

Found = tuple[int, bytes]  # (raw offset where the canary starts, its 32-hex tail)


def confirm(view: Any, lo: int, hi: int, form: Form | None = None) -> list[Found]:
    """The canaries in ``view[lo:hi]``, decoded as ``form`` (or every way when None).

    Offsets are positions in ``view``. Tails are lowercase; the caller decides whether each
    is registered.
    """
    lo, hi = max(0, lo), min(len(view), hi)
    if lo >= hi:
        return []
    raw = bytes(view[lo:hi])
    name = form.name if form is not None else ""
    found: list[Found] = []
    if form is None or not name.startswith(("utf-16", "utf-32")):
        text = raw.decode("latin-1")
        for decoded, where in _unescaped(text, list(range(len(text)))):
            found += _canaries(decoded, where)
            if form is None or name.startswith("base64"):
                found += _in_base64(decoded, where)
    if form is None or name.startswith(("utf-16", "utf-32")):
        for unit, big in ((2, False), (2, True), (4, False), (4, True)):
            if form is not None and form.name != f"utf-{8 * unit}-{'be' if big else 'le'}":
                continue
            for align in range(unit):
                ascii_at = align + unit - 1 if big else align
                text = raw[ascii_at::unit].decode("latin-1")
                # the offset of each character's ASCII byte: one canary read as UTF-16LE
                # and as UTF-16BE one byte on starts at the same offset, and counts once
                where = list(range(ascii_at, ascii_at + unit * len(text), unit))
                for decoded, mapped in _unescaped(text, where):
                    found += _canaries(decoded, mapped)
    return sorted({(lo + start, tail) for start, tail in found})


def _unescaped(text: str, where: list[int]) -> list[tuple[str, list[int]]]:
    """The text as it is, then after each round of unescaping that changed it."""
    rounds = [(text, where)]
    for _ in range(ROUNDS):
        decoded, mapped = _unescape_once(*rounds[-1])
        if decoded == rounds[-1][0]:
            break
        rounds.append((decoded, mapped))
    return rounds


def _unescape_once(text: str, where: list[int]) -> tuple[str, list[int]]:
    out: list[str] = []
    mapped: list[int] = []
    done = 0
    for match in re.finditer(_ESCAPE, text):
        value = _value(match)
        if value is None:
            continue
        out.append(text[done : match.start()])
        mapped += where[done : match.start()]
        out.append(value)
        mapped += [where[match.start()]] * len(value)
        done = match.end()
    out.append(text[done:])
    mapped += where[done:]
    return "".join(out), mapped


def _value(match: re.Match[str]) -> str | None:
    percent, json_u, escape_x, simple, hex_ref, decimal_ref, named = match.groups()
    number = next((v for v in (percent, json_u, escape_x, hex_ref) if v is not None), None)
    try:
        if number is not None:
            return chr(int(number, 16))
        if decimal_ref is not None:
            return chr(int(decimal_ref))
    except (ValueError, OverflowError):  # past U+10FFFF: not a character
        return None
    if simple is not None:
        return _SIMPLE.get(simple, simple)
    if named is not None:
        return _entities().get(named) or _entities().get(named.rstrip(";"))
    return None


def _canaries(text: str, where: list[int]) -> list[Found]:
    """Canaries in the text once whitespace is dropped and letters lowered."""
    if not text:
        return []
    keep = [i for i, char in enumerate(text) if char not in _DROPPED]
    flat = "".join(text[i] for i in keep).translate(_LOWER)
    found: list[Found] = []
    position = flat.find(_PREFIX_LOWER)
    while position != -1:
        tail = flat[position + len(PREFIX) : position + CANARY_LEN]
        if len(tail) == TAIL_LEN and _HEX.issuperset(tail):
            found.append((where[keep[position]], tail.encode("ascii")))
        position = flat.find(_PREFIX_LOWER, position + 1)
    return found


def _in_base64(text: str, where: list[int]) -> list[Found]:
    """Canaries inside base64 or base64url runs, wrapped or not, at every phase."""
    found: list[Found] = []
    for run in re.finditer(_BASE64_RUN, text):
        keep = [i for i in range(run.start(), run.end()) if not text[i].isspace()]
        chars = "".join(text[i] for i in keep).translate(_URL_TO_STD)
        for phase in range(4):
            usable = (len(chars) - phase) // 4 * 4
            if usable < 4 * (CANARY_LEN // 3):
                break
            try:
                data = binascii.a2b_base64(chars[phase : phase + usable], strict_mode=True)
            except (binascii.Error, ValueError):
                continue
            decoded = data.decode("latin-1")
            groups = [where[keep[phase + 4 * (j // 3)]] for j in range(len(decoded))]
            for inner, mapped in _unescaped(decoded, groups):
                found += _canaries(inner, mapped)
    return found


@functools.cache
def _entities() -> dict[str, str]:
    """HTML5's named character references (a module of 2,000 entries: loaded on first use)."""
    import html.entities

    return html.entities.html5

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
# Compiled when a needle first fires (a clean scan never needs them), cached by re.
# The characters of _DROPPED as UTF-8 read byte by byte (windows are decoded as latin-1),
# and a quoted-printable soft line break (``=`` at a line's end).
_DROPPED_BYTES = (
    "|".join(re.escape(c.encode("utf-8").decode("latin-1")) for c in sorted(_DROPPED) if c > "~")
    + r"|=\r?\n"
)
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)
_HEX_RUN = rf"[0-9A-Fa-f][0-9A-Fa-f: \t\r\n]{{{2 * CANARY_LEN - 1},}}"
_BASE32_RUN = rf"[A-Z2-7][A-Z2-7=\s]{{{8 * CANARY_LEN // 5},}}"
_OBFUSCATED = ("hex", "base32", "rot13", "reversed")
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
        if form is None or name.startswith(_OBFUSCATED):
            found += _deobfuscated(text, name)
        if form is None or name.startswith("fullwidth"):
            for decoded, where in _unescaped(text, list(range(len(text)))):
                found += _canaries(*_nfkc(decoded, where))
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
    gone = {i for m in re.finditer(_DROPPED_BYTES, text) for i in range(m.start(), m.end())}
    keep = [i for i, char in enumerate(text) if char not in _DROPPED and i not in gone]
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


def _deobfuscated(text: str, name: str) -> list[Found]:
    """Canaries under hex, base32, ROT13 or reversal (every one when ``name`` is empty);
    ``text`` is the window's bytes as latin-1."""
    found: list[Found] = []
    everything = not name
    if everything or name.startswith("hex"):
        found += _in_runs(text, _HEX_RUN, 2, _from_hex)
    if everything or name.startswith("base32"):
        found += _in_runs(text, _BASE32_RUN, 8, _from_base32)
    if everything or name.startswith("rot13"):
        found += _canaries(text.translate(_ROT13), list(range(len(text))))
    if everything or name.startswith("reversed"):
        found += _canaries(text[::-1], list(range(len(text) - 1, -1, -1)))
    return found


def _from_hex(chars: str) -> bytes:
    return bytes.fromhex(chars)


def _from_base32(chars: str) -> bytes:
    import base64

    return base64.b32decode(chars)


def _in_runs(text: str, runs: str, group: int, decode: Any) -> list[Found]:
    """Canaries in runs of an encoding whose ``group`` characters make whole bytes."""
    found: list[Found] = []
    per_group = {2: 1, 8: 5}[group]
    for run in re.finditer(runs, text):
        keep = [i for i in range(run.start(), run.end()) if text[i] not in ": \t\r\n"]
        chars = "".join(text[i] for i in keep)
        for phase in range(group):
            usable = (len(chars) - phase) // group * group
            if usable < group * CANARY_LEN // per_group:
                break
            piece = chars[phase : phase + usable]
            if group == 8 and usable < len(chars) - phase:  # the last group, padded
                piece = chars[phase:].rstrip("=")
                piece += "=" * (-len(piece) % 8)
            try:
                data = decode(piece)
            except (binascii.Error, ValueError):
                continue
            decoded = data.decode("latin-1")
            where = [_where_of(keep, phase, group, per_group, j) for j in range(len(decoded))]
            found += _canaries(decoded, where)
    return found


def _where_of(keep: list[int], phase: int, group: int, per_group: int, byte: int) -> int:
    """The text offset of the group of characters that holds decoded byte ``byte``."""
    return keep[phase + group * (byte // per_group)]


def _nfkc(text: str, where: list[int]) -> tuple[str, list[int]]:
    """The text with each character in its NFKC form (fullwidth letters to ASCII).

    Characters below U+0100 are bytes of the window read as latin-1, so they are decoded as
    UTF-8 first; others came from an unescaping round and are characters already.
    """
    import unicodedata

    out: list[str] = []
    mapped: list[int] = []
    index = 0
    while index < len(text):
        lead = ord(text[index])
        size = 1 if lead < 0xC0 or lead > 0xFF else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        piece = text[index : index + size]
        if size > 1:
            piece = piece.encode("latin-1", "replace").decode("utf-8", "replace")
        normal = unicodedata.normalize("NFKC", piece) if piece > "~" else piece
        out.append(normal)
        mapped += [where[index]] * len(normal)
        index += size
    return "".join(out), mapped

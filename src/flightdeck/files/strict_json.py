"""Strict JSON: one decoder for every file a person or a harness gives flightdeck.

``json`` and msgspec both keep the last of two equal keys without a word, ``json`` crashes
(ValueError) on an integer of more than 4,300 digits and reads NaN, and both let a file
through that cannot be written back. :func:`loads_strict` refuses all of these with a
:class:`JSONProblem` that says what is wrong; :mod:`flightdeck.files.jsonl` turns it into the
``<file>:<line>`` error. The decode is msgspec's (in C); only bytes it refuses, or whose
keys repeat, are read again with ``json`` to say what and where.

A harness's result is decoded the same way: call :func:`loads_strict` on its bytes and turn
a :class:`JSONProblem` into the trial's protocol error (``exc.what`` says what is wrong).
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from flightdeck.errors import HandledError, JSONProblem


def loads_strict(data: bytes) -> Any:
    """One JSON value, refusing what ``json`` and msgspec would let through or crash on.

    Refused with a :class:`JSONProblem`: bytes that are not UTF-8, a byte-order mark, bad
    syntax (NaN and Infinity included), a key given twice in one object at any depth (json
    and msgspec keep the last without a word), an integer of more digits than Python reads
    (``sys.get_int_max_str_digits()``), a float beyond the double range, a lone surrogate
    escape, nesting deeper than the interpreter's recursion limit. Valid input is decoded once
    in C by msgspec and checked for repeated keys by :func:`keys_repeated`; only bytes that
    fail are read again, with ``json``, to say what is wrong and where.
    """
    import msgspec

    try:
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:  # ValidationError: a number too large
        problem = _diagnose(data)
        if problem is None:  # json reads what msgspec refused: quote msgspec
            problem = JSONProblem("syntax", f"not JSON ({exc})")
        raise problem from None
    if keys_repeated([data], [value]):
        problem = _diagnose(data)
        if problem is not None:
            raise problem
    return value  # an escaped colon made the count look short, and no key repeats


def keys_repeated(lines: list[bytes], values: Iterable[Any]) -> bool:
    """Whether any of ``lines`` (JSON texts, ``values`` their decoded values) repeats a key.

    Every key of a JSON text ends with the one ``:`` outside strings that follows it; a
    decoder keeps one entry per distinct key. Encoded again, each value has one ``:`` per
    entry it kept, and the same ``:`` inside its strings as the text (msgspec never escapes
    one), so the text has more exactly when a key was dropped. A text that writes a colon as
    ``\\u003a`` would be counted short, so it answers True and the caller looks closer.
    """
    encoding, buffer = encoder(), bytearray()
    for value in values:
        encoding.encode_into(value, buffer, -1)
    colons = sum(text.count(b":") for text in lines)
    escaped = any(b"\\u003" in text and ESCAPED_COLON.search(text) for text in lines)
    return escaped or colons != buffer.count(b":")


def texts_repeat_a_key(texts: list[bytes]) -> bool:
    """:func:`keys_repeated` for many texts, each known to be one valid JSON value.

    The texts are decoded as JSON arrays of :data:`_BLOCK` at a time (each text is a whole
    value, so joined by commas they are exactly the array's items), and each array is
    encoded again once: two calls into msgspec per block instead of two per text. The
    decoded values are dropped block by block, so few of them are alive when the garbage
    collector runs (a block of thousands costs more than two calls a text: each collection
    walks every live container).
    """
    import msgspec

    decode, encode = _decoder().decode, encoder().encode
    for start in range(0, len(texts), _BLOCK):
        part = texts[start : start + _BLOCK]
        joined = b"[" + b",".join(part) + b"]"
        colons = joined.count(b":")
        if colons and b"\\u003" in joined and ESCAPED_COLON.search(joined):
            return True
        try:
            values = decode(joined)
        except msgspec.DecodeError:  # not the valid values the caller promised: look closer
            return True
        if colons != encode(values).count(b":"):
            return True
    return False


_BLOCK = 128  # texts decoded at once by texts_repeat_a_key (64 to 256 cost the same)


@functools.cache
def _decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder()


@functools.cache
def encoder() -> Any:
    """The one msgspec JSON encoder the colon counts use (compact, never escapes ``:``)."""
    import msgspec

    return msgspec.json.Encoder()


ESCAPED_COLON = re.compile(rb"\\u003[aA]")


def _diagnose(data: bytes) -> JSONProblem | None:
    """What is wrong with bytes msgspec refused (or whose keys repeat), read with ``json``."""
    if data.startswith(b"\xef\xbb\xbf"):
        return JSONProblem("bom", "starts with a byte-order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JSONProblem("encoding", f"not UTF-8 (byte {exc.start + 1})")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_pairs,
            parse_int=_bounded_int,
            parse_float=_bounded_float,
            parse_constant=_no_constant,
        )
    except _Problem as exc:
        line = _line_of_key(text, exc.key) if exc.key else _line_of_number(text, exc.number)
        return JSONProblem(exc.kind, exc.what, line)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if "\n" in text else f"column {exc.colno}"
        return JSONProblem("syntax", f"not JSON ({exc.msg} at {where})", exc.lineno)
    except RecursionError:
        return JSONProblem("depth", "JSON nested too deeply")
    if has_lone_surrogate(value):
        what = "holds an unpaired surrogate escape (\\ud800-\\udfff)"
        return JSONProblem("surrogate", what, value=value)
    return None


class _Problem(HandledError):
    def __init__(self, kind: str, what: str, key: str | None = None, number: str = "") -> None:
        super().__init__(what)
        self.kind, self.what, self.key = kind, what, key
        self.number = number  # a number refused, as written


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Problem("duplicate", f"duplicate key {_quoted(key)} in one object", key)
            seen.add(key)
    return obj


def _bounded_int(digits: str) -> int:
    limit = sys.get_int_max_str_digits()
    if limit and len(digits.lstrip("-")) > limit:
        what = f"an integer of {len(digits.lstrip('-')):,} digits (more than {limit:,})"
        raise _Problem("number", f"holds {what}", number=digits)
    return int(digits)


def _bounded_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        what = f"holds a number too large for a float ({_quoted(text)})"
        raise _Problem("number", what, number=text)
    return value


def _no_constant(name: str) -> float:
    raise _Problem("syntax", f"not JSON ({name} is not a JSON number)")


def _quoted(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _line_of_key(text: str, key: str) -> int | None:
    """The line of the second ``"key":`` in a text with newlines (a document); None on one line."""
    if "\n" not in text.strip():
        return None
    pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:")
    hits = [m.start() for m in pattern.finditer(text)]
    return text.count("\n", 0, hits[1]) + 1 if len(hits) > 1 else None


def _line_of_number(text: str, number: str) -> int | None:
    """The line of the first ``number`` written outside a string, in a text with newlines (a
    document); None on one line. ``json`` reads numbers in the order they are written, so the
    first one it refused is the first one written so."""
    if not number or "\n" not in text.strip():
        return None
    for token in _TOKEN.finditer(text):
        if token[0] == number:
            return text.count("\n", 0, token.start()) + 1
    return None  # pragma: no cover - json read the number from this text


# A JSON string or number: a string is skipped whole, so a number is never found inside one.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')


def line_of_place(data: bytes, place: Sequence[str | int]) -> int | None:
    """The line of the value at ``place`` (object keys and item numbers) in ``data``, a strict
    JSON text with newlines (a document): the line of its key in an object, or of the item
    itself; when the place is not all there, the line of as much of it as is. None on one
    line, or for the place ``()`` (the whole value).

    Walked with ``json``'s own scanner, which skips each value before the one wanted in C;
    only an error message asks for it, never a valid file.
    """
    text = data.decode("utf-8")
    if "\n" not in text.strip() or not place:
        return None
    decoder, found = json.JSONDecoder(), None
    at = _past_white(text, 0)
    for step in place:
        hit = _find(decoder, text, at, step)
        if hit is None:
            break
        found, at = hit
    return None if found is None else text.count("\n", 0, found) + 1


def _find(decoder: json.JSONDecoder, text: str, at: int, step: str | int) -> tuple[int, int] | None:
    """Where the entry ``step`` of the object or array at ``at`` starts, and its value starts."""
    opening, closing = ("{", "}") if isinstance(step, str) else ("[", "]")
    if not text.startswith(opening, at):
        return None
    at, number = _past_white(text, at + 1), 0
    while not text.startswith(closing, at):
        start = at
        if opening == "{":
            key, at = decoder.raw_decode(text, at)  # a key is a JSON string
            at = _past_white(text, _past_white(text, at) + 1)  # past the ":"
            if key == step:
                return start, at
        elif number == step:
            return start, at
        _, at = decoder.raw_decode(text, at)
        at = _past_white(text, at)
        at = _past_white(text, at + 1) if text.startswith(",", at) else at
        number += 1
    return None


def _past_white(text: str, at: int) -> int:
    """Where the first character at or after ``at`` that is not JSON white space is."""
    white = _WHITE.match(text, at)
    return at if white is None else white.end()


_WHITE = re.compile(r"[ \t\n\r]*")


def has_lone_surrogate(value: Any) -> bool:
    """Whether a plain JSON value holds a string that cannot be written as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, list):
        return any(map(has_lone_surrogate, value))
    if isinstance(value, dict):
        return any(map(has_lone_surrogate, value)) or any(map(has_lone_surrogate, value.values()))
    return False

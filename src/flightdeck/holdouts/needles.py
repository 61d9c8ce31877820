"""What the scan searches for: the canary prefix in every encoding it sees through.

Every canary starts with the same long prefix (``CANARY_PREFIX``). Each encoding turns that
prefix into a fixed string of its own, known before any file is read: base64 and base64url at
the three byte offsets a canary can start at inside a longer blob, percent-encoding, JSON
``\\u`` and ``\\x`` escapes, HTML decimal and hex references (also HTML-escaped once more,
``&amp;#70;``), UTF-16 and UTF-32 in both byte orders, and the prefix itself in any letter
case. All of them are *needles* of one multi-pattern search (Hyperscan: one SIMD pass over
the bytes whatever the number of needles), so the plain pass and the encoded ones cost one
read of the text.

A canary split by a line break or whitespace still leaves a long piece of its prefix intact:
the plain and base64 forms are also searched as overlapping fragments (:data:`FRAGMENT`
bytes every :data:`STRIDE`), so any intact run of ``FRAGMENT + STRIDE - 1`` (25) characters
of the prefix fires, and any 31 of its base64 form (a line wrap at 64 or 76 columns leaves at
least 33). A needle only says where to look: :mod:`flightdeck.holdouts.confirm` decodes
the bytes around it and reads the canary's tail there.
"""

from __future__ import annotations

import base64
import functools
import math
from dataclasses import dataclass

from flightdeck.suite.schema import CANARY_PREFIX

PREFIX = CANARY_PREFIX.encode("ascii")
TAIL_LEN = 32
CANARY_LEN = len(PREFIX) + TAIL_LEN
FRAGMENT = 18  # plain-prefix fragments: any 25 intact characters of the prefix fire
STRIDE = 8
B64_FRAGMENT = 24  # base64 fragments: any 31 intact characters of the encoded prefix fire
B64_STRIDE = 8
EXTENT = 2048  # the most raw bytes one encoded canary may span (its decoding window)
LONGEST = 10 * len(PREFIX)  # the longest needle: the prefix as &amp;#x46; references
# Characters that show nothing, which a writer may put between a canary's letters.
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")


@dataclass(frozen=True, slots=True)
class Form:
    """One encoding of the canary: its name, the prefix as it encodes, where the canary starts.

    ``lead`` is the number of raw bytes from the canary's start (for base64, the start of the
    4-character group that holds its first byte) to ``encoded``; ``span`` the raw length of
    a whole encoded canary, so a hit can be confirmed on exactly those bytes first.
    """

    name: str
    encoded: bytes
    lead: int
    span: int
    caseless: bool


@dataclass(frozen=True, slots=True)
class Needle:
    """A searched string: a piece of ``form.encoded`` from byte ``offset``."""

    form: Form
    offset: int
    text: bytes

    def canary_start(self, end: int) -> int:
        """Where the canary starts, given where this needle ends (if the form is intact)."""
        return end - len(self.text) - self.offset - self.form.lead


def _escaped(template: str, only: bytes | None = None) -> bytes:
    """The prefix with every character (or those in ``only``) escaped by ``template``."""
    return "".join(template % c if only is None or c in only else chr(c) for c in PREFIX).encode(
        "ascii"
    )


def forms() -> tuple[Form, ...]:
    """Every encoding of the prefix that the scan searches for, the plain one first."""
    found = [Form("plain", PREFIX, 0, CANARY_LEN, caseless=True)]
    for url in (False, True):
        for shift in range(3):
            encoded = base64.b64encode(b"\0" * shift + PREFIX)
            if url:
                encoded = encoded.translate(bytes.maketrans(b"+/", b"-_"))
            first = math.ceil(8 * shift / 6)  # the first character no earlier byte touches
            last = 8 * (shift + len(PREFIX)) // 6  # past the last one that no tail byte does
            span = 4 * math.ceil((shift + CANARY_LEN) / 3)
            name = f"base64{'url' if url else ''}+{shift}"
            form = Form(name, encoded[first:last], first, span, caseless=False)
            if all(form.encoded != f.encoded for f in found):
                found.append(form)
    # Case-sensitive needles, one per hex case, search faster than one caseless needle each
    # (measured with the benchmark's traces on one core: 63 needles of which only the plain
    # ones caseless, 2.25 GB/s of CPU time; 47 of which every escape and UTF form caseless, 1.5)
    for name, template, ratio in (
        ("percent", "%%%02X", 3),
        ("json-u", "\\u%04X", 6),
        ("json-u-in-json", "\\\\u%04X", 7),  # \u escapes written into a JSON string again
        ("escape-x", "\\x%02X", 4),
        ("html-decimal", "&#%d;", 5),
        ("html-hex", "&#x%X;", 6),
        ("html-decimal-escaped", "&amp;#%d;", 9),
        ("html-hex-escaped", "&amp;#x%X;", 10),
    ):
        cases = [("", template)]
        if "X" in template:
            cases.append(("-lower-hex", template.replace("X", "x")))
        for case, written in cases:
            full = Form(f"{name}{case}", _escaped(written), 0, CANARY_LEN * ratio, False)
            # an encoder that escapes punctuation only: the dashes escaped, the letters as is
            dashes = Form(f"{name}{case}-dashes", _escaped(written, b"-"), 0, CANARY_LEN * 2, False)
            found += [full, dashes]
    for codec, unit in (("utf-16-le", 2), ("utf-16-be", 2), ("utf-32-le", 4), ("utf-32-be", 4)):
        encoded = CANARY_PREFIX.encode(codec)
        found.append(Form(codec, encoded, 0, CANARY_LEN * unit, caseless=False))
    return tuple(found + _obfuscated())


def _obfuscated() -> list[Form]:
    """Forms an evasive writer picks: hex, base32, ROT13, reversed, zero-width, fullwidth."""
    found: list[Form] = []
    for case, hexed in (("", PREFIX.hex()), ("-upper", PREFIX.hex().upper())):
        found.append(Form(f"hex{case}", hexed.encode(), 0, CANARY_LEN * 2, False))
        spaced = " ".join(hexed[i : i + 2] for i in range(0, len(hexed), 2)).encode()
        found.append(Form(f"hex{case}-spaced", spaced, 0, CANARY_LEN * 3, False))
    for shift in range(5):
        encoded = base64.b32encode(b"\0" * shift + PREFIX)
        first, last = math.ceil(8 * shift / 5), 8 * (shift + len(PREFIX)) // 5
        span = 8 * math.ceil((shift + CANARY_LEN) / 5)
        found.append(Form(f"base32+{shift}", encoded[first:last], first, span, False))
    rot13 = bytes.maketrans(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        b"NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
    )
    for case, text in (("", PREFIX), ("-lower", PREFIX.lower())):
        found.append(Form(f"rot13{case}", text.translate(rot13), 0, CANARY_LEN, False))
        # reversed: the tail comes first, so the canary starts TAIL_LEN before the needle
        found.append(Form(f"reversed{case}", text[::-1], TAIL_LEN, CANARY_LEN, False))
    # each as UTF-8 and as JSON \\u escapes (Python's json.dumps writes non-ASCII so)
    for mark in ZERO_WIDTH:  # one between every two characters
        name = f"zero-width-{ord(mark):04x}"
        joined = mark.join(CANARY_PREFIX).encode("utf-8")
        found.append(Form(name, joined, 0, CANARY_LEN * 4, False))
        escaped = (f"\\u{ord(mark):04x}").join(CANARY_PREFIX).encode()
        found.append(Form(f"{name}-json-u", escaped, 0, CANARY_LEN * 7, False))
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in CANARY_PREFIX)
    found.append(Form("fullwidth", fullwidth.encode("utf-8"), 0, CANARY_LEN * 3, False))
    escaped = "".join(f"\\u{ord(c):04x}" for c in fullwidth).encode()
    found.append(Form("fullwidth-json-u", escaped, 0, CANARY_LEN * 6, False))
    return found


@functools.cache
def needles() -> tuple[Needle, ...]:
    """Every needle: the whole encoded prefix, or for plain and base64 its fragments.

    Fewer, longer needles search faster (measured on 100 MB of traces, one core: 16-byte
    plain fragments every 4 bytes and 20-byte base64 ones every 8 ran at 1.3 GB/s, the 18/8
    and 24/8 kept here at 2.1 GB/s).
    """
    found: list[Needle] = []
    for form in forms():
        assert len(form.encoded) <= LONGEST, form.name
        if form.name == "plain":
            size, stride = FRAGMENT, STRIDE
        elif form.name.startswith("base64"):
            size, stride = B64_FRAGMENT, B64_STRIDE
        else:
            found.append(Needle(form, 0, form.encoded))
            continue
        for offset in range(0, len(form.encoded) - size + 1, stride):
            found.append(Needle(form, offset, form.encoded[offset : offset + size]))
        if (len(form.encoded) - size) % stride:  # the last piece too
            offset = len(form.encoded) - size
            found.append(Needle(form, offset, form.encoded[offset:]))
    return tuple(found)

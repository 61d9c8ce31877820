"""The real `flightdeck holdout canary-scan` sees through the forms an evasive writer picks.

Found by a red-team pass over the scan (#20): hex (plain or spaced, either case), base32 at
each byte offset, ROT13, reversed text, a zero-width character (or a soft hyphen) between
every two letters or at one split, a non-breaking space at a split, a quoted-printable soft
line break, and fullwidth letters (their NFKC form), raw or as JSON escapes, each hid a canary. Each form here is made
with the standard library's encoders and scanned by the installed command; the clean traces
are hashes, hex dumps, base32 secrets, reversed and ROT13 prose, fullwidth text and emoji
with zero-width joiners, and the same forms of an unregistered canary: nothing is a hit.
"""

from __future__ import annotations

import base64
import codecs
import json
import quopri
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.cli.test_canary_encodings import (
    CANARY,
    CANARY_PREFIX,
    assert_one_hit,
    holdouts,
    scan,
    trace_with,
)

from flightdeck.holdouts.registry import suite_state

__all__ = ["holdouts"]  # a fixture, used by name
UNREGISTERED = f"{CANARY_PREFIX}{0xABC:032x}"


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def b32(shift: int) -> Callable[[str], str]:
    return lambda c: base64.b32encode(b"x" * shift + c.encode() + b"tail").decode()


def spaced_hex(c: str) -> str:
    return " ".join(f"{b:02x}" for b in c.encode())


FORMS = [
    pytest.param(lambda c: c.encode().hex(), id="hex"),
    pytest.param(lambda c: c.encode().hex().upper(), id="hex-upper"),
    pytest.param(spaced_hex, id="hex-spaced"),
    pytest.param(lambda c: spaced_hex(c).upper(), id="hex-spaced-upper"),
    *(pytest.param(b32(shift), id=f"base32-offset-{shift}") for shift in range(5)),
    pytest.param(lambda c: codecs.encode(c, "rot13"), id="rot13"),
    pytest.param(lambda c: codecs.encode(c.lower(), "rot13"), id="rot13-lower"),
    pytest.param(lambda c: c[::-1], id="reversed"),
    pytest.param(lambda c: c[::-1].lower(), id="reversed-lower"),
    *(
        pytest.param(lambda c, m=mark: m.join(c), id=f"zero-width-{ord(mark):04x}-everywhere")
        for mark in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
    ),
    pytest.param(lambda c: c[:30] + "\u200b" + c[30:], id="zero-width-once"),
    pytest.param(lambda c: c[:45] + "\u00a0" + c[45:], id="nbsp-once"),
    pytest.param(
        lambda c: quopri.encodestring(("x" * 50 + c).encode()).decode().replace("\n", "\\n"),
        id="quoted-printable-soft-break-json",
    ),
    pytest.param(lambda c: c[:40] + "=\r\n" + c[40:], id="quoted-printable-soft-break-crlf"),
    pytest.param(fullwidth, id="fullwidth"),
    # as Python's json.dumps writes them: every non-ASCII character a \u escape
    pytest.param(lambda c: json.dumps("\u200b".join(c))[1:-1], id="zero-width-json-escaped"),
    pytest.param(lambda c: json.dumps("\u00ad".join(c))[1:-1], id="soft-hyphen-json-escaped"),
    pytest.param(lambda c: json.dumps(fullwidth(c))[1:-1], id="fullwidth-json-escaped"),
]


@pytest.mark.slow
@pytest.mark.parametrize("encode", FORMS)
def test_an_obfuscated_canary_is_found_on_its_line(
    holdouts: Path, tmp_path: Path, encode: Callable[[str], str]
) -> None:
    file = tmp_path / "traces" / "arm" / "q1.jsonl"
    file.parent.mkdir(parents=True)
    file.write_bytes(trace_with(encode(CANARY)))
    assert_one_hit(holdouts, file, 3)


def test_clean_traces_shaped_like_the_obfuscated_forms_are_clean(
    holdouts: Path, tmp_path: Path
) -> None:
    rng = random.Random(11)
    prose = "the gateway holds the provider keys and records each call's cost " * 40
    lines = [
        *(rng.randbytes(32).hex() for _ in range(2000)),  # sha256-like hashes
        *(spaced_hex(rng.randbytes(64).decode("latin-1")) for _ in range(200)),
        *(base64.b32encode(rng.randbytes(20)).decode() for _ in range(500)),  # TOTP secrets
        prose[::-1],
        codecs.encode(prose, "rot13"),
        fullwidth("FLIGHTDECK SEALED REPORT 2026") + " 日本語のテキスト",
        "👩\u200d💻 and 👨\u200d👩\u200d👧 with\u00a0non-breaking\u00a0spaces and soft\u00adhyphens",
        # the canary's shape with a tail nobody registered, in each form
        UNREGISTERED.encode().hex(),
        codecs.encode(UNREGISTERED, "rot13"),
        UNREGISTERED[::-1],
        "\u200b".join(UNREGISTERED),
        fullwidth(UNREGISTERED),
        b32(2)(UNREGISTERED),
    ]
    file = tmp_path / "traces" / "run.jsonl"
    file.parent.mkdir(parents=True)
    file.write_text("\n".join(json.dumps({"content": line}) for line in lines) + "\n")
    code, report, stderr = scan(holdouts, file.parent)
    assert (code, report["hit_count"]) == (0, 0), stderr
    assert report["unregistered"] == 6
    assert suite_state(holdouts, "demo-v1") == "sealed"

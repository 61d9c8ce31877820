"""The real `flightdeck holdout canary-scan` sees a canary through encodings, and only then.

Each case writes a real file holding one registered canary in one encoding (made with the
standard library's own encoders: base64, urllib, codecs, gzip, zipfile, ...) and runs the
installed `flightdeck` command on it: exit 1, the hit on the line where the encoded canary
starts, the suite void. The clean cases are traces that look like the encoded ones (JSON
logs, base64 images, minified script, UTF-16 text, nested archives) without a canary: exit 0,
nothing void.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import io
import json
import lzma
import random
import subprocess
import sys
import urllib.parse
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from flightdeck.holdouts.registry import register_suite, suite_state
from flightdeck.suite.records import CANARY_PREFIX

FLIGHTDECK = str(Path(sys.executable).with_name("flightdeck"))
CANARY = f"{CANARY_PREFIX}{0x5EED:032x}"
OTHER = f"{CANARY_PREFIX}{0xBEEF:032x}"  # registered too: must not be reported
RNG = random.Random(20)
NOISE = bytes(RNG.getrandbits(8) for _ in range(3000))


def b64(shift: int, *, url: bool = False, wrap: bool = False) -> Callable[[str], str]:
    def encode(canary: str) -> str:
        data = NOISE[:shift] + canary.encode() + NOISE[100:400]
        if wrap:
            return base64.encodebytes(data).decode()  # MIME: 76 columns
        return (base64.urlsafe_b64encode if url else base64.b64encode)(data).decode()

    return encode


def each(template: str, only: str | None = None) -> Callable[[str], str]:
    return lambda c: "".join(template % ord(ch) if only is None or ch in only else ch for ch in c)


def split(at: int, sep: str) -> Callable[[str], str]:
    return lambda c: c[:at] + sep + c[at:]


TEXT_FORMS = [
    pytest.param(b64(0), id="base64-offset-0"),
    pytest.param(b64(1), id="base64-offset-1"),
    pytest.param(b64(2), id="base64-offset-2"),
    pytest.param(b64(0, url=True), id="base64url-offset-0"),
    pytest.param(b64(1, url=True), id="base64url-offset-1"),
    pytest.param(b64(2, url=True), id="base64url-offset-2"),
    pytest.param(b64(1, wrap=True), id="base64-mime-wrapped"),
    pytest.param(lambda c: urllib.parse.quote(c, safe=""), id="urlencoded"),
    pytest.param(each("%%%02x"), id="percent-every-char"),
    pytest.param(each("%%%02X", only="-"), id="percent-dashes"),
    pytest.param(each("\\u%04x"), id="json-u-every-char"),
    pytest.param(each("\\u%04X", only="-"), id="json-u-dashes"),
    pytest.param(lambda c: json.dumps(each("\\u%04x")(c))[1:-1], id="json-u-inside-json"),
    pytest.param(lambda c: json.dumps({"k": c})[7:-2], id="json-dumps"),
    pytest.param(each("&#%d;"), id="html-decimal"),
    pytest.param(each("&#x%x;"), id="html-hex"),
    pytest.param(each("&#%d;", only="-"), id="html-decimal-dashes"),
    pytest.param(lambda c: each("&#%d;")(c).replace("&", "&amp;"), id="html-named-amp"),
    pytest.param(str.lower, id="lowercase"),
    pytest.param(str.upper, id="uppercase"),
    pytest.param(str.swapcase, id="swapcase"),
    pytest.param(str.title, id="titlecase"),
    pytest.param(split(26, "\n"), id="split-line-break-in-prefix"),
    pytest.param(split(60, "\r\n"), id="split-crlf-in-tail"),
    pytest.param(split(30, "\\n"), id="split-json-escaped-newline"),
    pytest.param(split(20, "  \t "), id="split-whitespace"),
    pytest.param(lambda c: c[:40] + "\n" + c[40:80] + "\n" + c[80:], id="hard-wrapped-40"),
]


@pytest.fixture
def holdouts(tmp_path: Path) -> Path:
    folder = tmp_path / "holdouts"
    register_suite(folder, suite="demo-v1", manifest_sha256="a" * 64, canaries={"q1": CANARY})
    register_suite(folder, suite="other-v1", manifest_sha256="b" * 64, canaries={"q1": OTHER})
    return folder


def scan(holdouts: Path, *paths: Path) -> tuple[int, dict[str, object], str]:
    process = subprocess.run(
        [FLIGHTDECK, "holdout", "canary-scan", "--holdouts", str(holdouts), "--json"]
        + [str(p) for p in paths],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in process.stderr, process.stderr
    return process.returncode, json.loads(process.stdout or "{}"), process.stderr


def trace_with(payload: str) -> bytes:
    """Two records, then a tool result whose content holds ``payload`` on line 3 (and on)."""
    lines = [
        json.dumps({"step": 1, "type": "message", "content": "reading the docs"}),
        json.dumps({"step": 2, "type": "tool_call", "name": "read_file"}),
    ]
    return ("\n".join(lines) + '\n{"step": 3, "content": "' + payload + '"}\n').encode()


def assert_one_hit(holdouts: Path, file: Path, line: int) -> None:
    code, report, stderr = scan(holdouts, file.parent)
    assert code == 1, (report, stderr)
    assert report["hits"] == [
        {"canary": CANARY, "suite": "demo-v1", "question_id": "q1", "file": str(file), "line": line}
    ]
    assert report["hit_count"] == 1
    assert suite_state(holdouts, "demo-v1") == "void"
    assert suite_state(holdouts, "other-v1") == "sealed"


@pytest.mark.slow
@pytest.mark.parametrize("encode", TEXT_FORMS)
def test_an_encoded_canary_is_found_on_its_line(
    holdouts: Path, tmp_path: Path, encode: Callable[[str], str]
) -> None:
    encoded = encode(CANARY)
    file = tmp_path / "traces" / "arm" / "q1.jsonl"
    file.parent.mkdir(parents=True)
    file.write_bytes(trace_with(encoded))
    assert_one_hit(holdouts, file, 3)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-16"])
def test_a_canary_in_utf16_or_utf32_text(holdouts: Path, tmp_path: Path, codec: str) -> None:
    text = "line one\nline two\nkey: " + CANARY.upper() + "\nend\n"
    file = tmp_path / "traces" / "notes.txt"
    file.parent.mkdir(parents=True)
    file.write_bytes(text.encode(codec))
    code, report, _ = scan(holdouts, file.parent)
    assert code == 1
    assert [(h["canary"], h["file"]) for h in report["hits"]] == [(CANARY, str(file))]  # type: ignore[index, union-attr]


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zipped(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


TRACE = trace_with(CANARY)  # the canary on line 3
CLEAN = trace_with("nothing to see")
NESTED = [
    pytest.param("t.jsonl.gz", gz(gz(TRACE)), 3, id="gzip-in-gzip"),
    pytest.param("t.jsonl.gz", gz(gz(gz(TRACE))), 3, id="gzip-in-gzip-in-gzip"),
    pytest.param("t.jsonl.zst", zstandard.ZstdCompressor().compress(gz(TRACE)), 3, id="gz-in-zst"),
    pytest.param("t.jsonl.xz", lzma.compress(bz2.compress(TRACE)), 3, id="bz2-in-xz"),
    pytest.param("t.jsonl.bz2", bz2.compress(lzma.compress(TRACE)), 3, id="xz-in-bz2"),
    pytest.param("t.zip", zipped({"a.jsonl": TRACE}), 3, id="zip-deflate"),
    pytest.param("t.zip", zipped({"a.jsonl": TRACE}, zipfile.ZIP_BZIP2), 3, id="zip-bzip2"),
    # members are read in order, each from a new line: CLEAN has 3 lines, so line 3 + 3
    pytest.param("t.zip", zipped({"a.txt": CLEAN, "b.jsonl.gz": gz(TRACE)}), 6, id="gz-in-zip"),
    pytest.param(
        "t.gz", gz(TRACE.replace(CANARY.encode(), b64(2)(CANARY).encode())), 3, id="base64-in-gzip"
    ),  # fmt: skip
]


@pytest.mark.parametrize(("name", "data", "line"), NESTED)
def test_a_canary_inside_nested_compression_or_zip(
    holdouts: Path, tmp_path: Path, name: str, data: bytes, line: int
) -> None:
    file = tmp_path / "traces" / name
    file.parent.mkdir(parents=True)
    file.write_bytes(data)
    assert_one_hit(holdouts, file, line)


def test_every_encoding_of_many_canaries_is_counted_once(holdouts: Path, tmp_path: Path) -> None:
    """Several needles reach each canary; each occurrence still counts once."""
    forms = [p.values[0] for p in TEXT_FORMS]
    lines = [trace_with(encode(CANARY)) for encode in forms for _ in range(3)]
    file = tmp_path / "traces" / "all.jsonl"
    file.parent.mkdir(parents=True)
    file.write_bytes(b"".join(lines))
    code, report, _ = scan(holdouts, file.parent)
    assert code == 1
    assert report["hit_count"] == 3 * len(forms)


def clean_traces(folder: Path) -> None:
    """Traces shaped like the encoded ones, with the canary's words but no canary."""
    rng = random.Random(7)
    folder.mkdir(parents=True)
    images = [
        json.dumps({"type": "image", "data": base64.b64encode(rng.randbytes(n)).decode()})
        for n in (3000, 40_000, 200_000)
    ]
    logs = [
        json.dumps({"ts": f"2026-12-01T10:{i % 60:02d}:00Z", "msg": f"step {i}", "ok": True})
        for i in range(2000)
    ]
    near_misses = [
        f"{CANARY_PREFIX[:30]} and the rest later",  # a piece of the prefix, no canary
        "flightdeck holdout canary-scan --holdouts holdouts traces/ # do not train",
        urllib.parse.quote(CANARY_PREFIX[:-1], safe="") + "00",
        "".join(f"\\u{ord(c):04x}" for c in CANARY_PREFIX) + "not hex at all here, sorry!",
        base64.b64encode(CANARY_PREFIX.encode() + b"zz" * 16).decode(),  # no hex tail
    ]
    (folder / "run.jsonl").write_text("\n".join(logs + images + near_misses) + "\n")
    minified = "".join(f"function f{i}(a,b){{return a%{i + 1}+b}};" for i in range(20_000))
    (folder / "bundle.min.js").write_text(minified)
    (folder / "notes.txt").write_bytes(("résumé naïve — 日本語\n" * 2000).encode("utf-16"))
    (folder / "logs.jsonl.gz").write_bytes(gz(gz("\n".join(logs).encode())))
    (folder / "archive.zip").write_bytes(zipped({"a.json": images[1].encode(), "b.txt": CLEAN}))
    (folder / "random.bin").write_bytes(rng.randbytes(1 << 20))


def test_clean_traces_shaped_like_encodings_are_clean(holdouts: Path, tmp_path: Path) -> None:
    clean_traces(tmp_path / "traces")
    code, report, stderr = scan(holdouts, tmp_path / "traces")
    assert (code, report["hit_count"], report["files"]) == (0, 0, 6), stderr
    assert report["unregistered"] == 0
    assert suite_state(holdouts, "demo-v1") == "sealed"

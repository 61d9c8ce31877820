"""The params.yaml sections with rules of their own: judges, people, harnesses, sandboxes.

Each section parses into its own frozen spec (:class:`JudgeSpec`, :class:`PersonArm`) or
plain values that :func:`flightdeck.params.load_params` lays into ``Params``; a bad entry is
an InputError on its own line, and an unknown key inside an entry is an error, not a warning.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from flightdeck.errors import InputError
from flightdeck.params.arm_names import check_arm_name
from flightdeck.params.yaml_file import line_in


@dataclass(frozen=True)
class JudgeSpec:
    """One entry of params.yaml ``judges:``: a built-in ``facts`` judge or an ``llm`` rubric."""

    name: str
    kind: str  # "facts" or "llm"
    model: str | None = None  # an inspect_ai model name, e.g. openai-api/local/qwen
    prompt: Path | None = None  # the rubric prompt file (llm)
    temperature: float = 0.0


@dataclass(frozen=True)
class PersonArm:
    """One entry of params.yaml ``people:``: how the pipeline imports a person's answers."""

    arm: str
    source: Path  # from: the person's export (.csv, .tsv or .jsonl)
    by: str
    model: str
    date: str
    snapshot: Path  # the documents the person had, laid out <repo>/<path>


PERSON_KEYS = ("from", "by", "model", "date", "snapshot")

JUDGE_KINDS = ("facts", "llm")
_JUDGE_KEYS = {"facts": {"kind"}, "llm": {"kind", "model", "prompt", "temperature"}}


class _HarnessSandbox(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One arm's entry of ``harness_sandbox:``; the types are the rule (kept as given)."""

    bind: list[str] = []
    network: bool = False
    network_allow: list[str] = []  # HOST:PORT, each checked by _check_allow on its line
    pass_env: list[str] = []
    sandbox: Literal["bwrap", "none"] = "bwrap"


def sandbox_values(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``sandbox: bwrap|none``, ``harness_sandbox: {arm: {bind, network, network_allow,
    pass_env, sandbox}}``; each ``network_allow`` entry is checked as ``HOST:PORT`` on its line.
    """
    values: dict[str, Any] = {}
    if data.get("sandbox") is not None:
        if data["sandbox"] not in ("bwrap", "none"):
            raise InputError(path, line_in(data, "sandbox"), "sandbox must be bwrap or none")
        values["sandbox"] = data["sandbox"]
    arms = data.get("harness_sandbox") or {}
    line = line_in(data, "harness_sandbox")
    if not isinstance(arms, dict) or not all(isinstance(v, dict) for v in arms.values()):
        raise InputError(
            path,
            line,
            "harness_sandbox must map arm names to {bind, network, network_allow, pass_env, "
            "sandbox}",
        )
    for arm, settings in arms.items():
        try:
            msgspec.convert(settings, _HarnessSandbox)
        except msgspec.ValidationError as exc:
            said, _, where = str(exc).partition(" - at `$.")
            key = where.split("`")[0].split("[")[0]
            if said.startswith("Object contains unknown field"):
                key = said.split("`")[1]
                raise InputError(
                    path,
                    line,
                    f"harness_sandbox.{arm}: unknown key {key!r}; use "
                    + ", ".join(f.name for f in msgspec.structs.fields(_HarnessSandbox)),
                ) from None
            raise InputError(
                path,
                line,
                f"harness_sandbox.{arm}.{key} has a bad value {settings[key]!r}",
            ) from None
        _check_allow(path, str(arm), settings)
    values["harness_sandbox"] = {str(arm): dict(v) for arm, v in arms.items()}
    return values


def _check_allow(path: Path, arm: str, settings: dict[str, Any]) -> None:
    """``network_allow``: each entry ``HOST:PORT`` (an error on its own line), never beside
    ``network: true``, which would open the whole network the list is there to narrow."""
    from flightdeck.arms.net_allow import parse_target

    entries = settings.get("network_allow") or []
    line = line_in(settings, "network_allow")
    for entry in entries:
        try:
            parse_target(entry)
        except ValueError as exc:
            where = _line_after(path, line, entry)  # a block list's items have lines of their own
            raise InputError(path, where, f"harness_sandbox.{arm}.network_allow: {exc}") from None
    if entries and settings.get("network") is not None:
        raise InputError(
            path,
            line_in(settings, "network"),
            f"harness_sandbox.{arm}: network and network_allow cannot both be set; network: "
            "true shares the whole host network, network_allow only the targets named",
        )


def _line_after(path: Path, start: int | None, text: str) -> int | None:
    """The first line from ``start`` on that holds ``text``, else ``start`` (the parser keeps
    the lines of keys, not of list items)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for number in range(start or 1, len(lines) + 1):
        if text in lines[number - 1]:
            return number
    return start


def parse_judges(
    path: Path, raw: Any, root: Path, *, line: int | None = None
) -> dict[str, JudgeSpec]:
    """``judges: {NAME: {kind: facts}}`` or ``{kind: llm, model: M, prompt: FILE, temperature: T}``.

    An unknown key inside a judge is an error, not a warning: a misspelt ``temprature`` would
    silently judge at another temperature than the one the calibration records.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(path, line, "judges must map names to {kind: ...}")
    judges = {}
    for name, spec in raw.items():
        line = line_in(raw, name)
        if not isinstance(name, str) or not _JUDGE_NAME.match(name):
            raise InputError(
                path,
                line,
                f"judge name {name!r} must be letters, digits and . _ - (it names a folder)",
            )
        if not isinstance(spec, dict) or spec.get("kind") not in JUDGE_KINDS:
            raise InputError(
                path, line, f"judge {name!r} needs kind: facts or kind: llm, got {spec!r}"
            )
        kind = spec["kind"]
        unknown = sorted(set(spec) - _JUDGE_KEYS[kind])
        if unknown:
            raise InputError(
                path,
                line,
                f"judge {name!r}: unknown key {unknown[0]!r} (a typo?); a {kind} judge takes "
                f"{', '.join(sorted(_JUDGE_KEYS[kind]))}",
            )
        if kind == "facts":
            judges[name] = JudgeSpec(name, kind)
            continue
        model, prompt = spec.get("model"), spec.get("prompt")
        if not isinstance(model, str) or "/" not in model:
            raise InputError(
                path,
                line,
                f"judge {name!r} needs model: an inspect model name such as "
                "openai-api/local/qwen2.5 or mockllm/model",
            )
        if not isinstance(prompt, str) or not prompt:
            raise InputError(path, line, f"judge {name!r} needs prompt: a rubric prompt file")
        temperature = spec.get("temperature", 0.0)
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, int | float)
            or not (0 <= temperature <= 2)
        ):
            raise InputError(
                path,
                line,
                f"judge {name!r}: temperature must be a number 0 to 2, got {temperature!r}",
            )
        judges[name] = JudgeSpec(name, kind, model, root / prompt, float(temperature))
    return judges


_JUDGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def parse_pipeline(path: Path, data: dict[str, Any], root: Path) -> dict[str, Any]:
    """``harnesses``, ``people``, ``baseline``, ``candidate``, ``pinned`` (#15).

    The DVC pipeline runs one stage per harness and per person from these, and score and
    gate read the comparison from them, so a team edits params.yaml and never dvc.yaml.
    """
    values: dict[str, Any] = {}
    harnesses = data.get("harnesses")
    if harnesses is not None:
        if not isinstance(harnesses, dict) or not all(
            isinstance(v, str) and v.strip() for v in harnesses.values()
        ):
            raise InputError(
                path, line_in(data, "harnesses"), "harnesses must map arm names to commands"
            )
        for arm in harnesses:
            _check_arm(path, arm, line_in(harnesses, arm))
        values["harnesses"] = {str(k): v for k, v in harnesses.items()}
    values["people"] = _parse_people(path, data.get("people"), root, line_in(data, "people"))
    for name in ("baseline", "candidate", "pinned"):
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(path, line_in(data, name), f"{name} must be an arm name")
        _check_arm(path, value, line_in(data, name))
        values[name] = value
    if "baseline" in values and "candidate" not in values:  # a candidate alone serves the gate
        raise InputError(
            path,
            line_in(data, "baseline"),
            "give baseline: and candidate: together (add candidate:)",
        )
    if values.get("baseline") is not None and values.get("baseline") == values.get("candidate"):
        raise InputError(
            path, line_in(data, "candidate"), "the candidate is the baseline; name another arm"
        )
    return values


def _check_arm(path: Path, arm: object, line: int | None) -> None:
    if not isinstance(arm, str):
        raise InputError(path, line, f"arm name {arm!r} must be a string (it names files)")
    check_arm_name(arm, where=path, line=line)


def _parse_people(
    path: Path, raw: Any, root: Path, section_line: int | None
) -> dict[str, PersonArm]:
    """``people: {ARM: {from: FILE, by: WHO, model: M, date: D, snapshot: DIR}}``."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(path, section_line, "people must map arm names to {from, by, ...}")
    people = {}
    for arm, spec in raw.items():
        line = line_in(raw, arm)
        _check_arm(path, arm, line)
        if not isinstance(spec, dict):
            raise InputError(
                path, line, f"person arm {arm!r} needs {', '.join(PERSON_KEYS)}, got {spec!r}"
            )
        unknown = sorted(set(spec) - set(PERSON_KEYS))
        if unknown:
            raise InputError(
                path,
                line,
                f"person arm {arm!r}: unknown key {unknown[0]!r} (a typo?); it takes "
                f"{', '.join(PERSON_KEYS)}",
            )
        missing = [key for key in PERSON_KEYS if key not in spec]
        if missing:
            raise InputError(path, line, f"person arm {arm!r} needs {missing[0]}: (add it)")
        date = spec["date"]
        if isinstance(date, datetime.date):  # YAML reads 2024-06-24 as a date
            date = date.isoformat()
        for key in PERSON_KEYS:
            value = date if key == "date" else spec[key]
            if not isinstance(value, str) or not value.strip():
                raise InputError(
                    path, line, f"person arm {arm!r}: {key} must be a non-empty string"
                )
        try:
            datetime.datetime.fromisoformat(date)
        except ValueError:
            raise InputError(
                path,
                line,
                f"person arm {arm!r}: date {date!r} is not a date; use YYYY-MM-DD or an ISO "
                "8601 time",
            ) from None
        people[arm] = PersonArm(
            arm,
            root / spec["from"],
            spec["by"],
            spec["model"],
            date,
            root / spec["snapshot"],
        )
    return people

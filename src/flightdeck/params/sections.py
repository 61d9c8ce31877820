"""The params.yaml sections with rules of their own: judges, people, harnesses, sandboxes.

Each entry of ``judges:``, ``people:`` and ``harness_sandbox:`` is a msgspec Struct (the
types are the rule) and parses into its own frozen spec (:class:`JudgeSpec`,
:class:`PersonArm`) or plain values that :func:`flightdeck.params.load_params` lays into
``Params``. A refused entry is an InputError on its own line, worded from where msgspec
refuses it; the checks between fields (a real date, ``network_allow`` beside ``network``)
run after the Struct. An unknown key inside an entry is an error, not a warning. The shape
of each section (a mapping, a sandbox that is bwrap or none, a command that is not blank, an
arm name that is a string) is :class:`flightdeck.params.top_level.TopLevel`'s, decoded first,
so the functions here take a file that Struct accepted.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from flightdeck.errors import InputError
from flightdeck.params.arm_names import check_arm_name
from flightdeck.params.yaml_file import line_in, line_of_item


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
_Text = Annotated[str, msgspec.Meta(pattern=r"\S")]  # a non-empty string


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
        values["sandbox"] = data["sandbox"]
    arms = data.get("harness_sandbox") or {}
    line = line_in(data, "harness_sandbox")
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
    for index, entry in enumerate(entries):
        try:
            parse_target(entry)
        except ValueError as exc:
            where = line_of_item(entries, index) or line  # a list item has a line of its own
            raise InputError(path, where, f"harness_sandbox.{arm}.network_allow: {exc}") from None
    if entries and settings.get("network") is not None:
        raise InputError(
            path,
            line_in(settings, "network"),
            f"harness_sandbox.{arm}: network and network_allow cannot both be set; network: "
            "true shares the whole host network, network_allow only the targets named",
        )


class _FactsJudge(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="facts"
):
    """``{kind: facts}``: the built-in judge takes nothing else."""


class _LlmJudge(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", tag="llm"
):
    """``{kind: llm, model: M, prompt: FILE, temperature: T}``; the types are the rule."""

    model: Annotated[str, msgspec.Meta(pattern="/")]  # an inspect model name: provider/model
    prompt: Annotated[str, msgspec.Meta(min_length=1)]
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] = 0.0  # also refuses NaN


_JudgeEntry = _FactsJudge | _LlmJudge
_JudgeName = Annotated[str, msgspec.Meta(pattern=r"\A[A-Za-z0-9][A-Za-z0-9._-]*\Z")]


def parse_judges(path: Path, raw: Any, root: Path) -> dict[str, JudgeSpec]:
    """``judges: {NAME: {kind: facts}}`` or ``{kind: llm, model: M, prompt: FILE, temperature: T}``.

    Each entry is its Struct (``_FactsJudge`` or ``_LlmJudge``, told apart by ``kind``); the
    message comes from where msgspec refuses it, on the judge's line. An unknown key inside a
    judge is an error, not a warning: a misspelt ``temprature`` would silently judge at
    another temperature than the one the calibration records.
    """
    if raw is None:
        return {}
    judges = {}
    for name, spec in raw.items():
        where = line_in(raw, name)
        if _refused(name, _JudgeName) is not None:
            raise InputError(
                path,
                where,
                f"judge name {name!r} must be letters, digits and . _ - (it names a folder)",
            )
        refused = _refused(spec, _JudgeEntry)
        if refused is not None:
            raise InputError(path, where, _judge_words(name, spec, refused))
        entry = msgspec.convert(spec, _JudgeEntry)
        if isinstance(entry, _FactsJudge):
            judges[name] = JudgeSpec(name, "facts")
        else:
            judges[name] = JudgeSpec(
                name, "llm", entry.model, root / entry.prompt, float(entry.temperature)
            )
    return judges


def _judge_words(name: str, spec: Any, refused: _Refusal) -> str:
    """What a refused judge entry lacks, in params.yaml's words."""
    kind = spec.get("kind") if isinstance(spec, dict) else None
    kinds = {"facts": _FactsJudge, "llm": _LlmJudge}
    if refused.field == "kind" or kind not in kinds:
        return f"judge {name!r} needs kind: facts or kind: llm, got {spec!r}"
    if refused.unknown:
        takes = ", ".join(sorted({"kind", *kinds[kind].__struct_fields__}))
        return (
            f"judge {name!r}: unknown key {refused.field!r} (a typo?); a {kind} judge takes {takes}"
        )
    if refused.field == "model":
        return (
            f"judge {name!r} needs model: an inspect model name such as "
            "openai-api/local/qwen2.5 or mockllm/model"
        )
    if refused.field == "prompt":
        return f"judge {name!r} needs prompt: a rubric prompt file"
    if refused.field == "temperature":
        got = spec.get("temperature")
        return f"judge {name!r}: temperature must be a number 0 to 2, got {got!r}"
    return f"judge {name!r}: {refused.said}"


@dataclass(frozen=True)
class _Refusal:
    """Where msgspec refused a params.yaml entry: the field, and whether it is unknown."""

    field: str
    unknown: bool
    said: str  # msgspec's own words


def _refused(value: Any, type_: Any) -> _Refusal | None:
    """msgspec's refusal of ``value`` as ``type_``, read into its field, else None."""
    try:
        msgspec.convert(value, type_)
    except msgspec.ValidationError as exc:
        said, _, where = str(exc).partition(" - at `$.")
        field = where.split("`")[0].split("[")[0]
        named = re.search(r"field `([^`]*)`", said)
        if named and said.startswith(("Object contains unknown", "Object missing required")):
            field = named[1]
        return _Refusal(field, said.startswith("Object contains unknown"), said)
    return None


def parse_pipeline(path: Path, data: dict[str, Any], root: Path) -> dict[str, Any]:
    """``harnesses``, ``people``, ``baseline``, ``candidate``, ``pinned`` (#15).

    The DVC pipeline runs one stage per harness and per person from these, and score and
    gate read the comparison from them, so a team edits params.yaml and never dvc.yaml.
    """
    values: dict[str, Any] = {}
    harnesses = data.get("harnesses")
    if harnesses is not None:
        for arm in harnesses:
            _check_arm(path, arm, line_in(harnesses, arm))
        values["harnesses"] = {str(k): v for k, v in harnesses.items()}
    values["people"] = _parse_people(path, data.get("people"), root)
    for name in ("baseline", "candidate", "pinned"):
        value = data.get(name)
        if value is None:
            continue
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


class _Person(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename={"source": "from"}):
    """One ``people:`` entry as params.yaml gives it; the types are the rule."""

    source: _Text
    by: _Text
    model: _Text
    date: _Text  # YAML reads 2024-06-24 as a date: given here as YAML wrote it
    snapshot: _Text


def _parse_people(path: Path, raw: Any, root: Path) -> dict[str, PersonArm]:
    """``people: {ARM: {from: FILE, by: WHO, model: M, date: D, snapshot: DIR}}``.

    Each entry is a ``_Person``; the message comes from where msgspec refuses it, on the
    arm's line, and the date must also be a real ISO 8601 date or time.
    """
    if raw is None:
        return {}
    people = {}
    for arm, spec in raw.items():
        line = line_in(raw, arm)
        _check_arm(path, arm, line)
        if isinstance(spec, dict) and isinstance(spec.get("date"), datetime.date):
            spec = {**spec, "date": spec["date"].isoformat()}  # YAML's date, as it was written
        if not isinstance(spec, dict):
            raise InputError(
                path, line, f"person arm {arm!r} needs {', '.join(PERSON_KEYS)}, got {spec!r}"
            )
        refused = _refused(spec, _Person)
        if refused is not None:
            raise InputError(path, line, _person_words(arm, spec, refused))
        person = msgspec.convert(spec, _Person)
        date = person.date
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
            arm, root / person.source, person.by, person.model, date, root / person.snapshot
        )
    return people


def _person_words(arm: str, spec: dict[Any, Any], refused: _Refusal) -> str:
    """What a refused person entry lacks, in params.yaml's words."""
    odd = [k for k in spec if not isinstance(k, str)]  # msgspec names no field for these
    if refused.unknown or (not refused.field and odd):
        key = refused.field or odd[0]
        return (
            f"person arm {arm!r}: unknown key {key!r} (a typo?); it takes {', '.join(PERSON_KEYS)}"
        )
    if refused.said.startswith("Object missing required"):
        return f"person arm {arm!r} needs {refused.field}: (add it)"
    return f"person arm {arm!r}: {refused.field} must be a non-empty string"

"""params.yaml's top-level values: one Struct holds their rules, the words say what it refused.

:class:`TopLevel` is the rule for every top-level value: its type, its choices (``Literal``)
and its range (msgspec ``Meta``), and the shape of each section whose entries have rules of
their own (:mod:`flightdeck.params.sections` decodes those entries). When msgspec refuses
the file, the first refused key, in the Struct's order, is said in the words of ``_WORDS``
on that key's line, as the suite readers do (:mod:`flightdeck.suite.decoding`). A flag that
overrides a value is decoded through the same Struct (:func:`flag_problem`).

Two rules msgspec cannot hold stay checks after decoding: points written as a proportion
(``threshold: 0.15``, :func:`points_problem`: a gap inside the range), and a ``judge:`` that
must be declared under ``judges:`` (the whole file, :func:`flightdeck.params.load_params`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from flightdeck.suite.decoding import show

_Points = Annotated[float, Meta(ge=0, le=100)]  # also refuses NaN and infinities
_NonBlank = Annotated[str, Meta(pattern=r"\S")]


class TopLevel(msgspec.Struct, frozen=True):
    """The top-level values of params.yaml; the types are the rule (an int is not a bool, a
    float may be written as an int). Unknown keys pass here and get a warning."""

    seed: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    resamples: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    confidence: Annotated[float, Meta(gt=0, lt=1)] | UnsetType = UNSET
    threshold: _Points | UnsetType = UNSET
    min_raters: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    decision: Literal["calibrated", "percentile"] | UnsetType = UNSET
    gate_margin: _Points | UnsetType = UNSET
    judge_min_kappa: Annotated[float, Meta(ge=-1, le=1)] | UnsetType = UNSET
    suite: str | None = None
    arms: list[Annotated[str, Meta(min_length=1)]] | UnsetType = UNSET
    holdouts: str | None = None
    repos: dict[Any, str] | None = None
    sandbox: Literal["bwrap", "none"] | None = None
    harness_sandbox: dict[Any, dict[Any, Any]] | None = None  # entries: sections
    judges: dict[Any, Any] | None = None  # entries: sections
    judge: str | None = None  # declared under judges: checked after decoding
    harnesses: dict[Any, _NonBlank] | None = None  # arm names: check_arm_name
    people: dict[Any, Any] | None = None  # entries: sections
    baseline: str | None = None  # an arm name: check_arm_name
    candidate: str | None = None
    pinned: str | None = None


# What a ranged value must be (given a value of its type), as a flag's message says it.
_RANGES: Mapping[str, tuple[type, Callable[[Any], str]]] = {
    "seed": (int, lambda v: f"must be non-negative, got {v}"),
    "resamples": (int, lambda v: f"must be at least 1, got {v}"),
    "confidence": (float, lambda v: f"must be between 0 and 1, got {v}"),
    "threshold": (float, lambda v: f"must be 0 to 100 points, got {v}"),
    "min_raters": (int, lambda v: f"must be at least 1, got {v}"),
    "decision": (object, lambda v: f"must be calibrated or percentile, got {v!r}"),
    "gate_margin": (float, lambda v: f"must be 0 to 100 points, got {v}"),
    "judge_min_kappa": (float, lambda v: f"must be -1 to 1, got {v}"),
}

# What each value must be, in params.yaml's own words, and what to write instead.
_KINDS = {
    **dict.fromkeys(("seed", "resamples", "min_raters"), ("an integer", "write a whole number")),
    "confidence": ("a number", "write a proportion such as 0.95"),
    "threshold": ("a number", "write points such as 15"),
    "gate_margin": ("a number", "write points such as 10"),
    "judge_min_kappa": ("a number", "write a kappa from -1 to 1 such as 0.6"),
    "suite": ("a suite name", "write the name of a folder under suites/"),
    "arms": ("a list of arm names", "write one `- NAME` line per arm"),
    "holdouts": ("a folder path", "write the folder's path, relative to params.yaml"),
    "repos": ("a mapping of names to paths", "write one `NAME: PATH` line per repository"),
}
_SAYS = {
    "sandbox": "sandbox must be bwrap or none",
    "harness_sandbox": "harness_sandbox must map arm names to {bind, network, network_allow, "
    "pass_env, sandbox}",
    "judges": "judges must map names to {kind: ...}",
    "harnesses": "harnesses must map arm names to commands",
    "people": "people must map arm names to {from, by, ...}",
    **{name: f"{name} must be an arm name" for name in ("baseline", "candidate", "pinned")},
}


def undeclared_judge(judge: object, declared: object) -> str:
    """A ``judge:`` that names no judge of ``judges:`` (or is no name at all)."""
    names = ", ".join(map(str, declared)) if isinstance(declared, dict) else ""
    return (
        f"judge {judge!r} is not declared under judges: ({names or 'none declared'}); "
        "declare it or fix the name"
    )


def _words(name: str, data: Mapping[Any, Any]) -> str:
    """What is wrong with ``data[name]``, which the Struct refused, in params.yaml's words."""
    value = data[name]
    if name == "judge":
        return undeclared_judge(value, data.get("judges"))
    if name in _SAYS:
        return _SAYS[name]
    if name in _RANGES:
        kind, problem = _RANGES[name]
        try:  # of its type (a float written as an int), so its range refused it
            typed = value if kind is object else msgspec.convert(value, kind)
        except msgspec.ValidationError:
            pass
        else:
            return f"{name} {problem(typed)}"
    kind_words, fix = _KINDS[name]
    return f"{name} must be {kind_words}, got {show(value)}; {fix}"


def first_refused(data: Mapping[Any, Any]) -> tuple[str, str] | None:
    """(key, message) for the first key of ``data`` the Struct refuses, in its order."""
    named = {k: v for k, v in data.items() if isinstance(k, str)}  # others: unknown keys
    try:
        msgspec.convert(named, TopLevel)
    except msgspec.ValidationError as exc:
        for name in TopLevel.__struct_fields__:
            if name in named and _refuses({name: named[name]}):
                return name, _words(name, data)
        return "", f"{exc}; fix the value"  # not reached: some key is refused alone
    return None


def _refuses(values: dict[str, Any]) -> bool:
    try:
        msgspec.convert(values, TopLevel)
    except msgspec.ValidationError:
        return True
    return False


def decode(data: Mapping[Any, Any]) -> TopLevel:
    """``data`` (refused by :func:`first_refused` first) as its Struct."""
    return msgspec.convert({k: v for k, v in data.items() if isinstance(k, str)}, TopLevel)


def flag_problem(values: Mapping[str, Any]) -> tuple[str, str] | None:
    """(name, problem) for the first flag value the Struct refuses: a flag's own words."""
    for name in TopLevel.__struct_fields__:
        if name in _RANGES and name in values and _refuses({name: values[name]}):
            kind, problem = _RANGES[name]
            return name, problem(values[name])
    return None


def points_problem(value: float) -> str | None:
    """A value in points written as a proportion (0.15 is almost surely 15 points).

    Not a Meta constraint: the range it refuses lies inside the one the Struct accepts.
    """
    if 0 < value < 1:
        return f"points, not a proportion: did you mean {100 * value:g}?"
    return None

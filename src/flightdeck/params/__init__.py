"""params.yaml -> frozen Params, with command-line flags laid over it.

DVC reads the same file, so every value here is also a pipeline parameter. Without a
params.yaml the spec's defaults apply. The sections with rules of their own (judges, people,
harnesses, sandboxes) parse in :mod:`flightdeck.params.sections`; the file itself is read by
:mod:`flightdeck.params.yaml_file`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from flightdeck.errors import InputError
from flightdeck.params.sections import (
    JudgeSpec,
    PersonArm,
    parse_judges,
    parse_pipeline,
    sandbox_values,
)
from flightdeck.params.yaml_file import find_params, line_in, read_yaml
from flightdeck.project.names import HOLDOUTS_FOLDER, PARAMS_FILE
from flightdeck.project.paths import ProjectPaths
from flightdeck.suite.decoding import show


@dataclass(frozen=True)
class Params:
    suite: str | None = None
    arms: tuple[str, ...] = ()
    seed: int = 0
    resamples: int = 10_000
    confidence: float = 0.95
    threshold: float = 15.0  # points
    min_raters: int = 2
    gate_margin: float = 10.0  # points
    decision: str = "calibrated"  # or "percentile" (scoring/decision.py)
    holdouts: Path = Path(HOLDOUTS_FOLDER)
    # named by params.yaml or --holdouts (not the default): a missing folder is then a typo
    holdouts_named: bool = False
    # the folder params.yaml names (or the default), kept when --holdouts names another: a
    # void it records is not bypassed by pointing elsewhere (#25); None: same as holdouts
    holdouts_in_params: Path | None = None
    holdouts_reason: str | None = None  # --holdouts-reason: why another folder, for the report
    repos: dict[str, Path] = field(default_factory=dict)
    sandbox: str = "bwrap"  # how harness arms run: "bwrap" or "none"
    # per harness arm: {network: bool, pass_env: [names], sandbox: bwrap|none}
    harness_sandbox: dict[str, dict[str, Any]] = field(default_factory=dict)
    judges: dict[str, JudgeSpec] = field(default_factory=dict)
    judge: str | None = None  # the judge `knowledge score` takes unrated arms' correctness from
    judge_min_kappa: float = 0.6
    # (#15) the pipeline's arms and comparisons, so dvc.yaml never names an arm
    harnesses: dict[str, str] = field(default_factory=dict)  # arm -> harness command
    people: dict[str, PersonArm] = field(default_factory=dict)  # arm -> its import
    baseline: str | None = None  # score's comparison when --baseline/--candidate are absent
    candidate: str | None = None  # score's and gate's candidate
    pinned: str | None = None  # the gate's pinned arm
    root: Path = Path(".")  # the project root: relative paths in params.yaml start here
    warnings: tuple[str, ...] = ()  # for the CLI to show; the core never prints
    # the params.yaml line of each top-level key, read with the file (never read again)
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def holdouts_elsewhere(self) -> bool:
        """Whether --holdouts names another folder than params.yaml's holdouts."""
        theirs = self.holdouts_in_params
        return theirs is not None and theirs.resolve() != self.holdouts.resolve()

    def with_overrides(self, **values: Any) -> Params:
        """Flags override params.yaml; a flag left unset (None) keeps the file's value."""
        changes = {k: v for k, v in values.items() if v is not None and k != "repos"}
        if "holdouts" in changes:
            changes["holdouts_named"] = True
        repos = dict(self.repos)
        repos.update(values.get("repos") or {})
        reason = changes.get("holdouts_reason")
        if reason is not None and not str(reason).strip():
            raise InputError("--holdouts-reason", None, "is empty; say why this holdouts folder")
        checked = dataclasses.replace(self, **changes, repos=repos)
        _check_ranges(checked, self.root / PARAMS_FILE, set(changes))
        return checked


KNOWN_KEYS = {
    "suite",
    "arms",
    "harnesses",
    "seed",
    "resamples",
    "confidence",
    "threshold",
    "min_raters",
    "gate_margin",
    "decision",
    "holdouts",
    "repos",
    "sandbox",
    "harness_sandbox",
    "judges",
    "judge",
    "judge_min_kappa",
    "people",
    "baseline",
    "candidate",
    "pinned",
}


class _TopLevel(msgspec.Struct, frozen=True):
    """The plain values of params.yaml: their types are the rule (an int is not a bool, a
    float may be written as an int). Unknown keys pass here and get a warning; the sections
    with rules of their own (judges, people, harnesses, sandboxes) are checked by
    :mod:`flightdeck.params.sections`; the ranges by ``_range_problems``."""

    seed: int | UnsetType = UNSET
    resamples: int | UnsetType = UNSET
    confidence: float | UnsetType = UNSET
    threshold: float | UnsetType = UNSET
    min_raters: int | UnsetType = UNSET
    gate_margin: float | UnsetType = UNSET
    judge_min_kappa: float | UnsetType = UNSET
    arms: list[Annotated[str, msgspec.Meta(min_length=1)]] | UnsetType = UNSET
    holdouts: str | None = None
    repos: dict[Any, str] | None = None


# What each plain value must be, in params.yaml's own words, and what to write instead.
_WRONG = {
    **dict.fromkeys(("seed", "resamples", "min_raters"), ("an integer", "write a whole number")),
    "confidence": ("a number", "write a proportion such as 0.95"),
    "threshold": ("a number", "write points such as 15"),
    "gate_margin": ("a number", "write points such as 10"),
    "judge_min_kappa": ("a number", "write a kappa from -1 to 1 such as 0.6"),
    "arms": ("a list of arm names", "write one `- NAME` line per arm"),
    "holdouts": ("a folder path", "write the folder's path, relative to params.yaml"),
    "repos": ("a mapping of names to paths", "write one `NAME: PATH` line per repository"),
}
_NUMBERS = ("seed", "resamples", "confidence", "threshold", "min_raters", "gate_margin")


def _top_level(path: Path, data: dict[str, Any]) -> _TopLevel:
    """params.yaml's plain values as their Struct, or the error naming the key's line."""
    try:
        named = {k: v for k, v in data.items() if isinstance(k, str)}  # others: unknown keys
        return msgspec.convert(named, _TopLevel)
    except msgspec.ValidationError as exc:
        found = re.search(r"`\$\.(\w+)", str(exc))
        name = found[1] if found else ""
        if name in _WRONG:
            kind, fix = _WRONG[name]
            message = f"{name} must be {kind}, got {show(data[name])}; {fix}"
        else:
            message = f"{exc}; fix the value"
        raise InputError(path, line_in(data, name) if name else None, message) from None


def load_params(path: Path | None = None, *, near: Path | None = None) -> Params:
    """Read params.yaml (default: see :func:`find_params`); none at all gives the defaults."""
    explicit = path is not None
    path = path or find_params(near)
    root = path.parent
    if not path.exists():
        if explicit:
            raise InputError(path, None, "params file not found; check the path")
        return Params(root=root, holdouts_in_params=Params.holdouts)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError(path, 1, "params.yaml must be a mapping of names to values")
    values: dict[str, Any] = {"root": root}
    values["lines"] = {k: v for k, v in getattr(data, "lines", {}).items() if isinstance(k, str)}
    plain = _top_level(path, data)
    for name in (*_NUMBERS, "judge_min_kappa"):
        value = getattr(plain, name)
        if value is not UNSET:
            values[name] = value
    if "decision" in data:
        values["decision"] = data["decision"]
    if data.get("suite") is not None:
        values["suite"] = str(data["suite"])
    if not isinstance(plain.arms, UnsetType):
        values["arms"] = tuple(plain.arms)
    if plain.holdouts is not None:
        values["holdouts"] = root / plain.holdouts
        values["holdouts_named"] = True
    else:
        values["holdouts"] = ProjectPaths(root).default_holdouts
    values["holdouts_in_params"] = values["holdouts"]
    values["repos"] = {str(k): root / v for k, v in (plain.repos or {}).items()}
    values.update(sandbox_values(data, path))
    values["judges"] = parse_judges(path, data.get("judges"), root, line=line_in(data, "judges"))
    if data.get("judge") is not None:
        judge = data["judge"]
        if not isinstance(judge, str) or judge not in values["judges"]:
            raise InputError(
                path,
                line_in(data, "judge"),
                f"judge {judge!r} is not declared under judges: "
                f"({', '.join(values['judges']) or 'none declared'}); declare it or fix the name",
            )
        values["judge"] = judge
    values.update(parse_pipeline(path, data, root))
    params = Params(**values)
    _check_ranges(params, path, None)
    unknown = sorted(set(data) - KNOWN_KEYS, key=str)
    if unknown:
        warning = (
            f"{path}:{line_in(data, unknown[0])}: unknown key {unknown[0]!r} is ignored "
            f"(a typo?); flightdeck reads {', '.join(sorted(KNOWN_KEYS))}"
        )
        params = dataclasses.replace(params, warnings=(warning,))
    return params


def _range_problems(params: Params) -> list[tuple[str, str]]:
    """(name, what is wrong) for each value outside its range."""
    problems = []
    if params.resamples < 1:
        problems.append(("resamples", f"must be at least 1, got {params.resamples}"))
    if not 0 < params.confidence < 1:  # also refuses NaN
        problems.append(("confidence", f"must be between 0 and 1, got {params.confidence}"))
    if not 0 <= params.threshold <= 100:  # also refuses NaN and infinities
        problems.append(("threshold", f"must be 0 to 100 points, got {params.threshold}"))
    elif 0 < params.threshold < 1:
        problems.append(("threshold", _proportion_given(params.threshold)))
    if params.min_raters < 1:
        problems.append(("min_raters", f"must be at least 1, got {params.min_raters}"))
    if params.seed < 0:
        problems.append(("seed", f"must be non-negative, got {params.seed}"))
    if params.decision not in ("calibrated", "percentile"):
        problems.append(("decision", f"must be calibrated or percentile, got {params.decision!r}"))
    if not 0 <= params.gate_margin <= 100:
        problems.append(("gate_margin", f"must be 0 to 100 points, got {params.gate_margin}"))
    elif 0 < params.gate_margin < 1:
        problems.append(("gate_margin", _proportion_given(params.gate_margin)))
    if not -1 <= params.judge_min_kappa <= 1:
        problems.append(("judge_min_kappa", f"must be -1 to 1, got {params.judge_min_kappa}"))
    return problems


def _proportion_given(value: float) -> str:
    """A value in (0, 1) where points are meant: 0.15 is almost surely 15 points."""
    return f"points, not a proportion: did you mean {100 * value:g}?"


def _check_ranges(params: Params, path: Path, flags: set[str] | None) -> None:
    """A bad value names its flag when a flag set it, else the params.yaml line."""
    for name, problem in _range_problems(params):
        if flags is not None and name in flags:
            raise InputError(f"--{name.replace('_', '-')}", None, problem)
        words = f"{name} is in {problem}" if problem.startswith("points,") else f"{name} {problem}"
        raise InputError(path, params.lines.get(name) if path.is_file() else None, words)


def parse_repo_option(values: tuple[str, ...]) -> dict[str, Path]:
    """``--repo NAME=PATH`` pairs -> mapping; a malformed pair is an input error."""
    repos = {}
    for value in values:
        name, sep, where = value.partition("=")
        if not sep or not name or not where:
            raise InputError(
                "--repo", None, f"{value!r} is not NAME=PATH; e.g. --repo sdlc=../sdlc"
            )
        repos[name] = Path(where)
    return repos

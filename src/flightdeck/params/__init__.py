"""params.yaml -> frozen Params, with command-line flags laid over it.

DVC reads the same file, so every value here is also a pipeline parameter. Without a
params.yaml the spec's defaults apply. The sections with rules of their own (judges, people,
harnesses, sandboxes) parse in :mod:`flightdeck.params.sections`; the file itself is read by
:mod:`flightdeck.params.yaml_file`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from flightdeck.params.top_level import (
    TopLevel,
    decode,
    first_refused,
    flag_problem,
    points_problem,
    undeclared_judge,
)
from flightdeck.params.yaml_file import find_params, line_in, read_yaml
from flightdeck.project.names import HOLDOUTS_FOLDER, PARAMS_FILE
from flightdeck.project.paths import ProjectPaths


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
        refused = flag_problem(changes)  # a flag's value, through params.yaml's Struct
        if refused is not None:
            raise InputError(f"--{refused[0].replace('_', '-')}", None, refused[1])
        checked = dataclasses.replace(self, **changes, repos=repos)
        _check_points(checked, self.root / PARAMS_FILE, set(changes))
        return checked


# The keys flightdeck reads: TopLevel's, so a key added there is known here too.
KNOWN_KEYS = frozenset(f.encode_name for f in msgspec.structs.fields(TopLevel))


# The plain values, laid into Params as decoded (their rules: TopLevel's types).
_PLAIN = (
    "seed",
    "resamples",
    "confidence",
    "threshold",
    "min_raters",
    "gate_margin",
    "decision",
    "judge_min_kappa",
)


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
    refused = first_refused(data)
    if refused is not None:
        raise InputError(path, line_in(data, refused[0]), refused[1])
    plain = decode(data)
    for name in _PLAIN:
        value = getattr(plain, name)
        if value is not UNSET:
            values[name] = value
    if plain.suite is not None:
        values["suite"] = plain.suite
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
    values["judges"] = parse_judges(path, data.get("judges"), root)
    if plain.judge is not None:  # the whole file's rule: a judge declared under judges:
        if plain.judge not in values["judges"]:
            raise InputError(
                path, line_in(data, "judge"), undeclared_judge(plain.judge, values["judges"])
            )
        values["judge"] = plain.judge
    values.update(parse_pipeline(path, data, root))
    params = Params(**values)
    _check_points(params, path, None)
    unknown = sorted(set(data) - KNOWN_KEYS, key=str)
    if unknown:
        warning = (
            f"{path}:{line_in(data, unknown[0])}: unknown key {unknown[0]!r} is ignored "
            f"(a typo?); flightdeck reads {', '.join(sorted(KNOWN_KEYS))}"
        )
        params = dataclasses.replace(params, warnings=(warning,))
    return params


def _check_points(params: Params, path: Path, flags: set[str] | None) -> None:
    """Points written as a proportion, named by its flag or else on its params.yaml line."""
    for name in ("threshold", "gate_margin"):
        problem = points_problem(getattr(params, name))
        if problem is None:
            continue
        if flags is not None and name in flags:
            raise InputError(f"--{name.replace('_', '-')}", None, problem)
        raise InputError(path, params.lines.get(name), f"{name} is in {problem}")


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

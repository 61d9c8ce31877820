"""params.yaml -> frozen Params, with command-line flags laid over it.

DVC reads the same file, so every value here is also a pipeline parameter. Without a
params.yaml the spec's defaults apply.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.errors import InputError

PARAMS_FILE = "params.yaml"


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
    holdouts: Path = Path("holdouts")
    # named by params.yaml or --holdouts (not the default): a missing folder is then a typo
    holdouts_named: bool = False
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

    def with_overrides(self, **values: Any) -> Params:
        """Flags override params.yaml; a flag left unset (None) keeps the file's value."""
        changes = {k: v for k, v in values.items() if v is not None and k != "repos"}
        if "holdouts" in changes:
            changes["holdouts_named"] = True
        repos = dict(self.repos)
        repos.update(values.get("repos") or {})
        checked = dataclasses.replace(self, **changes, repos=repos)
        _check_ranges(checked, self.root / PARAMS_FILE, set(changes))
        return checked


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
_SCALARS: dict[str, type] = {
    "seed": int,
    "resamples": int,
    "confidence": float,
    "threshold": float,
    "min_raters": int,
    "gate_margin": float,
    "judge_min_kappa": float,
}


def find_params(near: Path | None = None) -> Path:
    """./params.yaml, else the nearest params.yaml above ``near`` (a suite folder).

    So a command run from outside the project still finds the project's holdouts and
    repositories rather than silently using the defaults.
    """
    here = Path(PARAMS_FILE)
    if here.is_file() or near is None:
        return here
    for folder in near.resolve().parents:
        candidate = folder / PARAMS_FILE
        if candidate.is_file():
            return candidate
    return here


def load_params(path: Path | None = None, *, near: Path | None = None) -> Params:
    """Read params.yaml (default: see :func:`find_params`); none at all gives the defaults."""
    import yaml

    explicit = path is not None
    path = path or find_params(near)
    root = path.parent
    if not path.exists():
        if explicit:
            raise InputError(path, None, "params file not found; check the path")
        return Params(root=root)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_unique_keys_loader()) or {}
    except _DuplicateKey as exc:
        raise InputError(
            path, exc.line, f"duplicate key {exc.key!r} (first on line {exc.first}); keep one"
        ) from None
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise InputError(path, line, f"not YAML ({exc.problem}); fix the syntax") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"not YAML ({exc}); fix the syntax") from None
    if not isinstance(data, dict):
        raise InputError(path, 1, "params.yaml must be a mapping of names to values")
    values: dict[str, Any] = {"root": root}
    for name, kind in _SCALARS.items():
        if name in data:
            value = data[name]
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or (kind is int and not isinstance(value, int)):
                raise InputError(path, _line_of(path, name), f"{name} must be a {kind.__name__}")
            values[name] = kind(value)
    if "decision" in data:
        values["decision"] = data["decision"]
    if data.get("suite") is not None:
        values["suite"] = str(data["suite"])
    if "arms" in data:
        arms = data["arms"]
        if not isinstance(arms, list) or not all(isinstance(a, str) and a for a in arms):
            raise InputError(path, _line_of(path, "arms"), "arms must be a list of arm names")
        values["arms"] = tuple(arms)
    if data.get("holdouts") is not None:
        if not isinstance(data["holdouts"], str):
            raise InputError(path, _line_of(path, "holdouts"), "holdouts must be a folder path")
        values["holdouts"] = root / data["holdouts"]
        values["holdouts_named"] = True
    else:
        values["holdouts"] = root / "holdouts"
    repos = data.get("repos") or {}
    if not isinstance(repos, dict) or not all(isinstance(v, str) for v in repos.values()):
        raise InputError(path, _line_of(path, "repos"), "repos must map names to paths")
    values["repos"] = {str(k): root / v for k, v in repos.items()}
    values.update(_sandbox_values(data, path))
    values["judges"] = _parse_judges(path, data.get("judges"), root)
    if data.get("judge") is not None:
        judge = data["judge"]
        if not isinstance(judge, str) or judge not in values["judges"]:
            raise InputError(
                path,
                _line_of(path, "judge"),
                f"judge {judge!r} is not declared under judges: "
                f"({', '.join(values['judges']) or 'none declared'}); declare it or fix the name",
            )
        values["judge"] = judge
    values.update(_parse_pipeline(path, data, root))
    params = Params(**values)
    _check_ranges(params, path, None)
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        warning = (
            f"{path}:{_line_of(path, unknown[0])}: unknown key {unknown[0]!r} is ignored "
            f"(a typo?); flightdeck reads {', '.join(sorted(KNOWN_KEYS))}"
        )
        params = dataclasses.replace(params, warnings=(warning,))
    return params


_SANDBOX_KEYS: dict[str, type] = {"network": bool, "pass_env": list, "sandbox": str}


def _sandbox_values(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """``sandbox: bwrap|none`` and ``harness_sandbox: {arm: {network, pass_env, sandbox}}``."""
    values: dict[str, Any] = {}
    if data.get("sandbox") is not None:
        if data["sandbox"] not in ("bwrap", "none"):
            raise InputError(path, _line_of(path, "sandbox"), "sandbox must be bwrap or none")
        values["sandbox"] = data["sandbox"]
    arms = data.get("harness_sandbox") or {}
    line = _line_of(path, "harness_sandbox")
    if not isinstance(arms, dict) or not all(isinstance(v, dict) for v in arms.values()):
        raise InputError(
            path, line, "harness_sandbox must map arm names to {network, pass_env, sandbox}"
        )
    for arm, settings in arms.items():
        for key, value in settings.items():
            kind = _SANDBOX_KEYS.get(key)
            if kind is None:
                raise InputError(
                    path,
                    line,
                    f"harness_sandbox.{arm}: unknown key {key!r}; use "
                    + ", ".join(sorted(_SANDBOX_KEYS)),
                )
            bad = (
                not isinstance(value, kind)
                or (isinstance(value, list) and not all(isinstance(v, str) for v in value))
                or (key == "sandbox" and value not in ("bwrap", "none"))
            )
            if bad:
                raise InputError(
                    path, line, f"harness_sandbox.{arm}.{key} has a bad value {value!r}"
                )
    values["harness_sandbox"] = {str(arm): dict(v) for arm, v in arms.items()}
    return values


def _parse_judges(path: Path, raw: Any, root: Path) -> dict[str, JudgeSpec]:
    """``judges: {NAME: {kind: facts}}`` or ``{kind: llm, model: M, prompt: FILE, temperature: T}``.

    An unknown key inside a judge is an error, not a warning: a misspelt ``temprature`` would
    silently judge at another temperature than the one the calibration records.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(path, _line_of(path, "judges"), "judges must map names to {kind: ...}")
    judges = {}
    for name, spec in raw.items():
        line = _line_of_nested(path, str(name))
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
_ARM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]*\Z")  # as tasks.knowledge.ARM_NAME


def _parse_pipeline(path: Path, data: dict[str, Any], root: Path) -> dict[str, Any]:
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
                path, _line_of(path, "harnesses"), "harnesses must map arm names to commands"
            )
        for arm in harnesses:
            _check_arm(path, arm, _line_of_nested(path, str(arm)))
        values["harnesses"] = {str(k): v for k, v in harnesses.items()}
    values["people"] = _parse_people(path, data.get("people"), root)
    for name in ("baseline", "candidate", "pinned"):
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(path, _line_of(path, name), f"{name} must be an arm name")
        _check_arm(path, value, _line_of(path, name))
        values[name] = value
    if "baseline" in values and "candidate" not in values:  # a candidate alone serves the gate
        raise InputError(
            path,
            _line_of(path, "baseline"),
            "give baseline: and candidate: together (add candidate:)",
        )
    if values.get("baseline") is not None and values.get("baseline") == values.get("candidate"):
        raise InputError(
            path, _line_of(path, "candidate"), "the candidate is the baseline; name another arm"
        )
    return values


def _check_arm(path: Path, arm: object, line: int | None) -> None:
    if not isinstance(arm, str) or not _ARM_NAME.match(arm):
        raise InputError(
            path, line, f"arm name {arm!r} must be letters, digits and . _ @ + - (it names files)"
        )


def _parse_people(path: Path, raw: Any, root: Path) -> dict[str, PersonArm]:
    """``people: {ARM: {from: FILE, by: WHO, model: M, date: D, snapshot: DIR}}``."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(
            path, _line_of(path, "people"), "people must map arm names to {from, by, ...}"
        )
    people = {}
    for arm, spec in raw.items():
        line = _line_of_nested(path, str(arm))
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
        people[arm] = PersonArm(
            arm,
            root / spec["from"],
            spec["by"],
            spec["model"],
            date,
            root / spec["snapshot"],
        )
    return people


class _DuplicateKey(Exception):
    """A key given twice in one mapping: YAML would silently keep the last."""

    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


def _unique_keys_loader() -> Any:
    """PyYAML's SafeLoader, refusing a key given twice in a mapping.

    PyYAML keeps the last of two equal keys without a word, so a second ``holdouts:`` or
    ``gate_margin:`` further down the file would silently win (and an error about the value
    would name the first one's line).
    """
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _DuplicateKey(key, line, seen[key])
                except TypeError:  # an unhashable key: let PyYAML report it
                    continue
                seen[key] = line
            return super().construct_mapping(node, deep=deep)

    return Loader


def _line_of_nested(path: Path, name: str) -> int | None:
    """The line of an indented ``name:`` (a judge under ``judges:``)."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip().startswith(f"{name}:") and text[:1].isspace():
            return number
    return None


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
        raise InputError(path, _line_of(path, name) if path.is_file() else None, words)


def _line_of(path: Path, name: str) -> int | None:
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.startswith(f"{name}:"):
            return number
    return None


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

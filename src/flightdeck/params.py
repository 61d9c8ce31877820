"""params.yaml -> frozen Params, with command-line flags laid over it.

DVC reads the same file, so every value here is also a pipeline parameter. Without a
params.yaml the spec's defaults apply.
"""

from __future__ import annotations

import dataclasses
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
    holdouts: Path = Path("holdouts")
    repos: dict[str, Path] = field(default_factory=dict)
    root: Path = Path(".")  # the project root: relative paths in params.yaml start here

    def with_overrides(self, **values: Any) -> Params:
        """Flags override params.yaml; a flag left unset (None) keeps the file's value."""
        changes = {k: v for k, v in values.items() if v is not None and k != "repos"}
        repos = dict(self.repos)
        repos.update(values.get("repos") or {})
        checked = dataclasses.replace(self, **changes, repos=repos)
        _check_ranges(checked, Path("--option"), None)
        return checked


_SCALARS: dict[str, type] = {
    "seed": int,
    "resamples": int,
    "confidence": float,
    "threshold": float,
    "min_raters": int,
    "gate_margin": float,
}


def load_params(path: Path | None = None) -> Params:
    """Read params.yaml (default: ./params.yaml); a missing default file gives the defaults."""
    import yaml

    explicit = path is not None
    path = path or Path(PARAMS_FILE)
    root = path.parent
    if not path.exists():
        if explicit:
            raise InputError(path, None, "params file not found; check the path")
        return Params(root=root)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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
    if data.get("suite") is not None:
        values["suite"] = str(data["suite"])
    if "arms" in data:
        arms = data["arms"]
        if not isinstance(arms, list) or not all(isinstance(a, str) and a for a in arms):
            raise InputError(path, _line_of(path, "arms"), "arms must be a list of arm names")
        values["arms"] = tuple(arms)
    if data.get("holdouts") is not None:
        values["holdouts"] = root / str(data["holdouts"])
    else:
        values["holdouts"] = root / "holdouts"
    repos = data.get("repos") or {}
    if not isinstance(repos, dict) or not all(isinstance(v, str) for v in repos.values()):
        raise InputError(path, _line_of(path, "repos"), "repos must map names to paths")
    values["repos"] = {str(k): root / v for k, v in repos.items()}
    params = Params(**values)
    _check_ranges(params, path, None)
    return params


def _check_ranges(params: Params, path: Path, line: int | None) -> None:
    if params.resamples < 1:
        raise InputError(path, line, f"resamples must be at least 1, got {params.resamples}")
    if not 0 < params.confidence < 1:
        raise InputError(path, line, f"confidence must be in (0, 1), got {params.confidence}")
    if params.min_raters < 1:
        raise InputError(path, line, f"min_raters must be at least 1, got {params.min_raters}")
    if params.seed < 0:
        raise InputError(path, line, f"seed must be non-negative, got {params.seed}")


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

"""What score and gate return: frozen outcomes that the report renders and Python reads.

Apart from the tasks that build them (``tasks/scoring.py``, ``tasks/gate.py``), so the report
can import them without importing the tasks, which import the report to write their outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flightdeck.params import Params
from flightdeck.scoring.decision import Decision
from flightdeck.scoring.rules import ArmScore, Comparison

if TYPE_CHECKING:
    from flightdeck.holdouts.custody import Custody


@dataclass(frozen=True, kw_only=True)
class ScoreResult:
    suite: str
    n: int
    arms: dict[str, ArmScore]
    comparisons: tuple[Comparison, ...]
    params: Params
    sealed_at: str = ""
    holdouts: str = "sealed"  # holdouts.registry.suite_state: no-manifest, unregistered, ...
    custody: Custody | None = None  # the last canary scan of its traces, the last unvoid
    unchecked_repos: tuple[str, ...] = ()  # sealed --unchecked: repositories never checked
    # arm -> where its correctness came from, when a judge was named (#14); else empty
    correctness_from: dict[str, str] = field(default_factory=dict)
    # id -> the question's text, for the report's per-question table (#15)
    questions: dict[str, str] = field(default_factory=dict)
    written: dict[str, Path] = field(default_factory=dict)  # what score() wrote, by kind
    recorded: tuple[str, ...] = ()  # arms score() added to the ledger
    scratch: tuple[str, ...] = ()  # (#21) scratch arms scored: outputs and ledger kept apart


@dataclass(frozen=True, kw_only=True)
class GateResult:
    suite: str
    pinned: str
    candidate: str
    margin: float  # points
    comparison: Comparison
    failed: tuple[str, ...]  # metrics whose decision bound is below -margin
    correctness_from: dict[str, str] = field(default_factory=dict)  # see ScoreResult
    decisions: dict[str, Decision] = field(default_factory=dict)  # per metric, at -margin
    note: str | None = None  # a failed gate: what this n can pass at the margin (#22)

    @property
    def passed(self) -> bool:
        return not self.failed

"""The facade's verbs (#23 item 7): the subject positionally, everything else by keyword."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from flightdeck.project import Project, Suite

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _verbs() -> list[Any]:
    found = []
    for cls in (Project, Suite):
        for name, member in vars(cls).items():
            if name.startswith("_") or isinstance(member, property | classmethod):
                continue
            if callable(member) and not isinstance(member, type):
                found.append(pytest.param(member, id=f"{cls.__name__}.{name}"))
    found.append(pytest.param(Project.open, id="Project.open"))
    return found


def _positional(verb: Callable[..., Any]) -> list[str]:
    parameters = list(inspect.signature(verb).parameters.values())
    return [p.name for p in parameters if p.kind in POSITIONAL and p.name not in ("self", "cls")]


@pytest.mark.parametrize("verb", _verbs())
def test_a_verb_takes_at_most_its_subject_positionally(verb: Callable[..., Any]) -> None:
    assert len(_positional(verb)) <= 1, _positional(verb)


def test_the_verbs_are_found_and_their_subjects_are_the_ones_meant() -> None:
    subjects = {p.id: _positional(p.values[0]) for p in _verbs()}
    assert subjects["Suite.score"] == []  # the suite is the subject: arms=, baseline=, ...
    assert subjects["Suite.run"] == ["arm"]
    assert subjects["Suite.import_answers"] == ["arm"]
    assert subjects["Project.new_suite"] == ["folder"]
    assert subjects["Project.unvoid"] == ["suite"]
    assert len(subjects) >= 18


@pytest.mark.parametrize("verb", _verbs())
def test_a_verb_takes_no_on_off_flag(verb: Callable[..., Any]) -> None:
    """A mode is an enum of :mod:`flightdeck.project.modes` (``dry_runs=DryRuns.ALLOW``)."""
    flags = [
        p.name
        for p in inspect.signature(verb).parameters.values()
        if p.annotation in ("bool", bool) or isinstance(p.default, bool)
    ]
    assert flags == []


def test_the_modes_are_the_verbs_keywords() -> None:
    from flightdeck.project.modes import DryRuns, ReposNotAtHand, ToRate

    def default(verb: Callable[..., Any], name: str) -> Any:
        return inspect.signature(verb).parameters[name].default

    assert default(Suite.score, "dry_runs") is DryRuns.REFUSE
    assert default(Suite.seal, "repos_not_at_hand") is ReposNotAtHand.REFUSE
    assert default(Suite.check, "repos_not_at_hand") is ReposNotAtHand.REFUSE
    assert default(Suite.rate, "to_rate") is ToRate.EVERY_ANSWER

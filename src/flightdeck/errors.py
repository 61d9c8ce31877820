"""One error hierarchy; the CLI maps each class to an exit code in one place.

Core code raises these and never prints or exits, so it can be called from Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class FlightdeckError(Exception):
    """Base class for errors that flightdeck reports to the user without a traceback."""

    exit_code: ClassVar[int] = 2


class InputError(FlightdeckError):
    """Bad input: names the file, the line when there is one, and how to fix it.

    ``str(err)`` is ``"<file>:<line>: <message>"`` (or ``"<file>: <message>"``),
    which the CLI prints after ``error: ``.
    """

    exit_code: ClassVar[int] = 2

    def __init__(self, path: str | Path | None, line: int | None, message: str) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"

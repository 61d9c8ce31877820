"""One error hierarchy; the CLI maps each class to its exit code in one place.

Modelled on click's ``exceptions.py``: every error flightdeck raises on purpose derives from
:class:`FlightdeckError`, whose ``exit_code`` is a ``ClassVar`` the root command group reads
(``flightdeck.cli.FlightdeckGroup``). Core code raises these and never prints or exits, so it
can be called from Python. The tree, by what a user should do::

    FlightdeckError          3  never raised itself; a subclass says what happened
    ├── InputError           2  bad input: `error: <file>:<line>: <what and how to fix>`
    │   ├── ModelUnavailable 2  inspect cannot open the --model
    │   └── InputProblems    2  several problems at once, one `error:` line each (check)
    ├── NegativeVerdict      1  the check ran and its answer is no (canary found, gate not met)
    ├── InternalError        3  flightdeck broke a rule of its own: a bug, traceback kept
    │   └── WorkerDiedError  3  a scan process died
    └── HandledError         3  a failure its caller turns into a record or an InputError
        ├── JSONProblem         bytes that are not strict JSON (-> the file's InputError)
        ├── ProtocolError       a harness's output breaks the protocol (-> a failed trial)
        ├── ToolFailure         a model's tool call it can fix (-> the reply to the model)
        ├── ModelFailed         the provider failed after retries (-> an InputError on --model)
        ├── ContextTooLarge     the prompt does not fit the window (-> an InputError)
        ├── AgentError          the inspect eval failed (-> a failed trial, an InputError)
        ├── JudgeFailed         the judge gave no usable verdict (-> an unjudged answer)
        ├── NoSuchItem          a rating request names no item or citation (-> HTTP 404)
        ├── BadLabel            a label the rating page sent breaks a rule (-> HTTP 400)
        └── CorruptError        a scanned file is not what its name says (-> a skipped file)

A :class:`HandledError` that reaches the CLI was not caught where it should have been, so it
is a bug like any other exception: the traceback is kept and the exit code is 3, never 1 or 2.

Private control-flow signals that never leave their module (``files/strict_json.py``'s
``_Problem``, raised inside ``json``'s hooks to stop a parse and caught three lines up;
``params/yaml_file.py``'s ``_DuplicateKey`` and ``_BadScalar``, raised inside PyYAML's
constructors, which do not know the file, and turned into an InputError naming it) stay
private to it, because no other module may catch them; they still derive from
:class:`HandledError`, so that one escaping by mistake reads as a bug and a test
(``tests/unit/test_errors.py``) can hold every exception class in ``src`` to this tree.

Argument checks of public functions (the statistics, scipy's ``_iv`` style; a parser such as
``net_allow.parse_target``, whose caller names the file; ``register_suite``'s arguments)
raise ``ValueError``/``TypeError`` as Python does for a bad argument: from the CLI they can
only be a bug (3), since the commands check what the user gives first. A broken invariant
of flightdeck's own is an :class:`InternalError`, never a bare ``RuntimeError``. Exit codes
are the ``exit_code`` of these classes and the constants below; no command exits with a
number of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

EXIT_VERDICT = 1
EXIT_INPUT = 2
EXIT_BUG = 3
EXIT_INTERRUPTED = 130  # Ctrl-C: click would exit 1, which reads as a verdict


class FlightdeckError(Exception):
    """Base of every error flightdeck raises on purpose; ``exit_code`` says what it means."""

    exit_code: ClassVar[int] = EXIT_BUG

    def format_message(self) -> str:
        """The one line the CLI prints after ``error: ``."""
        return str(self)


class InputError(FlightdeckError):
    """Bad input: names the file, the line when there is one, and how to fix it.

    ``str(err)`` is ``"<file>:<line>: <message>"`` (or ``"<file>: <message>"``),
    which the CLI prints after ``error: ``.
    """

    exit_code: ClassVar[int] = EXIT_INPUT

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


class ModelUnavailable(InputError):
    """inspect cannot open the model (unknown provider, missing key or package); says why.

    ``reason`` is inspect's own message on one line, without its markup, for a caller that
    names another place than ``--model`` (a judge names params.yaml); ``hint`` is said after
    the fix (inside a sandbox: how to let the provider's variables in).
    """

    def __init__(self, name: str, reason: str, hint: str = "") -> None:
        self.name, self.reason = name, reason
        super().__init__(
            "--model",
            None,
            f"cannot open {name!r} ({reason}); check the name and the provider's key and "
            "base URL variables" + hint,
        )


class InputProblems(InputError):
    """Several problems with the input, found at once (``knowledge check`` lists them all).

    ``problems`` are the lines, each ``<file>:<line>: <what and how to fix>``; the CLI prints
    each on its own ``error:`` line (:meth:`format_message`) and exits 2.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        if not problems:
            raise InternalError("InputProblems needs at least one problem")
        self.problems = tuple(problems)
        super().__init__(None, None, "\n".join(self.problems))

    def format_message(self) -> str:
        """Every problem, the second and later on lines of their own after ``error: ``."""
        return "\nerror: ".join(self.problems)


class NegativeVerdict(FlightdeckError):
    """The check ran and its answer is no: a canary was found, a gate not met, not ready.

    Not an error of the user's: the command has printed the verdict on stdout already, so
    the CLI adds nothing but ``message`` (on stderr, when there is one) and exits 1.
    """

    exit_code: ClassVar[int] = EXIT_VERDICT

    def __init__(self, message: str = "") -> None:
        self.message = message
        super().__init__(message)


class InternalError(FlightdeckError):
    """flightdeck broke a rule of its own (an invariant, a process it started died): a bug."""


class WorkerDiedError(InternalError):
    """A scan process died, for instance on a file truncated while it was mapped.

    Not an input error: nothing the user gave was wrong that we could name, so the CLI keeps
    the traceback and exits 3.
    """


class HandledError(FlightdeckError):
    """A failure its caller catches and turns into a record or an :class:`InputError`."""


class JSONProblem(HandledError):
    """Bytes that are not strict JSON: ``what`` is wrong, ``kind`` of problem, ``line`` in them.

    ``kind`` is one of ``encoding``, ``bom``, ``syntax``, ``depth``, ``number``, ``duplicate``,
    ``surrogate``; callers add how to fix it in their own setting (a line, a document).
    """

    def __init__(self, kind: str, what: str, line: int | None = None, value: Any = None) -> None:
        super().__init__(what)
        self.kind, self.what, self.line = kind, what, line
        self.value = value  # for "surrogate": the value as json reads it, to say which field


class ProtocolError(HandledError):
    """A harness's output breaks the protocol; the message says how, in one line."""


class ToolFailure(HandledError):
    """A tool call the model can fix: the message goes back to it."""


class ModelFailed(HandledError):
    """The provider failed after inspect's retries, or cut the answer at its context limit."""


class ContextTooLarge(HandledError):
    """The prompt does not fit the model's context window; nothing was sent."""


class AgentError(HandledError):
    """The eval itself failed (the model unreachable after retries, a bad key): the trial fails.

    ``log_json`` is the inspect log up to the failure, for the trace.
    """

    def __init__(self, message: str, log_json: str) -> None:
        super().__init__(message)
        self.log_json = log_json


class JudgeFailed(HandledError):
    """The judge gave no usable verdict for one answer (a model that called no tool)."""


class NoSuchItem(HandledError):
    """A rating request names an item or a citation the session does not have."""


class BadLabel(HandledError):
    """A label the rating page sent breaks a rule (a fact tick too many, no such citation);
    the message goes back to the page."""


class CorruptError(HandledError):
    """A file that is not what its name promises, or changed under the scan."""

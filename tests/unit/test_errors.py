"""One error hierarchy (#23): every exception class in src derives from FlightdeckError, the
public ones live in errors.py, and the CLI's exit code is the class's ``exit_code``.

The tree is read two ways: the source (every ``class`` statement, nested ones included,
whose bases name an exception) and the imported modules (every class that is an exception).
The exit codes go through the real ``flightdeck`` command group, raised from inside a real
command, and for the classes a user meets, from the input that causes them.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject

import flightdeck
from flightdeck import errors
from flightdeck.cli import cli
from flightdeck.errors import (
    EXIT_BUG,
    EXIT_INPUT,
    EXIT_VERDICT,
    AgentError,
    BadLabel,
    ContextTooLarge,
    CorruptError,
    FlightdeckError,
    HandledError,
    InputError,
    InputProblems,
    InternalError,
    JSONProblem,
    JudgeFailed,
    ModelFailed,
    ModelUnavailable,
    NegativeVerdict,
    NoSuchItem,
    ProtocolError,
    ToolFailure,
    WorkerDiedError,
)

SRC = Path(flightdeck.__file__).parent
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def _exception_classes_in_source() -> list[tuple[str, int, str, list[str]]]:
    """(module file, line, class name, base names) of every class whose bases name an exception."""
    public = {name for name, value in vars(errors).items() if isinstance(value, type)}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases]
            if any(b in BUILTIN_EXCEPTIONS or b in public for b in bases):
                found.append((str(path.relative_to(SRC)), node.lineno, node.name, bases))
    return found


def test_only_errors_py_derives_a_class_from_a_builtin_exception() -> None:
    offenders = [
        f"{file}:{line}: class {name}({', '.join(bases)})"
        for file, line, name, bases in _exception_classes_in_source()
        if any(b in BUILTIN_EXCEPTIONS for b in bases)
        and not (file == "errors.py" and name == "FlightdeckError")
    ]
    assert offenders == [], "derive from a class of flightdeck.errors instead"


def test_a_public_exception_class_is_defined_in_errors_py() -> None:
    offenders = [
        f"{file}:{line}: class {name}"
        for file, line, name, _ in _exception_classes_in_source()
        if file != "errors.py" and not name.startswith("_")
    ]
    assert offenders == [], "move it to flightdeck/errors.py (private signals may stay)"


def _all_modules() -> list[str]:
    found = pkgutil.walk_packages([str(SRC)], prefix="flightdeck.")
    return [info.name for info in found if not info.name.endswith("__main__")]  # runs the CLI


def test_every_imported_exception_class_is_under_flightdeck_error() -> None:
    classes = {}
    for name in _all_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("flightdeck")
            ):
                classes[f"{value.__module__}.{value.__qualname__}"] = value
    assert "flightdeck.files.strict_json._Problem" in classes  # the walk sees private ones
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, FlightdeckError))
    assert outside == []


def test_the_source_scan_sees_the_exception_classes() -> None:
    """The scan is not vacuous: it finds errors.py's classes and the private signals."""
    names = {name for _, _, name, _ in _exception_classes_in_source()}
    assert {"FlightdeckError", "InputError", "ProtocolError", "_Problem"} <= names


# Raised on purpose, these builtins say "flightdeck broke": an InternalError says it in the tree.
NOT_RAISED = {"RuntimeError", "Exception", "BaseException", "AssertionError", "SystemExit"}
# The relay is a process of its own (``python -m flightdeck.arms.net_relay``), not a command:
# its forked child leaves with os._exit and its main returns its own status.
OWN_EXITS = {"arms/net_relay.py"}


def _raises_and_exits(root: Path = SRC) -> list[str]:
    """Every ``raise`` of a builtin in NOT_RAISED and every exit with a number written out
    (``sys.exit(2)``, ``ctx.exit(1)``, ``os._exit(125)``) outside the CLI's one map."""
    found = []
    for path in sorted(root.rglob("*.py")):
        file = str(path.relative_to(root))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                called = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if ast.unparse(called) in NOT_RAISED:
                    found.append(f"{file}:{node.lineno}: raise {ast.unparse(called)}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("exit", "_exit")
                and any(isinstance(arg, ast.Constant) for arg in node.args)
                and file != "cli/__init__.py"
                and file not in OWN_EXITS
            ):
                found.append(f"{file}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_raise_of_a_bug_builtin_and_no_exit_code_written_out() -> None:
    assert _raises_and_exits() == [], "raise InternalError; exit through the error classes"


def test_the_raise_and_exit_scan_sees_what_it_looks_for(tmp_path: Path) -> None:
    """The scan is not vacuous: it finds each kind in a tree that has them, and leaves the
    CLI's map and named codes alone."""
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "__init__.py").write_text("sys.exit(3)\n")
    (tmp_path / "a.py").write_text(
        "raise RuntimeError('x')\nctx.exit(2)\nos._exit(125)\nctx.exit(EXIT_BUG)\n"
        "raise ValueError('an argument check')\n"
    )
    assert _raises_and_exits(tmp_path) == [
        "a.py:1: raise RuntimeError",
        "a.py:2: ctx.exit(2)",
        "a.py:3: os._exit(125)",
    ]


# --- the exit codes: one per class, read from exit_code by the CLI -----------------------

EVERY_CLASS = [
    pytest.param(InputError("suites/x/keys.jsonl", 3, "bad; fix it"), EXIT_INPUT, id="input"),
    pytest.param(ModelUnavailable("nosuch/x", "unknown provider"), EXIT_INPUT, id="model"),
    pytest.param(
        InputProblems(["suites/x/keys.jsonl:3: bad; fix it", "suites/x/keys.jsonl:9: worse"]),
        EXIT_INPUT,
        id="input-problems",
    ),
    pytest.param(NegativeVerdict("gate not met"), EXIT_VERDICT, id="verdict"),
    pytest.param(InternalError("an invariant broke"), EXIT_BUG, id="internal"),
    pytest.param(WorkerDiedError("a scan process died"), EXIT_BUG, id="worker-died"),
    pytest.param(JSONProblem("syntax", "not JSON"), EXIT_BUG, id="json-problem"),
    pytest.param(ProtocolError("result is empty"), EXIT_BUG, id="protocol"),
    pytest.param(ToolFailure("no such file"), EXIT_BUG, id="tool-failure"),
    pytest.param(ModelFailed("m: down"), EXIT_BUG, id="model-failed"),
    pytest.param(ContextTooLarge("does not fit"), EXIT_BUG, id="context-too-large"),
    pytest.param(AgentError("eval failed", "{}"), EXIT_BUG, id="agent-error"),
    pytest.param(JudgeFailed("no tool call"), EXIT_BUG, id="judge-failed"),
    pytest.param(CorruptError("shrank"), EXIT_BUG, id="corrupt"),
    pytest.param(NoSuchItem("no item at position 9"), EXIT_BUG, id="no-such-item"),
    pytest.param(BadLabel("citation 2 does not exist"), EXIT_BUG, id="bad-label"),
]


def test_the_table_holds_every_class_of_errors_py() -> None:
    tested = {type(p.values[0]) for p in EVERY_CLASS}
    defined = {
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, FlightdeckError)
    }
    abstract = {FlightdeckError, HandledError}  # never raised themselves
    assert defined - abstract == tested


@pytest.mark.parametrize(("error", "code"), EVERY_CLASS)
def test_the_cli_exits_with_the_class_exit_code(
    runner: CliRunner,
    project: BuiltProject,
    monkeypatch: pytest.MonkeyPatch,
    error: FlightdeckError,
    code: int,
) -> None:
    def raising(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr("flightdeck.tasks.knowledge.status", raising)
    result = runner.invoke(cli, ["knowledge", "status", str(project.suite)])
    assert result.exit_code == code == type(error).exit_code, result.output
    assert result.stdout == ""
    if isinstance(error, InputProblems):  # one error: line per problem
        assert result.stderr == "".join(f"error: {line}\n" for line in error.problems)
    elif code == EXIT_INPUT:
        assert result.stderr == f"error: {error}\n"
    elif code == EXIT_VERDICT:
        assert result.stderr == f"{error}\n"  # a verdict is not an error
    else:  # a bug: the traceback is kept, and it names the class
        assert result.stderr.startswith("Traceback (most recent call last):\n")
        assert f"flightdeck.errors.{type(error).__name__}: " in result.stderr
        assert "this is a bug, not bad input" in result.stderr


def test_bad_input_raises_input_error_and_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "suites" / "nope"
    result = runner.invoke(cli, ["knowledge", "check", str(missing)])
    assert result.exit_code == InputError.exit_code == 2
    assert result.stderr == (
        f"error: {missing}: suite folder not found; pass a folder such as suites/<suite>\n"
    )


def test_a_suite_not_ready_is_a_negative_verdict_and_exits_1(
    runner: CliRunner, project: BuiltProject
) -> None:
    result = runner.invoke(cli, ["knowledge", "status", str(project.suite)])
    assert result.exit_code == NegativeVerdict.exit_code == 1, result.output
    assert result.stdout.endswith("not ready to score\n")
    assert result.stderr == ""


def test_an_unknown_model_is_model_unavailable_and_exits_2(
    runner: CliRunner, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    args = ["experiment", "agent", "llm", "--model", "nosuch/x", "--question", "who owns it?"]
    result = runner.invoke(cli, [*args, "--workspace", str(tmp_path)])
    assert result.exit_code == ModelUnavailable.exit_code == 2, result.output
    assert result.stderr.startswith("error: --model: cannot open 'nosuch/x' (")
    assert result.stderr.count("\n") == 1

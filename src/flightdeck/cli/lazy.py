"""A command group's commands, each imported from its module only when it is looked up.

Click's documented way to keep a big CLI quick to start is a group that imports a subcommand's
module when the subcommand runs (click's "Lazily Loading Subcommands", ``LazyGroup``). Here
the laziness lives in the group's ``commands`` mapping instead of in an overridden
``get_command``: click reads a group's commands only through that mapping
(``commands.get(name)``, ``sorted(commands)``), so ``Group.get_command``, ``list_commands``,
the "did you mean" of an unknown command and every caller that walks ``group.commands`` (the
docs test, the dvc.yaml test) see the same commands as before, imported on first use.

``flightdeck holdout canary-scan`` then imports the holdout group's module and nothing of
``knowledge`` or ``experiment``; ``flightdeck --help`` still lists every command, because the
listing asks each one for its short help (and so imports the CLI modules, never numpy,
scipy, polars, dvc or inspect_ai, which they import inside their functions).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping

import click


class LazyCommands(MutableMapping[str, click.Command]):
    """Commands by name: ``"module:attribute"`` until first looked up, then the command.

    A command added later (``group.add_command``, ``@group.command``) is held as it is. An
    entry whose module does not define a command of that name is a bug of this table:
    looking it up raises ``LookupError`` (exit 3 with its traceback), never a quiet miss.
    """

    def __init__(self, where: Mapping[str, str]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is not None:
            return command
        module, _, attribute = self._where[name].partition(":")
        found = getattr(importlib.import_module(module), attribute, None)
        if not isinstance(found, click.Command) or found.name != name:
            raise LookupError(f"{module}:{attribute} is not the command {name!r}")
        self._loaded[name] = found
        return found

    def __contains__(self, name: object) -> bool:  # without importing anything
        return name in self._loaded or name in self._where

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._where.pop(name, None)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._where.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from dict.fromkeys([*self._loaded, *self._where])

    def __len__(self) -> int:
        return len(self._loaded.keys() | self._where.keys())

"""The ``rpa-sim`` parser: the commands, grouped by what they work on, each group's options in its own module.

Built from the standard library alone (with the light parts of rpa_sim), so that ``rpa-sim --help`` starts
fast: each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any, NoReturn, cast

from rpa_sim.cli import catalogue, evaluation, export, live, monitoring, records, scenarios, signals, staffing
from rpa_sim.cli.options import NAMES_HELP, usage_message
from rpa_sim.cli.output import one_line
from rpa_sim.version import __version__

__all__ = ["EXIT_USAGE", "CommandParser", "build_parser", "command_named"]

#: The exit status of bad usage (docs/cli.md, "Exit status").
EXIT_USAGE = 2


class CommandParser(argparse.ArgumentParser):
    """argparse with its usage errors on one line, naming the command and its help:
    ``rpa-sim: error: COMMAND: problem (see 'rpa-sim COMMAND --help')``."""

    def error(self, message: str) -> NoReturn:
        # a required option with a hidden old spelling is a required group whose one shown member is missing
        # (options.out_argument): said as argparse says any missing option
        message = re.sub(r"^one of the arguments (\S+) is required$", r"the following arguments are required: \1",
                         message)
        self.exit(EXIT_USAGE, one_line(f"rpa-sim: error: {usage_message(self.prog, message)}") + "\n")

    # Any: the base class's overloads type the result by the namespace given, and this returns what it returns
    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        # a command's words left over are its own mistake: said by the command's parser, which names it, rather
        # than handed up to the top parser, which would point at 'rpa-sim --help'
        if extras and self.prog != "rpa-sim":
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        # argparse before Python 3.12 drops the value '--' of --out=-- as if it ended the options, and hands the
        # action an empty list, neither converted nor checked: a traceback later; '--' is taken as written
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)


class _NotRun:
    """The parser of a command that is not the one run: what its group adds to it is never looked at."""

    def __init__(self, **settings: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return self._ignored

    def _ignored(self, *args: Any, **kwargs: Any) -> _NotRun:
        return self


class _Commands(argparse._SubParsersAction):
    """The commands' parsers; with ``only``, the other commands are named (in ``--help`` and in the message of a
    mistyped one) but get no options: adding every command's options takes longer than reading a table's score."""

    only: str | None = None

    def add_parser(self, name: str, **settings: Any) -> Any:
        if self.only in (None, name, *settings.get("aliases", ())):
            return super().add_parser(name, **settings)
        every_parser, self._parser_class = self._parser_class, _NotRun
        try:
            return super().add_parser(name, **settings)
        finally:
            self._parser_class = every_parser


def build_parser(*, only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, in the order of ``rpa-sim --help``: a scenario's study, the bundled
    scenarios and policies, the commands on DATA, records in and policies out, then operations and
    monitoring.

    With ``only``, the name of a command, that command alone gets its options: the parser of a command line
    that names it (:func:`command_named`), which parses it as the whole parser does.
    """
    parser = CommandParser(prog="rpa-sim", description="Replay document-AI predictions through human-review "
                                                       "policies.", epilog=NAMES_HELP)
    parser.add_argument("--version", action="version", version=f"rpa-sim {__version__}")
    commands = cast(_Commands, parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                                     action=_Commands))
    commands.only = only
    for group in (scenarios, catalogue, evaluation, signals, records, export, staffing, monitoring, live):
        group.add_parsers(commands)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command a command line names, when its first word is one (``rpa-sim`` has no option before it but
    ``--help`` and ``--version``); None otherwise."""
    return argv[0] if argv and not argv[0].startswith("-") else None

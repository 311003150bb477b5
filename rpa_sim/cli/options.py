"""The command line's options: one set of value types and checks, and the options that commands share.

A value is checked where the command line is read: a type below turns a bad one into argparse's usage error
(exit 2), which names the command and its help (``rpa-sim: error: sweep: argument --miss-rate: expected a
number in [0, 1], got '1.5' (see 'rpa-sim sweep --help')``). A check that only a command can make (options that
go together, a grid of thresholds) raises :func:`usage_error`, worded the same way. Every option that several
commands take is added here, so that it is spelt, checked, defaulted and explained once: DATA and the options
that read it, ``--workers`` and ``--scheduler``, ``--seed``, ``--format``, ``--out`` and the folders.

Only the standard library is imported: building the parser stays fast (``tests/test_startup.py``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rpa_sim.common import limits
from rpa_sim.common.errors import UsageError
from rpa_sim.common.workers import available_cores

__all__ = ["FORMATS", "NAMES_HELP", "NON_NEGATIVE", "OPEN_SHARE", "POSITIVE", "POSITIVE_NUMBER", "SHARE",
           "DeprecatedAlias", "bounded", "confidence_level_argument", "data_arguments", "evaluation_arguments",
           "folder_argument", "format_arguments", "monitored_policy_arguments", "out_argument", "scheduler_address",
           "seed_argument", "simulated_hours", "size", "usage_error", "usage_message"]

FORMATS = ("table", "csv", "json")
NAMES_HELP = ("Policies (--policy, a scenario's policies:) and scenarios (SCENARIO) are bundled names or paths. A bare "
              "name such as confidence or receipts-demo is always the file bundled with rpa-sim, even if a file of "
              "that name is in the current folder; anything with a path separator or a .yaml/.yml suffix "
              "(./confidence, rules/strict, my-policy.yaml) is a file on disk. Paths in a scenario's policies: start "
              "from the scenario's folder. An unknown name is an error that lists the bundled names.")


def usage_message(prog: str, message: str) -> str:
    """A usage error's text: the command's words, the problem, and where its help is.

    >>> usage_message("rpa-sim sweep", "unrecognized arguments: --x")
    "sweep: unrecognized arguments: --x (see 'rpa-sim sweep --help')"
    >>> usage_message("rpa-sim", "argument COMMAND: invalid choice: 'x'")
    "argument COMMAND: invalid choice: 'x' (see 'rpa-sim --help')"
    """
    command = prog.removeprefix("rpa-sim").strip()
    return f"{command}: {message} (see '{prog} --help')" if command else f"{message} (see '{prog} --help')"


def usage_error(command: str, message: str) -> UsageError:
    """The usage error of ``rpa-sim COMMAND`` found once the command line is read, worded as argparse's are."""
    return UsageError(usage_message(f"rpa-sim {command}", message))


def bounded(kind: type[int] | type[float], *, low: float, high: float | None = None,
            open_low: bool = False, open_high: bool = False) -> Callable[[str], Any]:
    """An argparse type: a finite number of ``kind`` within the bounds, or a usage error quoting the text.

    >>> bounded(float, low=0.0, high=1.0)("0.25")
    0.25
    >>> bounded(int, low=1)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer >= 1, got '0'
    """
    if kind is int:
        wanted = f"an integer >= {low:g}"
    elif high is None:
        wanted = f"a number {'>' if open_low else '>='} {low:g}"
    else:
        wanted = f"a number in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        above_low = value > low if open_low else value >= low
        below_high = high is None or (value < high if open_high else value <= high)
        if not (math.isfinite(value) and above_low and below_high):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return parse


SHARE = bounded(float, low=0.0, high=1.0)
OPEN_SHARE = bounded(float, low=0.0, high=1.0, open_low=True, open_high=True)
NON_NEGATIVE = bounded(int, low=0)
POSITIVE = bounded(int, low=1)
POSITIVE_NUMBER = bounded(float, low=0.0, open_low=True)


def size(unit: str, *, most: int, limited_by: str, bytes_each: float | None = None,
         least: int = 0) -> Callable[[str], int]:
    """An argparse type: a whole number of ``unit`` (``1e6`` too) within
    :func:`rpa_sim.common.limits.check_size`'s range."""
    def parse(text: str) -> int:
        try:
            value = limits.check_size(text, unit=unit, most=most, limited_by=limited_by, bytes_each=bytes_each,
                                      least=least)
        except limits.SizeError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        if not isinstance(value, int):
            raise argparse.ArgumentTypeError(f"expected a whole number of {unit}, got {text!r}")
        return value

    return parse


def simulated_hours(text: str) -> float:
    """An argparse type: hours of a simulated queue, > 0 and at most a year."""
    hours = POSITIVE_NUMBER(text)
    if hours > limits.MOST_SIMULATED_HOURS:
        raise argparse.ArgumentTypeError(f"{text} hours is more than the {limits.MOST_SIMULATED_HOURS:,} allowed "
                                         f"(a year, as a scenario's operations: days)")
    return float(hours)


def scheduler_address(text: str) -> str:
    """An argparse type: a Dask scheduler's address (:func:`rpa_sim.evaluate.cluster.parse_scheduler`)."""
    from rpa_sim.evaluate.cluster import parse_scheduler  # noqa: PLC0415

    try:
        return parse_scheduler(text)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option, kept for one release: it works, says so on stderr, and is hidden from help.

    The warning waits in the namespace (``deprecations``) until the command has done its work: a command line
    that fails, at parsing or later, ends in its one error line alone. The spelling given is kept too
    (``spellings``, by destination), for messages to name the option as the user wrote it.
    """

    def __init__(self, option_strings: list[str], dest: str, *, replacement: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.replacement = replacement

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        warning = (f"{option_string} is deprecated and will be removed in the next release; "
                   f"use {self.replacement}")
        namespace.deprecations = [*getattr(namespace, "deprecations", []), warning]
        namespace.spellings = {**getattr(namespace, "spellings", {}), self.dest: option_string}
        setattr(namespace, self.dest, values)


# --------------------------------------------------------------------------- options that commands share


def data_arguments(parser: argparse.ArgumentParser, *, tables: bool = True, option: str | None = None) -> None:
    """DATA and the options that read it; with ``option`` (what it is for), DATA is the option ``--data``."""
    parser.add_argument(*(("--data",) if option else ("data",)), type=Path, metavar="DATA",
                        help=(f"{option} (default: none): " if option else "")
                        + "records (.jsonl or .jsonl.gz), a regular file" + (
                            "; or an outcome table from rpa-sim evaluate (a .parquet file, or any file that starts "
                            "with Parquet's PAR1), which gives the same results without evaluating again"
                            if tables else "") + "; or shards of the data: a folder (its *.jsonl, *.jsonl.gz and "
                        "*.parquet files, in name order) or a quoted glob such as 'data/*.jsonl.gz' (docs/scale.md)")
    parser.add_argument("--predictions", type=Path, metavar="FILE",
                        help="predictions joined to DATA on id, DATA then holding the ground truth (default: none, "
                             "DATA holds both)")
    parser.add_argument("--task", choices=("kie", "vqa"), help="kie or vqa (default: inferred from the records)")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="skip records that do not fit the format and report them, instead of stopping "
                             "(default: stop at the first)")
    # None = not given: each option applies to one task only, which is known once the records are open
    parser.add_argument("--value-match", choices=("exact", "normalized"),
                        help="KIE only: compare values exactly (the official KIEval) or with case and spaces "
                             "folded (default: exact)")
    parser.add_argument("--alpha", type=SHARE, metavar="A",
                        help="VQA only: SMuDGE's weight of the match score, in [0, 1] (default: 0.25)")
    evaluation_arguments(parser)


def evaluation_arguments(parser: argparse.ArgumentParser, *, scenario: bool = False) -> None:
    """``--workers`` and ``--scheduler``: where records are evaluated, on every command that evaluates them.

    With ``scenario``, they apply to the data of the scenario the command runs (its ``data: file:``, or the
    records it generates), ``--scheduler`` in place of the scenario's own ``data: scheduler:``.
    """
    what = "the scenario's records" if scenario else "the records"
    # a scenario's None: not given, as a command that takes them only with a scenario (staff) must tell
    parser.add_argument("--workers", type=POSITIVE, default=None if scenario else available_cores(), metavar="N",
                        help=f"processes that evaluate {what}, at most one per core and per batch of 256 records (a "
                             f"larger N is capped); results are identical for any N (default: every core this "
                             f"process may use)")
    shards = "the scenario's data file" if scenario else "DATA"
    default = "the scenario's data: scheduler:, else none" if scenario else "none, this machine's processes"
    parser.add_argument("--scheduler", type=scheduler_address, metavar="ADDRESS",
                        help=f"evaluate on Dask (pip install \"rpa-sim[dask]\"), a task per shard of {shards}, at "
                             f"ADDRESS: tcp://HOST:PORT of a running 'dask scheduler', or local / local:N for N worker "
                             f"processes on this machine (at most one per core and per shard); results are identical "
                             f"(docs/scale.md); --workers is then unused (default: {default})")


def seed_argument(parser: argparse.ArgumentParser, *, what: str, default: int | None = 0) -> None:
    """``--seed``, the same everywhere: an integer >= 0, 0 unless given (docs/cli.md, "Seeds").

    ``default=None`` lets a command tell a seed given from none (``staff``, whose seed goes with
    ``--simulate`` only); it then uses 0 all the same.
    """
    parser.add_argument("--seed", type=NON_NEGATIVE, default=default, metavar="S",
                        help=f"seed of {what}, an integer >= 0; the same seed gives the same bytes (default: 0)")


def monitored_policy_arguments(parser: argparse.ArgumentParser, *, required: str = "required") -> None:
    """The policy run in production and its threshold (``replay``, ``plan-audit``); ``required`` other than
    ``"required"`` says when they are (the command then checks)."""
    parser.add_argument("--policy", required=required == "required", metavar="P",
                        help=f"a policy file or bundled policy name ({required})")
    parser.add_argument("--threshold", type=bounded(float, low=0.0, high=math.inf, open_high=True),
                        required=required == "required", metavar="T",
                        help=f"the policy's swept threshold: an item is routed when T is above its score, a number "
                             f">= 0 ({required})")


def confidence_level_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence-level", type=OPEN_SHARE, default=0.95, metavar="L",
                        help="the intervals' nominal coverage, in (0, 1) (default: 0.95)")


def format_arguments(parser: argparse.ArgumentParser, *, what: str, default: str | None = "table",
                     default_help: str = "table") -> argparse._MutuallyExclusiveGroup:
    """``--format table|csv|json`` and its short form ``--json``; the group, for a command to add a third."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--format", choices=FORMATS, default=default,
                       help=f"how to print {what}: an aligned table, CSV (a header line, then a line per row) "
                            f"or JSON (default: {default_help})")
    group.add_argument("--json", action="store_const", const="json", dest="format", help="same as --format json")
    return group


def out_argument(parser: argparse.ArgumentParser, *, help: str, required: bool = True, old: str | None = None,
                 metavar: str = "FILE") -> None:
    """``--out FILE``, the one option that names an output file; ``old`` is a deprecated spelling of it.

    With ``old``, argparse cannot require ``--out`` (either spelling will do): the command checks that it
    was given, first thing.
    """
    suffix = " (required)" if required else ""
    if old is None:
        parser.add_argument("--out", type=Path, required=required, metavar=metavar, help=help + suffix)
        return
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--out", type=Path, metavar=metavar, help=help + suffix)
    group.add_argument(old, type=Path, metavar=metavar, dest="out", action=DeprecatedAlias, replacement="--out")


def folder_argument(parser: argparse.ArgumentParser, option: str, old: str, *, help: str) -> None:
    """An output folder (``--out-dir``, ``--png-dir``) and the deprecated spelling it replaced."""
    group = parser.add_mutually_exclusive_group()
    dest = option.removeprefix("--").replace("-", "_")
    group.add_argument(option, type=Path, metavar="DIR", dest=dest, help=help)
    group.add_argument(old, type=Path, metavar="DIR", dest=dest, action=DeprecatedAlias, replacement=option)

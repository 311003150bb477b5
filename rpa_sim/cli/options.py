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
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rpa_sim.common import limits
from rpa_sim.common.errors import UsageError
from rpa_sim.common.workers import available_cores

__all__ = ["FOLDER_WORDS", "FORMATS", "FORMAT_WORDS", "NAMES_HELP", "NON_NEGATIVE", "OPEN_SHARE", "OUT_WORDS",
           "POLICY_WORDS", "POSITIVE", "POSITIVE_NUMBER", "SCENARIO_WORDS", "SEED_WORDS", "SHARE",
           "SKIP_INVALID_WORDS", "THRESHOLD_RANGE", "WORKERS_WORDS", "DeprecatedAlias", "bounded", "by_argument",
           "confidence_level_argument", "data_arguments", "evaluation_arguments", "folder_argument",
           "format_arguments", "guarantee_arguments", "monitored_policy_arguments", "out_argument", "output_file",
           "output_folder", "policy_argument", "reviewer_arguments", "scheduler_address", "seed_argument",
           "simulated_hours", "size", "skip_invalid_argument", "threshold", "threshold_argument", "usage_error",
           "usage_message", "workers_argument"]

FORMATS = ("table", "csv", "json")
NAMES_HELP = ("Policies (--policy, a scenario's policies:) and scenarios (SCENARIO) are bundled names or paths. A bare "
              "name such as confidence or receipts-demo is always the file bundled with rpa-sim, even if a file of "
              "that name is in the current folder; anything with a path separator or a .yaml/.yml suffix "
              "(./confidence, rules/strict, my-policy.yaml) is a file on disk. Paths in a scenario's policies: start "
              "from the scenario's folder. rpa-sim scenarios and rpa-sim policies list the bundled ones.")


#: The words each shared option says wherever it is taken, its command's own words around them (one option, one
#: wording: tests/test_cli_conventions.py walks every command's parser).
OUT_WORDS = "written atomically; missing folders are created"
FOLDER_WORDS = "created when needed"
FORMAT_WORDS = "an aligned table, CSV (a header line, then a line per row) or JSON"
SEED_WORDS = "an integer >= 0; the same seed gives the same bytes"
WORKERS_WORDS = "(a larger N is capped); results are identical for any N"
SKIP_INVALID_WORDS = "and list it, instead of stopping at the first"
POLICY_WORDS = "a policy: a YAML file, or the name of a bundled one (rpa-sim policies lists them)"
SCENARIO_WORDS = "a scenario: a YAML file, or the name of a bundled one (rpa-sim scenarios lists them)"


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


def output_file(text: str) -> Path:
    """An argparse type: an output file (``--out``, ``--review-log``); an existing folder is bad usage, said
    at once, like any other bad option value (docs/cli.md, "Files").

    What else keeps a file from being written (a parent that is a file, a folder without write permission) is
    found by :func:`rpa_sim.common.files.check_output` before the command's work, and is bad input.
    """
    path = Path(text)
    if _kind(path) == "folder":
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    return path


def output_folder(text: str) -> Path:
    """An argparse type: an output folder (``--out-dir``, ``--png-dir``), made when missing; an existing file
    is bad usage, as a folder given for ``--out`` is."""
    path = Path(text)
    if _kind(path) == "file":
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder")
    return path


def _kind(path: Path) -> str | None:
    """``folder``, ``file`` (anything else that is there), or None when nothing can be found at ``path``: a name
    too long or a parent that is a file is left to :func:`rpa_sim.common.files.check_output`, which says why."""
    try:
        return "folder" if stat.S_ISDIR(path.stat().st_mode) else "file"
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None


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
    skip_invalid_argument(parser, what="each record")
    # None = not given: each option applies to one task only, which is known once the records are open
    parser.add_argument("--value-match", choices=("exact", "normalized"),
                        help="KIE only: compare values exactly (the official KIEval) or with case and spaces "
                             "folded (default: exact)")
    parser.add_argument("--alpha", type=SHARE, metavar="SHARE",
                        help="VQA only: SMuDGE's weight of the match score, in [0, 1] (default: 0.25)")
    evaluation_arguments(parser)


def evaluation_arguments(parser: argparse.ArgumentParser, *, scenario: bool = False) -> None:
    """``--workers`` and ``--scheduler``: where records are evaluated, on every command that evaluates them.

    With ``scenario``, they apply to the data of the scenario the command runs (its ``data: file:``, or the
    records it generates), ``--scheduler`` in place of the scenario's own ``data: scheduler:``.
    """
    what = "the scenario's records" if scenario else "the records"
    # a scenario's None: not given, as a command that takes them only with a scenario (staff) must tell
    workers_argument(parser, default=None if scenario else available_cores(),
                     what=f"evaluate {what}, at most one per core and per batch of 256 records",
                     default_help="every core this process may use")
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
    parser.add_argument("--seed", type=NON_NEGATIVE, default=default, metavar="N",
                        help=f"seed of {what}, {SEED_WORDS} (default: 0)")


def workers_argument(parser: argparse.ArgumentParser, *, default: int | None, what: str, default_help: str) -> None:
    """``--workers N``: processes that do the command's work (``what`` they do), capped, never changing a result."""
    parser.add_argument("--workers", type=POSITIVE, default=default, metavar="N",
                        help=f"processes that {what} {WORKERS_WORDS} (default: {default_help})")


def skip_invalid_argument(parser: argparse.ArgumentParser, *, what: str) -> None:
    """``--skip-invalid``: leave out ``what`` does not fit its format, and say so, rather than stop at the first."""
    parser.add_argument("--skip-invalid", action="store_true",
                        help=f"leave out {what} that does not fit its format {SKIP_INVALID_WORDS} (default: stop at "
                             f"the first)")


def policy_argument(parser: argparse.ArgumentParser, *, when: str, many: bool = False,
                    required: bool = False) -> None:
    """``--policy POLICY``: a policy by file or bundled name; ``when`` is its own parenthesis (required, the
    default, what it goes with)."""
    parser.add_argument("--policy", action="append" if many else "store", required=required, metavar="POLICY",
                        help=f"{POLICY_WORDS} ({when})")


def reviewer_arguments(parser: argparse.ArgumentParser, *, default: float | None = 0.0) -> None:
    """The reviewer's mistakes: ``--miss-rate`` and ``--false-correction-rate`` (``sweep``, ``replay``);
    ``default=None`` lets a command tell them given from not (``replay --days`` refuses them), 0 all the same."""
    parser.add_argument("--miss-rate", type=SHARE, default=default, metavar="SHARE",
                        help="share of reviewed errors the reviewer misses, in [0, 1] (default: 0)")
    parser.add_argument("--false-correction-rate", type=SHARE, default=default, metavar="SHARE",
                        help="share of reviewed correct values the reviewer breaks, in [0, 1] (default: 0)")


def by_argument(parser: argparse.ArgumentParser, *, goes_with: str = "") -> None:
    """``--by document_type|field``: the command's figures for each part of the data on its own (``certify``,
    ``signals``); ``goes_with`` opens the parenthesis (what it does not go with)."""
    parser.add_argument("--by", choices=("document_type", "field"), default=None,
                        help=f"each document type (the records' document_type) or each field (KIE key, VQA question "
                             f"type) on its own ({goes_with}default: one for all)")


def guarantee_arguments(parser: argparse.ArgumentParser, *, delta: float | None, delta_means: str,
                        optional: bool = False) -> None:
    """The guarantee an error rate is held to: ``--max-error`` and ``--delta`` (``certify``, ``watch``,
    ``signals``); a ``delta`` of None makes ``--delta`` required, and ``delta_means`` says what its failing is for
    the command; ``optional`` makes both optional, given together (the command checks), none by default."""
    max_when = "with --delta; default: none" if optional else "required"
    parser.add_argument("--max-error", type=OPEN_SHARE, required=not optional, metavar="SHARE",
                        help=f"the highest acceptable error rate of auto-accepted items, in (0, 1) ({max_when})")
    when = "with --max-error; default: none" if optional else "required" if delta is None else f"default: {delta:g}"
    parser.add_argument("--delta", type=OPEN_SHARE, required=delta is None and not optional, default=delta,
                        metavar="SHARE",
                        help=f"the chance that the guarantee fails, in (0, 1) ({delta_means}; {when})")


#: What every threshold option (``--threshold``) takes, said once: a swept score is in [0, 1], so a threshold
#: below 0 routes nothing more than 0, and one above 1 reviews everything (the top of an exact grid is
#: ``1.0000000000000002``, which a summary's decision may hold); the grids of ``--thresholds`` take the same.
THRESHOLD_RANGE = "a number >= 0 (scores are in [0, 1]; above 1 reviews everything)"


def threshold(text: str) -> float:
    """An argparse type: a policy's swept threshold τ, the one range of every command that takes one.

    >>> threshold("0.9"), threshold("1.0000000000000002")
    (0.9, 1.0000000000000002)
    >>> threshold("95%")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a number >= 0 (scores are in [0, 1]; above 1 reviews everything), got '95%'
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0.0):
        raise argparse.ArgumentTypeError(f"expected {THRESHOLD_RANGE}, got {text!r}")
    return value


def threshold_argument(parser: argparse.ArgumentParser, *, required: bool, goes_with: str | None = None,
                       when: str | None = None) -> None:
    """``--threshold T``: the policy's swept threshold, worded and checked the same on every command; ``when``
    replaces the parenthesis that says when it is required (a command that checks it itself)."""
    if when is None:
        when = "required" if required else f"with {goes_with}; default: none" if goes_with else "default: none"
    parser.add_argument("--threshold", type=threshold, required=required, metavar="T",
                        help=f"the policy's swept threshold τ: an item is routed when τ is above its score; "
                             f"{THRESHOLD_RANGE} ({when})")


def monitored_policy_arguments(parser: argparse.ArgumentParser, *, required: str = "required") -> None:
    """The policy run in production and its threshold (``replay``, ``plan-audit``); ``required`` other than
    ``"required"`` says when they are (the command then checks)."""
    policy_argument(parser, required=required == "required", when=required)
    threshold_argument(parser, required=required == "required", when=required)


def confidence_level_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence-level", type=OPEN_SHARE, default=0.95, metavar="SHARE",
                        help="the intervals' nominal coverage, in (0, 1) (default: 0.95)")


def format_arguments(parser: argparse.ArgumentParser, *, what: str, default: str | None = "table",
                     default_help: str = "table") -> argparse._MutuallyExclusiveGroup:
    """``--format table|csv|json`` and its short form ``--json``; the group, for a command to add a third."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--format", choices=FORMATS, default=default,
                       help=f"how to print {what}: {FORMAT_WORDS} (default: {default_help})")
    group.add_argument("--json", action="store_const", const="json", dest="format", help="same as --format json")
    return group


def out_argument(parser: argparse.ArgumentParser, *, what: str, required: bool = True, default_help: str = "",
                 when: str | None = None, old: str | None = None, metavar: str = "FILE") -> None:
    """``--out FILE``, the one option that names an output file (``what`` it holds); ``old`` is a deprecated
    spelling of it; ``when`` replaces the parenthesis that says whether it is required (a command that checks
    it itself, as ``replay``: without ``--days``).

    With ``old``, the two spellings are a group of which one is required, and ``--help`` shows ``--out FILE``
    as required all the same (the old spelling is hidden); the parser says a missing one as a missing
    ``--out`` (:class:`rpa_sim.cli.parser.CommandParser`).
    """
    if when is None:
        when = "required" if required else f"default: {default_help}"
    help = f"{what}, {OUT_WORDS} ({when})"
    # a folder for a file is refused as bad usage, at once (docs/cli.md, "Files")
    if old is None:
        parser.add_argument("--out", type=output_file, required=required, metavar=metavar, help=help)
        return
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--out", type=output_file, metavar=metavar, help=help)
    group.add_argument(old, type=output_file, metavar=metavar, dest="out", action=DeprecatedAlias,
                       replacement="--out")


def folder_argument(parser: argparse.ArgumentParser, option: str, old: str, *, what: str,
                    default_help: str) -> None:
    """An output folder (``--out-dir``, ``--png-dir``: ``what`` goes into it) and the deprecated spelling it
    replaced."""
    group = parser.add_mutually_exclusive_group()
    dest = option.removeprefix("--").replace("-", "_")
    group.add_argument(option, type=output_folder, metavar="DIR", dest=dest,
                       help=f"{what}, {FOLDER_WORDS} (default: {default_help})")
    group.add_argument(old, type=output_folder, metavar="DIR", dest=dest, action=DeprecatedAlias, replacement=option)

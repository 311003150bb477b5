"""DATA on the command line: records or outcome tables read and evaluated into one outcome table.

Every command that evaluates DATA (``evaluate``, ``score``, ``sweep``, ``certify``, ``replay``,
``plan-audit``, ``export-policy``) reads it through :func:`evaluate_data`, with the options of
``rpa_sim.cli`` (``--predictions``, ``--task``, ``--skip-invalid``, ``--workers``, ``--scheduler``, ...).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.output import one_line
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.progress import reporting, stage

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes import OutcomeTable

__all__ = ["check_task_options", "evaluate_data", "evaluate_each_shard", "evaluation_options", "read_table_file",
           "report_skipped", "shows_progress"]


def shows_progress(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run ``command`` with progress bars on stderr when it is a terminal (:mod:`rpa_sim.common.progress`)."""

    @functools.wraps(command)
    def with_progress(args: argparse.Namespace) -> int:
        with reporting():
            return command(args)

    return with_progress


def check_task_options(args: argparse.Namespace, task: str, how: str) -> None:
    from rpa_sim.evaluate.outcomes import task_of_option  # noqa: PLC0415

    for dest, option in (("value_match", "--value-match"), ("alpha", "--alpha")):
        applies_to = task_of_option(dest)
        if getattr(args, dest) is not None and task != applies_to:
            raise UsageError(f"{option} applies to {applies_to.upper()} data only, and the task is "
                             f"{task.upper()} ({how})")


def evaluation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluation settings given on the command line (the others keep their defaults)."""
    return {dest: getattr(args, dest) for dest in ("value_match", "alpha") if getattr(args, dest) is not None}


def read_table_file(args: argparse.Namespace) -> OutcomeTable:
    """Read the outcome table DATA, refusing what would make its results differ from its records'."""
    from rpa_sim.evaluate.load import load_table  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import read_info  # noqa: PLC0415

    if args.predictions is not None:
        raise UsageError(f"--predictions applies to records, and {args.data} is an outcome table, which holds its "
                         f"predictions already")
    if args.skip_invalid:
        raise UsageError(f"--skip-invalid applies to records, and {args.data} is an outcome table (rpa-sim evaluate "
                         f"--skip-invalid skips them when it makes the table)")
    info = read_info(args.data)
    info.check(args.data, task=args.task)
    check_task_options(args, info.task, f"read from {args.data}")
    with stage(f"reading {args.data.name}"):
        table = load_table(args.data, task=info.task, **evaluation_options(args)).table
    args.skipped = info.skipped
    return table


def evaluate_data(args: argparse.Namespace, *, locate: bool = True) -> OutcomeTable:
    """Read and evaluate DATA (or read the outcome table DATA), reporting skipped records on standard error.

    ``locate=False`` skips locating values in the OCR for the routing grounding (records read from one
    file): for a command whose output does not depend on it."""
    from rpa_sim.evaluate.sources import is_one_file, merge_shards, resolve_shards  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import is_table_file  # noqa: PLC0415

    shards = resolve_shards(args.data)
    if args.scheduler is not None or not is_one_file(args.data, shards):
        merged = merge_shards(shards, evaluate_each_shard(args, shards), data=args.data)
        report_skipped(merged.skipped, merged.skipped_summary)
        args.skipped = merged.skipped_count
        return merged.table
    if is_table_file(args.data):
        return read_table_file(args)
    from rpa_sim.evaluate.load import evaluate_stream  # noqa: PLC0415
    from rpa_sim.records.readers import read_records  # noqa: PLC0415

    # a null confidence is read only for commands whose every policy says what to do with it
    stream = read_records(args.data, predictions=args.predictions, task=args.task, skip_invalid=args.skip_invalid,
                          missing_confidence=getattr(args, "missing_confidence", False))
    check_task_options(args, stream.task, "--task" if args.task else f"inferred from {args.data}")
    loaded = evaluate_stream(stream, workers=args.workers, grounding="auto" if locate else "given",
                             **evaluation_options(args))
    report_skipped(loaded.skipped, loaded.skipped_summary)
    args.skipped = len(loaded.skipped)
    return loaded.table


def report_skipped(skipped: list[InputError], summary: str) -> None:
    if skipped:
        print(f"rpa-sim: {summary}", file=sys.stderr)
        for error in skipped[:20]:
            print(f"  {one_line(str(error))}", file=sys.stderr)
        if len(skipped) > 20:
            print(f"  ... and {len(skipped) - 20} more", file=sys.stderr)


def evaluate_each_shard(args: argparse.Namespace, shards: Sequence[Path]) -> list[Any]:
    """Each shard of DATA evaluated (:mod:`rpa_sim.evaluate.sources`), on Dask with ``--scheduler``, after the
    usage checks."""
    from rpa_sim.evaluate.sources import data_task, evaluate_shards, is_one_file  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import is_table_file  # noqa: PLC0415

    if args.predictions is not None and not is_one_file(args.data, shards):
        raise UsageError(f"--predictions goes with one records file, and {args.data} is {len(shards)} shards")
    table = next((shard for shard in shards if is_table_file(shard)), None)
    if table is not None and args.predictions is not None:
        raise UsageError(f"--predictions applies to records, and {table} is an outcome table, which holds its "
                         f"predictions already")
    if table is not None and args.skip_invalid:
        raise UsageError(f"--skip-invalid applies to records, and {table} is an outcome table (rpa-sim evaluate "
                         f"--skip-invalid skips them when it makes the table)")
    task = data_task(shards, task=args.task, skip_invalid=args.skip_invalid, predictions=args.predictions)
    check_task_options(args, task, "--task" if args.task else f"inferred from {shards[0]}")
    return evaluate_shards(shards, task=task, skip_invalid=args.skip_invalid, predictions=args.predictions,
                           workers=args.workers, scheduler=args.scheduler,
                           missing_confidence=getattr(args, "missing_confidence", False), **evaluation_options(args))

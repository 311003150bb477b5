"""DATA on the command line: records or outcome tables read and evaluated into one outcome table.

Every command that evaluates DATA (``evaluate``, ``score``, ``sweep``, ``certify``, ``replay``,
``plan-audit``, ``export-policy``) reads it through :func:`evaluate_data`, with the options of
``rpa_sim.cli`` (``--predictions``, ``--task``, ``--skip-invalid``, ``--workers``, ``--scheduler``, ...).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rpa_sim.cli.output import say
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.progress import reporting

if TYPE_CHECKING:
    from rpa_sim.evaluate.load import Loaded
    from rpa_sim.evaluate.outcomes import OutcomeTable
    from rpa_sim.evaluate.settings import EvaluationSettings
    from rpa_sim.route.policies import Policy

__all__ = ["check_task_options", "evaluate_data", "evaluate_each_shard", "evaluation_options", "evaluation_settings",
           "report_skipped", "shows_progress"]


def shows_progress(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Run ``command`` with progress bars on stderr when it is a terminal (:mod:`rpa_sim.common.progress`)."""

    @functools.wraps(command)
    def with_progress(args: argparse.Namespace) -> int:
        with reporting():
            return command(args)

    return with_progress


def check_task_options(args: argparse.Namespace, task: str, how: str) -> None:
    """Refuse ``--value-match`` but with KIE data, ``--alpha`` but with VQA data (``how``: how the task is known)."""
    from rpa_sim.evaluate.outcomes import task_of_option  # noqa: PLC0415

    for dest, option in (("value_match", "--value-match"), ("alpha", "--alpha")):
        if getattr(args, dest) is None:
            continue
        applies_to = task_of_option(dest)  # (looked up only when given: it may import the other task's table)
        if task != applies_to:
            raise UsageError(f"{option} applies to {applies_to.upper()} data only, and the task is "
                             f"{task.upper()} ({how})")


def evaluation_options(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluation settings given on the command line (the others keep their defaults)."""
    return {dest: getattr(args, dest) for dest in ("value_match", "alpha") if getattr(args, dest) is not None}


def evaluation_settings(args: argparse.Namespace, *, locate: bool = True, policies: Sequence[Policy] = (),
                        routes: bool = True) -> EvaluationSettings:
    """The command line's :class:`~rpa_sim.evaluate.settings.EvaluationSettings`: ``--task``, ``--value-match``,
    ``--alpha``; the routing grounding located unless ``locate=False``; a null confidence read for ``policies``
    that all say what to do with it, or for a command that routes nothing (``routes=False``: ``score``)."""
    from rpa_sim.evaluate.settings import EvaluationSettings, reads_missing_confidence  # noqa: PLC0415

    return EvaluationSettings(task=args.task, grounding="auto" if locate else "given",
                              missing_confidence=not routes or reads_missing_confidence(policies),
                              **evaluation_options(args))


def evaluate_data(args: argparse.Namespace, *, locate: bool = True, policies: Sequence[Policy] = (),
                  routes: bool = True) -> OutcomeTable:
    """Read and evaluate DATA (or read the outcome table DATA), reporting skipped records on standard error.

    ``locate=False`` skips locating values in the OCR for the routing grounding: for a command whose output
    does not depend on it. ``policies`` are those the table is for (a null confidence is read only when every
    one says what to do with it); ``routes=False`` reads a null confidence as unknown for a command that routes
    nothing (``score``). ``args.skipped`` is set to the records skipped, with those skipped when DATA's tables
    were made."""
    return _loaded(args, evaluation_settings(args, locate=locate, policies=policies, routes=routes)).table


def evaluate_each_shard(args: argparse.Namespace) -> Loaded:
    """As :func:`evaluate_data`, shard by shard even when DATA is one file: each shard's result is in
    :attr:`~rpa_sim.evaluate.load.Loaded.parts` (``evaluate DATA --out TABLES/`` writes a table of each)."""
    return _loaded(args, evaluation_settings(args), by_shard=True)


def _loaded(args: argparse.Namespace, settings: EvaluationSettings, *, by_shard: bool = False) -> Loaded:
    """:func:`rpa_sim.evaluate.load.load_data` with the command line's options; what goes with records alone is a
    usage error here, worded with the options' names."""
    from rpa_sim.evaluate.load import load_data  # noqa: PLC0415
    from rpa_sim.evaluate.sources import RecordsOnlyOption  # noqa: PLC0415

    def check_task(task: str, how: str | None) -> None:
        check_task_options(args, task, how or "--task")

    try:
        loaded = load_data(args.data, settings, predictions=args.predictions, skip_invalid=args.skip_invalid,
                           workers=args.workers, scheduler=args.scheduler, by_shard=by_shard, check_task=check_task)
    except RecordsOnlyOption as refused:
        raise UsageError(refused.usage) from None
    report_skipped(loaded.skipped, loaded.skipped_summary)
    args.skipped = loaded.skipped_count
    return loaded


def report_skipped(skipped: list[InputError], summary: str) -> None:
    if skipped:
        say(f"rpa-sim: {summary}")
        for error in skipped[:20]:
            say(f"  {error}")
        if len(skipped) > 20:
            say(f"  ... and {len(skipped) - 20} more")

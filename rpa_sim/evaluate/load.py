"""DATA to outcome table: the one path from a user's records to stage 1's result.

Every command that takes DATA, and every scenario with ``data: file:``, reads
and evaluates it here, so that the same options mean the same thing everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.cluster import current_scheduler
from rpa_sim.evaluate.metrics.kieval import ValueMatch
from rpa_sim.evaluate.outcomes import GroundingMode, OutcomeTable
from rpa_sim.evaluate.sources import is_one_file, load_shards, resolve_shards
from rpa_sim.evaluate.tablefile import is_table_file, read_table

if TYPE_CHECKING:
    from rpa_sim.records.models import KIERecord, VQARecord
    from rpa_sim.records.readers import RecordStream

__all__ = ["Loaded", "load_table", "evaluate_stream", "evaluate_records"]


@dataclass(frozen=True)
class Loaded:
    """An evaluated data set and the records skipped on the way (with ``skip_invalid``)."""

    table: OutcomeTable
    skipped: list[InputError]
    skipped_summary: str


def evaluate_records(records: Iterable[KIERecord] | Iterable[VQARecord], *, task: Literal["kie", "vqa"],
                     value_match: ValueMatch = "exact", alpha: float = 0.25,
                     workers: int | None = None) -> OutcomeTable:
    """Evaluate records of ``task`` into its outcome table (``value_match`` is KIE's, ``alpha`` VQA's).

    ``workers`` processes evaluate batches of records (:mod:`rpa_sim.evaluate.local`):
    ``None`` uses every available core, 1 none but this one; the table is the
    same for any number.
    """
    # reading and evaluating records (pydantic, worker pools) is imported only when records are read, not tables
    from rpa_sim.evaluate import local as parallel  # noqa: PLC0415

    evaluation = parallel.evaluation(task, value_match=value_match, alpha=alpha)
    return parallel.evaluate_records(records, evaluation, workers=parallel.resolve_workers(workers))


def load_table(path: str | os.PathLike[str], *, predictions: str | os.PathLike[str] | None = None,
               task: Literal["kie", "vqa"] | None = None, skip_invalid: bool = False,
               value_match: ValueMatch = "exact", alpha: float = 0.25, workers: int | None = None,
               scheduler: str | None = None, missing_confidence: bool = False) -> Loaded:
    """Read DATA (and its predictions file) and evaluate it, or read the outcome table DATA.

    Parameters
    ----------
    path : path-like
        A records file (``.jsonl``, ``.jsonl.gz``), or an outcome table
        written by :func:`rpa_sim.evaluate.tablefile.write_table` (recognised by
        :func:`~rpa_sim.evaluate.tablefile.is_table_file`); or a folder or a glob of
        such shards (:func:`rpa_sim.evaluate.sources.resolve_shards`), which give
        what their records in one file give.
    predictions : path-like, optional
        Predictions joined to ``path`` on ``id``; records only.
    task : {"kie", "vqa"}, optional
        Inferred from the records (or the table) when omitted.
    skip_invalid : bool, default=False
        Skip records that do not fit the format (reported in the result)
        instead of stopping; records only.
    value_match, alpha
        As in :func:`evaluate_records`. A table evaluated with other
        settings (of its task) is refused, so that a table gives exactly
        what its records give.
    workers : int, optional
        As in :func:`evaluate_stream`; a table is read, never evaluated.
    scheduler : str, optional
        A Dask scheduler whose workers evaluate the shards
        (:mod:`rpa_sim.evaluate.cluster`); by default the one the command set
        (:func:`~rpa_sim.evaluate.cluster.using_scheduler`), else none.
    missing_confidence : bool, default=False
        Read a null confidence as unknown (NaN), for policies that all set
        ``missing_confidence`` (:func:`rpa_sim.records.readers.read_records`); records only, every shard of them.

    Raises
    ------
    InputError
        For bad records; for a table: a predictions file or ``skip_invalid``
        with it, another task or other settings, or a file that is not a
        valid table of this rpa-sim version.
    """
    shards = resolve_shards(path)
    scheduler = current_scheduler() if scheduler is None else scheduler
    if scheduler is not None or not is_one_file(path, shards):
        merged = load_shards(shards, data=path, predictions=predictions, task=task, skip_invalid=skip_invalid,
                             value_match=value_match, alpha=alpha, workers=workers, scheduler=scheduler,
                             missing_confidence=missing_confidence)
        return Loaded(merged.table, merged.skipped, merged.skipped_summary)
    if is_table_file(path):
        if predictions is not None:
            raise InputError("is an outcome table, which holds its predictions; a predictions file goes with records "
                             f"only, got {str(predictions)!r}", path=str(path))
        if skip_invalid:
            raise InputError("is an outcome table: skipping invalid records applies to records, when they are "
                             "evaluated", path=str(path))
        table = read_table(path, expect={"task": task, "value_match": value_match, "alpha": alpha})
        return Loaded(table, [], "skipped 0 records")
    from rpa_sim.records.readers import read_records  # noqa: PLC0415

    stream = read_records(path, predictions=predictions, task=task, skip_invalid=skip_invalid,
                          missing_confidence=missing_confidence)
    return evaluate_stream(stream, value_match=value_match, alpha=alpha, workers=workers)


def evaluate_stream(stream: RecordStream, *, value_match: ValueMatch = "exact", alpha: float = 0.25,
                    workers: int | None = None, grounding: GroundingMode = "auto") -> Loaded:
    """Evaluate an opened record stream (the second half of :func:`load_table`).

    For callers that look at the stream first (its :attr:`~RecordStream.task`,
    known once the records are opened) before the long part. Lines read and
    records evaluated are counted (:func:`rpa_sim.common.progress.stage`).

    Parameters
    ----------
    stream : RecordStream
        What :func:`rpa_sim.records.readers.read_records` opened.
    value_match, alpha
        As in :func:`evaluate_records`.
    workers : int, optional
        Processes that validate and evaluate batches of records
        (:mod:`rpa_sim.evaluate.local`); every available core by default, 1 for
        none but this one. The table, the skipped records and the first error
        are the same for any number.
    grounding : {"auto", "given", "compute"}, default="auto"
        The routing grounding's source (:func:`~rpa_sim.evaluate.outcomes.evaluate_kie`):
        ``"given"`` locates nothing, for a caller that reads no grounding
        (``score``: its figures do not depend on it).
    """
    from rpa_sim.evaluate import local as parallel  # noqa: PLC0415

    evaluation = parallel.evaluation(stream.task, value_match=value_match, alpha=alpha, grounding=grounding)
    table = parallel.evaluate_stream(stream, evaluation, workers=parallel.resolve_workers(workers))
    return Loaded(table, list(stream.skipped), stream.skipped_summary())

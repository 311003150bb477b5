"""DATA to outcome table: the one path from a user's records to stage 1's result.

Every command that takes DATA, and every scenario with ``data: file:``, reads
and evaluates it here, so that the same options mean the same thing everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rpa_sim.errors import InputError
from rpa_sim.metrics.kieval import ValueMatch
from rpa_sim.outcomes import KIEOutcomes, VQAOutcomes, evaluate_kie, evaluate_vqa
from rpa_sim.progress import track
from rpa_sim.readers import RecordStream, read_records
from rpa_sim.records import KIERecord, VQARecord

__all__ = ["Loaded", "load_table", "evaluate_stream", "evaluate_records"]


@dataclass(frozen=True)
class Loaded:
    """An evaluated data set and the records skipped on the way (with ``skip_invalid``)."""

    table: KIEOutcomes | VQAOutcomes
    skipped: list[InputError]
    skipped_summary: str


def evaluate_records(records: Iterable[KIERecord] | Iterable[VQARecord], *, task: Literal["kie", "vqa"],
                     value_match: ValueMatch = "exact", alpha: float = 0.25) -> KIEOutcomes | VQAOutcomes:
    """Evaluate records of ``task`` into its outcome table (``value_match`` is KIE's, ``alpha`` VQA's)."""
    if task == "kie":
        return evaluate_kie(records, value_match=value_match)
    return evaluate_vqa(records, alpha=alpha)


def load_table(path: str | os.PathLike[str], *, predictions: str | os.PathLike[str] | None = None,
               task: Literal["kie", "vqa"] | None = None, skip_invalid: bool = False,
               value_match: ValueMatch = "exact", alpha: float = 0.25) -> Loaded:
    """Read DATA (and its predictions file) and evaluate it.

    Parameters
    ----------
    path : path-like
        A records file (``.jsonl``, ``.jsonl.gz``).
    predictions : path-like, optional
        Predictions joined to ``path`` on ``id``.
    task : {"kie", "vqa"}, optional
        Inferred from the records when omitted.
    skip_invalid : bool, default=False
        Skip records that do not fit the format (reported in the result) instead of stopping.
    value_match, alpha
        As in :func:`evaluate_records`.
    """
    stream = read_records(path, predictions=predictions, task=task, skip_invalid=skip_invalid)
    return evaluate_stream(stream, value_match=value_match, alpha=alpha)


def evaluate_stream(stream: RecordStream, *, value_match: ValueMatch = "exact", alpha: float = 0.25) -> Loaded:
    """Evaluate an opened record stream (the second half of :func:`load_table`).

    For callers that look at the stream first (its :attr:`~RecordStream.task`,
    known once the records are opened) before the long part. The records are
    counted as they are read in a :func:`rpa_sim.progress.stage`.

    Parameters
    ----------
    stream : RecordStream
        What :func:`rpa_sim.readers.read_records` opened.
    value_match, alpha
        As in :func:`evaluate_records`.
    """
    records = track(stream, f"reading {stream.path.name}")
    table = evaluate_records(records, task=stream.task, value_match=value_match, alpha=alpha)
    return Loaded(table, list(stream.skipped), stream.skipped_summary())

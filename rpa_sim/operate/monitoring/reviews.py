"""The review log of records a person reviewed on a labelling platform (Label Studio): one row per predicted value.

A review there is what rpa-sim's monitoring calls a review: a person looked at
every predicted value of the document and left it or changed it, and what
they left is the record's ground truth. Each predicted entity of a record with
both sides becomes a row of the production log (``docs/monitoring.md``) with
route ``review``, ``correct`` as KIEval labels it against the ground truth
(exact values, the error definition of ``docs/errors.md``: exactly what the
reviewer left unchanged) and, where not, the reviewer's value as
``corrected_value`` (``""``: removed); ``day`` is the day of the review, for
``rpa-sim watch``.

The importer reads the records (:mod:`rpa_sim.records.importers.label_studio`);
grading them evaluates them, a later stage, so the command line composes the
two (:func:`logged_reviews`).

Examples
--------
>>> from rpa_sim.records.models import KIERecord
>>> record = KIERecord.model_validate({"id": "r-7", "ground_truth": {"entities": [{"key": "total", "value": "9.80"}]},
...     "prediction": {"entities": [{"key": "total", "value": "9.50", "confidence": 0.93},
...                                 {"key": "tip", "value": "1.00", "confidence": 0.4}]}})
>>> log = ReviewLog()
>>> log.add(record, day="2024-03-05")
>>> [(key, bool(correct), corrected) for key, correct, corrected in zip(log.key, log.correct, log.corrected_value)]
[('total', False, '9.80'), ('tip', False, '')]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from rpa_sim.common.files import check_output
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.models import KIERecord

__all__ = ["ReviewLog", "logged_reviews"]


class ReviewLog:
    """The rows of the reviewed records, gathered as they are read, written once they all are.

    Attributes
    ----------
    id, key, value, confidence, correct, corrected_value, day : list
        The columns of the rows, one item a predicted entity.
    records : int
        The records with both sides, whose entities are rows.
    undated : int
        Those of them without a day.
    """

    def __init__(self) -> None:
        self.id: list[str] = []
        self.key: list[str] = []
        self.value: list[str] = []
        self.confidence: list[float | None] = []
        self.correct: list[bool] = []
        self.corrected_value: list[str | None] = []
        self.day: list[str | None] = []
        self.records = self.undated = 0

    def add(self, record: KIERecord, *, day: str | None = None) -> None:
        """The rows of ``record``, if it has both a prediction and a ground truth: one per predicted entity."""
        from rpa_sim.evaluate.metrics.kieval import CORRECT, evaluate_document  # noqa: PLC0415

        if record.ground_truth is None or record.prediction is None:
            return
        outcome = evaluate_document(record.ground_truth, record.prediction)
        for entity, label, correction in zip(record.prediction.entities, outcome.labels.tolist(),
                                             outcome.corrections, strict=True):
            correct = label == CORRECT
            self.id.append(record.id)
            self.key.append(entity.key)
            self.value.append(entity.value)
            self.confidence.append(entity.confidence)
            self.correct.append(correct)
            self.corrected_value.append(None if correct else correction or "")
            self.day.append(day)
        self.records += 1
        self.undated += day is None

    def write(self, path: str | os.PathLike[str]) -> int:
        """Write the rows as a production log (JSON Lines, gzip when the name ends in ``.gz``), atomically; the
        rows written."""
        import numpy as np  # noqa: PLC0415

        from rpa_sim.operate.monitoring.log import REVIEW, ProductionLog, object_column, write_log  # noqa: PLC0415

        rows = len(self.id)
        log = ProductionLog(
            route=np.full(rows, REVIEW, dtype=np.int8), inclusion_probability=np.ones(rows),
            correct=np.array(self.correct, dtype=np.int8),
            confidence=np.array([np.nan if c is None else c for c in self.confidence], dtype=np.float64),
            id=object_column(self.id), key=object_column(self.key), value=object_column(self.value),
            corrected_value=object_column(self.corrected_value),
            day=object_column(self.day) if any(day is not None for day in self.day) else None)
        return write_log(log, path)


def logged_reviews(reviewed: Iterable[tuple[KIERecord, str | None]], path: str | os.PathLike[str], *,
                   report: ImportReport) -> Iterator[KIERecord]:
    """The records of ``reviewed`` (each with the day of its review), and their review log written to ``path``
    once the last is read, before the records are (``--review-log`` of ``rpa-sim import label-studio``).

    ``path`` is checked at the call (not a folder, not an input); the log's notes go to ``report``.
    """
    return _logged(reviewed, check_output(Path(path)), report)


def _logged(reviewed: Iterable[tuple[KIERecord, str | None]], path: Path, report: ImportReport) -> Iterator[KIERecord]:
    log = ReviewLog()
    for record, day in reviewed:
        log.add(record, day=day)
        yield record
    written = log.write(path)
    report.notes.append(f"review log {path}: {written:,} rows (one per predicted entity of the {log.records:,} "
                        f"records with a prediction and a ground truth), all route review; "
                        f"{log.correct.count(False):,} found wrong by the reviewers")
    if log.undated:
        report.notes.append(f"review log: {log.undated:,} records whose review has no readable date and time: "
                            f"their rows have no day (rpa-sim watch needs one)")

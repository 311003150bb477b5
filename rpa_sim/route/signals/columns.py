"""An outcome table's signals as columns: the confidence, the named signals, and the fused one.

What routing reads (a policy's ``signals`` tests, :mod:`rpa_sim.route.sweep`) and what the measures start
from (:mod:`rpa_sim.route.signals.table`); it imports neither certification nor the measures.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.route.signals.fusion import cross_fitted

__all__ = ["CONFIDENCE", "FUSED", "signal_columns", "table_signals", "fused_signal", "routing_signals"]

#: The name the confidence takes among the signals.
CONFIDENCE = "confidence"
#: The name of the fused signal (a record's signal may not take it).
FUSED = "fused"


def signal_columns(signals: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    """The signals as float columns of one length, each checked to hold numbers in ``[0, 1]`` or NaN.

    >>> signal_columns({"a": [0.5, 1.5]})
    Traceback (most recent call last):
    ...
    ValueError: signal 'a' must be in [0, 1] (or missing) at value 1, got 1.5
    """
    columns: dict[str, np.ndarray] = {}
    for name, values in signals.items():
        column = np.asarray(values, dtype=np.float64)
        bad = ~(np.isnan(column) | ((column >= 0) & (column <= 1)))
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise ValueError(f"signal {name!r} must be in [0, 1] (or missing) at value {at}, got {float(column[at])!r}")
        columns[name] = column
    lengths = {len(column) for column in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"signals must have one value per row, got lengths {sorted(lengths)}")
    return columns


def table_signals(table: OutcomeTable) -> dict[str, np.ndarray]:
    """The table's signals by name: ``confidence`` first (unless no row has one), then its named signals.

    >>> from rpa_sim.evaluate.outcomes import evaluate_vqa
    >>> from rpa_sim.records.models import VQARecord
    >>> records = [VQARecord.model_validate({"id": "q", "answers": ["a"], "prediction": {
    ...     "answer": "a", "confidence": 0.9, "signals": {"agreement": 0.6}}})]
    >>> {name: column.tolist() for name, column in table_signals(evaluate_vqa(records)).items()}
    {'confidence': [0.9], 'agreement': [0.6]}
    """
    found: dict[str, np.ndarray] = {}
    if len(table) and not np.isnan(table.confidence).all():
        found[CONFIDENCE] = table.confidence
    found.update(table.signals)
    return found


# a table's fused signal, fitted once however many policies route on it (a table is hashed by identity)
_FUSED: weakref.WeakKeyDictionary[OutcomeTable, np.ndarray] = weakref.WeakKeyDictionary()


def fused_signal(table: OutcomeTable) -> np.ndarray:
    """The table's fused signal, as routing sees it: every signal of :func:`table_signals` fused, each document
    scored by a model fitted on the other folds of documents (seed 0); NaN when there is nothing to fuse."""
    if table not in _FUSED:
        signals = table_signals(table)
        _FUSED[table] = (cross_fitted(signal_columns(signals), table.errors(), groups=table.review_units)
                         if signals else np.full(len(table), np.nan))
    return _FUSED[table]


def routing_signals(table: OutcomeTable, names: Sequence[str]) -> dict[str, np.ndarray]:
    """The columns a policy's ``signals`` tests read: the table's named signals, and ``fused`` when named.

    >>> from rpa_sim.evaluate.outcomes import evaluate_vqa
    >>> from rpa_sim.records.models import VQARecord
    >>> table = evaluate_vqa([VQARecord.model_validate({"id": "q", "answers": ["a"], "prediction": {
    ...     "answer": "a", "confidence": 0.9, "signals": {"agreement": 0.6}}})])
    >>> {name: column.tolist() for name, column in routing_signals(table, ["agreement"]).items()}
    {'agreement': [0.6]}
    """
    found = dict(table.signals)
    if FUSED in names:
        found[FUSED] = fused_signal(table)
    return found

"""The signals' figures as a study keeps them: what ``summary.json``'s ``signals`` holds (``docs/summary.md``), and
what the report's "Signals" section and the dashboard's Signals view draw.

:func:`signals_result` measures every signal of an outcome table (the confidence and the named ones) and their
fused signal (:mod:`rpa_sim.route.signals.analysis`) and keeps, per signal, its figures, its verdicts in words,
its ROC curve (at most :data:`ROC_POINTS` points, spread along the curve) and its reliability table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.common.typedjson import FrozenMap, left_out, present_when

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes import OutcomeTable
    from rpa_sim.route.signals.analysis import Certification, SignalSummary

__all__ = ["ROC_POINTS", "SignalReliability", "SignalFigures", "SignalsResult", "signals_result"]

#: The most points of a signal's ROC curve a summary keeps (a figure needs no more).
ROC_POINTS = 101


@dataclass(frozen=True)
class SignalReliability:
    """A signal's reliability table: per non-empty bin of the 15 equal-width bins, its bounds, its values, their
    mean signal and their share right."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    count: tuple[int, ...]
    mean_signal: tuple[float, ...]
    share_right: tuple[float, ...]


@dataclass(frozen=True)
class SignalFigures:
    """One signal measured (``docs/signals.md``): ranking, calibration, verdicts and, with certification, the
    automation its certified threshold gives.

    ``roc_errors`` and ``roc_correct`` are its ROC curve, the shares of errors and of correct values
    auto-accepted from the strictest threshold to the laxest; ``cost`` what it costs per value (left out when
    the scenario's costs do not price it); ``threshold`` is present (null when nothing is certified) exactly
    when ``certified_automation`` is.
    """

    name: str
    values: int
    carried: int
    auroc: float | None
    auroc_low: float | None
    auroc_high: float | None
    ece: float | None
    brier: float | None
    verdicts: tuple[str, ...]
    words: str
    roc_errors: tuple[float, ...]
    roc_correct: tuple[float, ...]
    reliability: SignalReliability
    certified_automation: float | None = left_out()
    threshold: float | None = present_when("certified_automation")
    cost: float | None = left_out()


@dataclass(frozen=True)
class SignalsResult:
    """Every signal of the data measured, then the fused one; the fusion's weights (left out with one signal);
    the certification's ``max_error`` and ``delta`` (left out without one)."""

    values: int
    errors: int
    signals: tuple[SignalFigures, ...]
    fusion: FrozenMap[float] | None = left_out()
    max_error: float | None = left_out()
    delta: float | None = present_when("max_error")

    def __getitem__(self, name: str) -> SignalFigures:
        for signal in self.signals:
            if signal.name == name:
                return signal
        raise KeyError(name)


def signals_result(table: OutcomeTable, *, certification: Certification | None = None,
                   costs: Mapping[str, float] | None = None) -> SignalsResult | None:
    """The table's signals measured for a study; None when its values carry no named signal (the confidence
    alone is the calibration's to show).

    Examples
    --------
    >>> from rpa_sim.evaluate.outcomes import evaluate_vqa
    >>> from rpa_sim.records.models import VQARecord
    >>> table = evaluate_vqa([VQARecord.model_validate({"id": f"q{i}", "answers": ["a"], "prediction": {
    ...     "answer": "a" if i % 3 else "b", "confidence": 0.5, "signals": {"agreement": (i % 3) / 2}}})
    ...     for i in range(30)])
    >>> result = signals_result(table)
    >>> [(signal.name, signal.auroc) for signal in result.signals]
    [('confidence', 0.5), ('agreement', 1.0), ('fused', 1.0)]
    """
    # the measures (and the fusion's scipy.optimize) load only when a study has signals; a summary read needs none
    from rpa_sim.route.signals.analysis import analyse_signals  # noqa: PLC0415
    from rpa_sim.route.signals.columns import signal_columns, table_signals  # noqa: PLC0415

    if not table.signals:
        return None
    columns = signal_columns(table_signals(table))
    error = table.errors()
    analysis = analyse_signals(columns, error, certification=certification, groups=table.review_units,
                               costs=costs)
    fusion = analysis.fusion
    return SignalsResult(
        values=len(table), errors=int(np.count_nonzero(error)),
        signals=tuple(_figures(summary) for summary in analysis.summaries),
        fusion=None if fusion is None else FrozenMap(dict(zip(fusion.names, map(float, fusion.weights)))),
        max_error=None if certification is None else certification.max_error,
        delta=None if certification is None else certification.delta)


def _figures(summary: SignalSummary) -> SignalFigures:
    found = summary.discrimination
    table = summary.reliability
    filled = np.zeros(0, dtype=bool) if table is None else table.count > 0
    reliability = SignalReliability(*(() for _ in range(5))) if table is None else SignalReliability(
        lower=tuple(table.lower[filled].tolist()), upper=tuple(table.upper[filled].tolist()),
        count=tuple(int(c) for c in table.count[filled]), mean_signal=tuple(table.mean_confidence[filled].tolist()),
        share_right=tuple(table.accuracy[filled].tolist()))
    errors_accepted, correct_accepted = _spread(*summary.roc)
    certified = summary.certified
    return SignalFigures(
        name=summary.name, values=summary.values, carried=summary.carried, auroc=_finite(found.auroc),
        auroc_low=_finite(found.low), auroc_high=_finite(found.high), ece=_finite(summary.ece),
        brier=_finite(summary.brier), verdicts=summary.verdicts, words=summary.words,
        roc_errors=errors_accepted, roc_correct=correct_accepted, reliability=reliability,
        certified_automation=summary.automation, threshold=None if certified is None else certified.threshold,
        cost=summary.cost)


def _spread(x: np.ndarray, y: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """At most :data:`ROC_POINTS` points of a ROC curve, spread evenly along it (by ``(x + y) / 2``, which rises
    from 0 to 1), the first and the last kept; none for an undefined curve.

    >>> _spread(np.array([0.0, 0.5, 1.0]), np.array([0.0, 1.0, 1.0]))
    ((0.0, 0.5, 1.0), (0.0, 1.0, 1.0))
    """
    if len(x) < 2 or np.isnan(x).any():
        return (), ()
    along = (x + y) / 2
    chosen = np.unique(np.concatenate(([0], np.searchsorted(along, np.linspace(0, 1, ROC_POINTS)), [len(x) - 1])))
    chosen = chosen[chosen < len(x)]
    return tuple(x[chosen].tolist()), tuple(y[chosen].tolist())


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)

"""Calibration of confidences: reliability tables, ECE, AURC and AUROC (METRICS.md §7).

Every function takes one confidence per prediction unit (in ``[0, 1]``) and
whether that unit is right (``is_correct`` derives it from an outcome table:
a row is right iff it is not an error, ``docs/errors.md``: a KIE entity iff its
outcome is ``correct``, a question iff its ANLS is at least 0.5). The decisions
taken where the spec is silent, in particular the equal-mass binning and the
handling of ties, are listed in ``docs/calibration.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import rankdata

from rpa_sim.evaluate.metrics.checks import binary_labels, confidences, positive_int
from rpa_sim.evaluate.outcomes import OutcomeTable, evaluate_kie, evaluate_vqa
from rpa_sim.records.models import KIERecord, VQARecord

__all__ = ["ReliabilityTable", "reliability_table", "ece", "aurc", "auroc", "is_correct", "calibration_per_group",
           "generated_ece", "Scheme", "Proxy"]

Scheme = Literal["equal_width", "equal_mass"]
Proxy = Literal["mean", "upper_edge", "center"]
SCHEMES: tuple[str, ...] = ("equal_width", "equal_mass")
PROXIES: tuple[str, ...] = ("mean", "upper_edge", "center")


def _readonly(values: np.ndarray) -> np.ndarray:
    values.setflags(write=False)
    return values


@dataclass(frozen=True, eq=False)
class ReliabilityTable:
    """Predictions binned by confidence: one row per bin, as read-only arrays.

    Attributes
    ----------
    lower, upper : ndarray of float
        The bin's edges. Equal-width bins are ``[lower, upper)``, the last one
        closed; equal-mass bins are ``(lower, upper]``, the first one closed
        (see :func:`reliability_table`).
    count : ndarray of int
        Predictions in the bin.
    mean_confidence, accuracy : ndarray of float
        Mean confidence and share of right predictions in the bin; NaN for an
        empty bin.
    scheme : {"equal_width", "equal_mass"}
        The binning that was used (an equal-mass request whose confidences are
        all equal falls back to equal width).
    """

    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray
    scheme: Scheme = "equal_width"

    def __len__(self) -> int:
        return len(self.count)

    @property
    def n(self) -> int:
        """The number of predictions binned."""
        return int(self.count.sum())

    @property
    def ece(self) -> float:
        """Expected calibration error: ``sum(count / n * |accuracy - mean_confidence|)`` over non-empty bins."""
        return self.calibration_error(proxy="mean")

    def calibration_error(self, *, proxy: Proxy = "mean") -> float:
        """``sum(count / n * |accuracy - c|)`` over the non-empty bins, ``c`` given by ``proxy``.

        Parameters
        ----------
        proxy : {"mean", "upper_edge", "center"}, default="mean"
            What stands for the bin's confidence: its mean confidence (the usual
            ECE), its upper edge (what the DUDE evaluator's ECE uses) or the
            middle of its edges.

        Examples
        --------
        >>> table = reliability_table([0.625, 0.875], [True, True], n_bins=2)
        >>> table.calibration_error(), table.calibration_error(proxy="upper_edge")
        (0.25, 0.0)
        """
        if proxy not in PROXIES:
            raise ValueError(f"proxy must be one of {PROXIES}, got {proxy!r}")
        filled = self.count > 0
        if proxy == "mean":
            stand_in = self.mean_confidence[filled]
        elif proxy == "upper_edge":
            stand_in = self.upper[filled]
        else:
            stand_in = (self.lower[filled] + self.upper[filled]) / 2
        gaps = np.abs(self.accuracy[filled] - stand_in)
        return float(np.sum(self.count[filled] * gaps) / self.n)


def reliability_table(confidence: ArrayLike, correct: ArrayLike, *, n_bins: int = 15,
                      scheme: Scheme = "equal_width") -> ReliabilityTable:
    """Bin predictions by confidence and compare each bin's mean confidence with its accuracy.

    Parameters
    ----------
    confidence : array-like of float, shape (n,)
        One confidence in ``[0, 1]`` per prediction (at least one).
    correct : array-like of bool or 0/1, shape (n,)
        Whether each prediction is right.
    n_bins : int, default=15
        The number of bins (equal width), or of equal-size groups (equal mass).
    scheme : {"equal_width", "equal_mass"}, default="equal_width"
        ``"equal_width"``: bin ``i`` is ``[i/n_bins, (i+1)/n_bins)``, the last
        bin closed at 1. A confidence is put in the bin whose reported edges
        contain it (``lower <= c < upper``), so rounding in ``c * n_bins`` never
        moves it. ``"equal_mass"`` (the DUDE evaluator's scheme): the sorted
        confidences are cut into ``min(n_bins, n)`` consecutive groups whose
        sizes differ by at most one, the larger groups first (as
        :func:`numpy.array_split` cuts); each group's largest confidence is the
        upper edge of a bin, the last bin's upper edge is 1 and the first bin's
        lower edge 0. Bins are ``(lower, upper]`` (the first one ``[0, upper]``),
        so a confidence equal to an edge stays in the bin that edge closes, and
        all copies of one confidence always share a bin: a run of ties that
        straddles a cut goes entirely to the lower bin. Edges that coincide
        (ties spanning a whole group) are merged, so the table can have fewer
        than ``n_bins`` rows but never an empty bin of zero width. When all
        confidences are equal, equal mass falls back to equal width, as DUDE does.

    Returns
    -------
    ReliabilityTable
        Empty bins (equal width) have ``count`` 0 and NaN means.

    Examples
    --------
    >>> table = reliability_table([0.125, 0.375, 0.75, 1.0], [0, 1, 1, 1], n_bins=2)
    >>> table.count.tolist(), table.mean_confidence.tolist(), table.accuracy.tolist()
    ([2, 2], [0.25, 0.875], [0.5, 1.0])
    >>> table.ece  # (2/4) * |0.5 - 0.25| + (2/4) * |1.0 - 0.875|
    0.1875
    >>> mass = reliability_table([0.2, 0.4, 0.4, 0.9], [1, 0, 1, 1], n_bins=2, scheme="equal_mass")
    >>> mass.lower.tolist(), mass.upper.tolist(), mass.count.tolist()
    ([0.0, 0.4], [0.4, 1.0], [3, 1])
    """
    conf = confidences(confidence, "confidence")
    right = binary_labels(correct, "correct", len(conf))
    if len(conf) == 0:
        raise ValueError("confidence is empty: a reliability table needs at least one prediction")
    bins = positive_int(n_bins, "n_bins")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if scheme == "equal_mass" and conf.min() == conf.max():
        scheme = "equal_width"
    if scheme == "equal_width":
        edges = np.arange(bins + 1, dtype=np.float64) / bins
        lower, upper = edges[:-1], edges[1:]
        index = np.minimum(np.searchsorted(edges, conf, side="right") - 1, bins - 1)
    else:
        upper = _equal_mass_upper_edges(np.sort(conf), bins)
        lower = np.concatenate(([0.0], upper[:-1]))
        index = np.searchsorted(upper, conf, side="left")
    count = np.bincount(index, minlength=len(upper))
    filled = count > 0
    mean_confidence = np.full(len(upper), np.nan)
    accuracy = np.full(len(upper), np.nan)
    mean_confidence[filled] = np.bincount(index, weights=conf, minlength=len(upper))[filled] / count[filled]
    accuracy[filled] = np.bincount(index, weights=right, minlength=len(upper))[filled] / count[filled]
    return ReliabilityTable(lower=_readonly(lower.copy()), upper=_readonly(upper.copy()), count=_readonly(count),
                            mean_confidence=_readonly(mean_confidence), accuracy=_readonly(accuracy), scheme=scheme)


def _equal_mass_upper_edges(ordered: np.ndarray, n_bins: int) -> np.ndarray:
    groups = min(n_bins, len(ordered))
    size, extra = divmod(len(ordered), groups)
    sizes = np.full(groups, size)
    sizes[:extra] += 1
    maxima = ordered[np.cumsum(sizes)[:-1] - 1]
    return np.unique(np.concatenate((maxima, [1.0])))


def ece(confidence: ArrayLike, correct: ArrayLike, *, n_bins: int = 15, scheme: Scheme = "equal_width",
        proxy: Proxy = "mean") -> float:
    """Expected calibration error: bin-weighted mean gap between accuracy and confidence.

    ``sum(count_b / n * |accuracy_b - c_b|)`` over the non-empty bins of
    :func:`reliability_table`, ``c_b`` being the bin's mean confidence (or, with
    ``proxy``, its upper edge or centre). In ``[0, 1]``; 0 is perfect.

    Parameters
    ----------
    confidence, correct, n_bins, scheme
        As for :func:`reliability_table`.
    proxy : {"mean", "upper_edge", "center"}, default="mean"
        ``"upper_edge"`` reproduces the estimator the DUDE evaluator asks for
        (``proxy="upper-edge"``); it is not 0 for a perfectly calibrated model.

    Examples
    --------
    >>> ece([0.125, 0.375, 0.75, 1.0], [0, 1, 1, 1], n_bins=2)
    0.1875
    >>> ece([0.5, 0.5], [True, False])
    0.0
    """
    table = reliability_table(confidence, correct, n_bins=n_bins, scheme=scheme)
    return table.calibration_error(proxy=proxy)


def aurc(confidence: ArrayLike, correct: ArrayLike) -> float:
    """Area under the risk-coverage curve, exactly as the DUDE evaluator computes it. Lower is better.

    Predictions are dropped one at a time from the least confident; after each
    drop the risk is the error rate of those left. Between consecutive curve
    points the area is a trapezoid of width (drops between them) / n. A point
    is recorded at the first drop and at every drop whose confidence differs
    from the previous drop's; the other drops of a run of tied confidences only
    widen the next trapezoid; when the run reaches the last drop a final point
    repeats the last risk. The last prediction is never dropped, so the widths
    add up to ``(n - 1) / n`` and one prediction gives 0.

    Ties are met in input order (a stable sort). Like DUDE's, the value then
    depends on the order of predictions that share a confidence: the risk
    recorded at the first drop of a run depends on which of the tied
    predictions goes first (DUDE takes :func:`numpy.argsort`'s order, which is
    the input order for small arrays; see ``docs/calibration.md``).

    Parameters
    ----------
    confidence : array-like of float, shape (n,)
        One confidence in ``[0, 1]`` per prediction (at least one).
    correct : array-like of bool or 0/1, shape (n,)

    Examples
    --------
    >>> round(aurc([0.9, 0.1, 0.3, 1.0, 0.1], [1, 0, 0, 1, 0]), 12)
    0.21
    >>> aurc([0.2, 0.8], [False, True]), aurc([0.8, 0.2], [False, True])
    (0.125, 0.375)
    """
    conf = confidences(confidence, "confidence")
    right = binary_labels(correct, "correct", len(conf))
    n = len(conf)
    if n == 0:
        raise ValueError("confidence is empty: AURC needs at least one prediction")
    if n == 1:
        return 0.0
    order = np.argsort(conf, kind="stable")
    ordered = conf[order]
    residual = 1.0 - right[order]
    total = residual.sum()
    drops = np.arange(n - 1)
    risk_after = (total - np.cumsum(residual)[:-1]) / (n - 1 - drops)
    recorded = np.ones(n - 1, dtype=bool)
    recorded[1:] = ordered[1:n - 1] != ordered[:n - 2]
    where = np.flatnonzero(recorded)
    risks = np.concatenate(([total / n], risk_after[where]))
    widths = np.diff(where, prepend=-1) / n
    tail = (n - 2) - where[-1]
    if tail > 0:
        risks = np.append(risks, risks[-1])
        widths = np.append(widths, tail / n)
    return float(np.sum((risks[:-1] + risks[1:]) * 0.5 * widths))


def auroc(confidence: ArrayLike, correct: ArrayLike) -> float:
    """Area under the ROC curve of confidence as a detector of right predictions (DUDE's ``AUROC_f``).

    The probability that a right prediction has a higher confidence than a
    wrong one, ties counting one half (the trapezoidal ROC area over distinct
    thresholds, which is what scikit-learn's ``roc_curve`` and ``auc`` give).
    NaN when all predictions are right or all are wrong (undefined).

    Examples
    --------
    >>> auroc([0.9, 0.1, 0.3, 1.0, 0.1], [1, 1, 0, 1, 0])
    0.75
    >>> auroc([0.4, 0.6], [1, 1])
    nan
    """
    conf = confidences(confidence, "confidence")
    right = binary_labels(correct, "correct", len(conf)).astype(bool)
    positives, negatives = int(right.sum()), int((~right).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = rankdata(conf, method="average")
    return float((ranks[right].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def calibration_per_group(confidence: ArrayLike, correct: ArrayLike, codes: ArrayLike, names: tuple[str, ...], *,
                          n_bins: int = 15) -> list[dict[str, str | int | float]]:
    """ECE (both binnings) and the share right, for each group of predictions (a document type, a field).

    Confidences are often well calibrated on some documents (clean scans) and
    not on others (phone photos): the corpus ECE averages that away. Each
    group's figures are those of :func:`reliability_table` on the group's
    predictions alone (``n_bins`` bins); groups without predictions are left out.

    Returns
    -------
    list of dict
        One per group, in the order of ``names``: ``name``, ``predictions``,
        ``mean_confidence``, ``accuracy``, ``ece_equal_width``, ``ece_equal_mass``.

    Examples
    --------
    >>> rows = calibration_per_group([0.9, 0.9, 0.6, 0.6], [1, 1, 1, 0], [0, 0, 1, 1], ("scan", "photo"))
    >>> [(row["name"], row["accuracy"], round(row["ece_equal_width"], 2)) for row in rows]
    [('scan', 1.0, 0.1), ('photo', 0.5, 0.1)]
    """
    conf = confidences(confidence, "confidence")
    right = binary_labels(correct, "correct", len(conf)).astype(bool)
    group = np.asarray(codes)
    rows: list[dict[str, str | int | float]] = []
    for code, name in enumerate(names):
        mine = group == code
        if not mine.any():
            continue
        width = reliability_table(conf[mine], right[mine], n_bins=n_bins, scheme="equal_width")
        mass = reliability_table(conf[mine], right[mine], n_bins=n_bins, scheme="equal_mass")
        rows.append({"name": name, "predictions": int(mine.sum()), "mean_confidence": float(conf[mine].mean()),
                     "accuracy": float(right[mine].mean()), "ece_equal_width": width.ece, "ece_equal_mass": mass.ece})
    return rows


def is_correct(table: OutcomeTable) -> np.ndarray:
    """Whether each row of an outcome table is right (METRICS.md §7): not one of ``table.errors()``.

    A KIE entity is right iff its outcome is ``correct`` (0); a question iff its
    ANLS is at least 0.5, as DUDE's evaluator counts it (``docs/errors.md``).
    Returns a boolean array aligned with ``table.confidence``.

    Examples
    --------
    >>> from rpa_sim.evaluate.outcomes import evaluate_vqa
    >>> from rpa_sim.records.models import VQARecord
    >>> records = [VQARecord.model_validate({"id": f"q{i}", "answers": [answer],
    ...            "prediction": {"answer": "abcd", "confidence": 0.6}}) for i, answer in enumerate(["abxy", "wxyz"])]
    >>> is_correct(evaluate_vqa(records)).tolist()  # ANLS 0.5 and 0
    [True, False]
    """
    if not isinstance(table, OutcomeTable):
        raise TypeError(f"table must be an outcome table (KIEOutcomes or VQAOutcomes), got {type(table).__name__}")
    return ~table.errors()


def generated_ece(records: Iterable[KIERecord] | Iterable[VQARecord], *, n_bins: int = 15,
                  scheme: Scheme = "equal_width") -> float:
    """The expected calibration error of a set of records (KIE or VQA, not mixed).

    A KIE prediction is right iff its KIEval outcome is ``correct``, a
    question iff its ANLS is at least 0.5 (:func:`is_correct`). The generators' confidence model is
    calibrated by design (:mod:`rpa_sim.records.synthetic.confidence`): this measures it.

    Parameters
    ----------
    records : iterable of KIERecord, or of VQARecord
        E.g. from :func:`rpa_sim.records.synthetic.generate_receipts`.
    n_bins, scheme
        As for :func:`ece`.

    Returns
    -------
    float
        The ECE; NaN when there is no prediction.

    Examples
    --------
    >>> from rpa_sim.records.synthetic import ReceiptSettings, generate_receipts
    >>> calibrated = ReceiptSettings(confidence={"mode": "calibrated"})
    >>> generated_ece(generate_receipts(200, seed=1, settings=calibrated)) < 0.05
    True
    """
    remaining = iter(records)
    first = next(remaining, None)
    if first is None:
        return math.nan
    stream: Iterable[Any] = chain([first], remaining)  # of one task, as the first record's (evaluation checks)
    table = evaluate_kie(stream) if isinstance(first, KIERecord) else evaluate_vqa(stream)
    if len(table) == 0:
        return math.nan
    return ece(table.confidence, is_correct(table), n_bins=n_bins, scheme=scheme)

"""How well a signal tells errors from correct values: the AUROC with its DeLong interval, and the ROC curve.

A signal is read as "the higher, the likelier the value is right" (as a
confidence is). Its AUROC is the probability that a correct value scores
higher than an error, ties counting one half; 0.5 is chance, 1 a perfect
ranking. The variance is DeLong, DeLong and Clarke-Pearson's (1988),
computed with the fast algorithm of Sun and Xu (2014): three midrankings
instead of the ``m × n`` comparisons of the structural components.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri
from scipy.stats import rankdata

from rpa_sim.evaluate.metrics.checks import binary_labels, confidences

__all__ = ["Discrimination", "discrimination", "roc_points"]

#: The interval's coverage: a two-sided 95% normal interval.
LEVEL = 0.95


@dataclass(frozen=True)
class Discrimination:
    """The AUROC of a signal as a detector of correct values, with its DeLong variance and 95% interval.

    Attributes
    ----------
    auroc : float
        ``P(signal of a correct value > signal of an error)``, ties one half;
        NaN when every value is right or every value is wrong.
    variance : float
        DeLong's estimate of the AUROC's variance; NaN with fewer than two
        errors or fewer than two correct values (the structural components'
        sample variances need two of each).
    low, high : float
        The two-sided 95% interval ``auroc ± 1.96 sqrt(variance)``, cut to
        ``[0, 1]``; NaN when the variance is.
    correct, errors : int
        The correct values and the errors compared.
    """

    auroc: float
    variance: float
    low: float
    high: float
    correct: int
    errors: int

    @property
    def holds_chance(self) -> bool:
        """Whether chance (0.5) is not ruled out: the interval holds 0.5, or there is no interval."""
        return not (self.low > 0.5 or self.high < 0.5)


def discrimination(signal: ArrayLike, error: ArrayLike) -> Discrimination:
    """The AUROC of ``signal`` for telling errors from correct values, with its DeLong 95% interval.

    Parameters
    ----------
    signal : array-like of float, shape (n,)
        One score in ``[0, 1]`` per value, higher meaning likelier right.
    error : array-like of bool (or 0/1), shape (n,)
        Whether each value is an error (an outcome table's ``errors()``,
        ``docs/errors.md``).

    Returns
    -------
    Discrimination

    Notes
    -----
    Sun and Xu (2014), with the ``m`` correct values ``X`` and the ``n`` errors
    ``Y``: midranks ``T_X`` within ``X``, ``T_Y`` within ``Y`` and ``T_Z`` in
    both together. The structural components are ``V10_i = (T_Z(X_i) -
    T_X(X_i)) / n`` and ``V01_j = 1 - (T_Z(Y_j) - T_Y(Y_j)) / m``; the AUROC is
    their mean, and its variance ``S10 / m + S01 / n`` with ``S10``, ``S01``
    their sample variances.

    Examples
    --------
    >>> found = discrimination([0.9, 0.8, 0.7, 0.4, 0.8, 0.3], [0, 0, 0, 0, 1, 1])
    >>> found.auroc, found.correct, found.errors
    (0.6875, 4, 2)
    >>> round(found.variance, 6), round(found.low, 4), round(found.high, 4)
    (0.111979, 0.0316, 1.0)
    >>> found.holds_chance
    True
    """
    score = confidences(signal, "signal")
    wrong = binary_labels(error, "error", len(score)).astype(bool)
    right = score[~wrong]
    errors = score[wrong]
    m, n = len(right), len(errors)
    if m == 0 or n == 0:
        return Discrimination(auroc=math.nan, variance=math.nan, low=math.nan, high=math.nan, correct=m, errors=n)
    both = rankdata(np.concatenate((right, errors)), method="average")
    v10 = (both[:m] - rankdata(right, method="average")) / n
    v01 = 1.0 - (both[m:] - rankdata(errors, method="average")) / m
    auroc = float(v10.mean())
    if m < 2 or n < 2:
        return Discrimination(auroc=auroc, variance=math.nan, low=math.nan, high=math.nan, correct=m, errors=n)
    variance = float(v10.var(ddof=1) / m + v01.var(ddof=1) / n)
    half = float(ndtri(0.5 + LEVEL / 2)) * math.sqrt(variance)
    return Discrimination(auroc=auroc, variance=variance, low=max(0.0, auroc - half), high=min(1.0, auroc + half),
                          correct=m, errors=n)


def roc_points(signal: ArrayLike, error: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The ROC curve of routing on ``signal``: at each threshold, the shares of errors and of correct values
    auto-accepted (``signal >= threshold``), from the strictest threshold to the laxest, starting at ``(0, 0)``.

    The area under it (trapezoids) is :func:`discrimination`'s AUROC. NaN curves
    (a single point) when every value is right or every value is wrong.

    Returns
    -------
    errors_accepted, correct_accepted : ndarray of float
        The x (false positive rate) and y (true positive rate) of each point.

    Examples
    --------
    >>> x, y = roc_points([0.9, 0.8, 0.8, 0.3], [0, 0, 1, 1])
    >>> x.tolist(), y.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    score = confidences(signal, "signal")
    wrong = binary_labels(error, "error", len(score)).astype(bool)
    errors, correct = int(wrong.sum()), int((~wrong).sum())
    if errors == 0 or correct == 0:
        return np.array([math.nan]), np.array([math.nan])
    order = np.argsort(-score, kind="stable")
    ordered = score[order]
    last_of_run = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))
    errors_seen = np.cumsum(wrong[order])[last_of_run]
    correct_seen = (last_of_run + 1) - errors_seen
    return (np.concatenate(([0.0], errors_seen / errors)), np.concatenate(([0.0], correct_seen / correct)))

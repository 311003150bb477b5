"""The fused signal: a monotone combination of several signals, learnt with cross-fitting by document.

The model is a logistic regression of "the value is right" on the signals'
normal scores (each value replaced by the normal quantile of its place among
the training values: monotone, bounded and blind to a signal's scale, so a pile
of 1.0s or a few coarse levels weigh what their ranking is worth), with a
non-negative weight on each signal (so the fused score never falls when a signal
rises) and a small ridge penalty, fitted by SLSQP with bounds
(:func:`scipy.optimize.minimize`). A missing signal (NaN) contributes nothing
through its weight; instead a free weight on an indicator "this signal is
missing" learns what its absence says. Each document is scored by a model fitted
on the other folds of documents only (cross-fitting), so no value's fused score
has seen that value's outcome. ``docs/signals.md`` states the choices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from scipy.special import expit, logit, ndtri

__all__ = ["FusionModel", "fit_fusion", "normal_scores", "cross_fitted", "FOLDS", "RIDGE"]

#: Folds of documents for cross-fitting (fewer when there are fewer documents).
FOLDS = 5
#: The ridge penalty on every weight but the intercept, added to the mean log-loss as ``RIDGE / 2 * |w|^2``.
RIDGE = 1e-3
#: The constant model's share of right values (all right, or all wrong) is cut to ``[CLIP, 1 - CLIP]``.
CLIP = 1e-4


@dataclass(frozen=True)
class FusionModel:
    """A fitted fusion: ``P(right) = expit(intercept + sum_j weight_j x_j + sum_j absent_j m_j)``.

    Attributes
    ----------
    names : tuple of str
        The signals, in the order of the weights.
    seen : tuple of ndarray
        Each signal's training values, sorted: ``x_j`` is the normal score of
        a value's place among them (:func:`normal_scores`), 0 where it is missing.
    intercept : float
    weights : ndarray of float
        One per signal, never negative.
    absent : ndarray of float
        The weight of each signal's "missing" indicator ``m_j`` (0 for a
        signal that no training value lacks).
    """

    names: tuple[str, ...]
    seen: tuple[np.ndarray, ...]
    intercept: float
    weights: np.ndarray
    absent: np.ndarray

    def predict(self, columns: np.ndarray) -> np.ndarray:
        """The fused score of each row of ``columns`` (one column per signal of :attr:`names`, NaN missing)."""
        features, missing = _features(columns, self.seen)
        return np.asarray(expit(self.intercept + features @ self.weights + missing @ self.absent))


def normal_scores(values: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """The normal score of each value's mid-place among the sorted ``seen`` values: ``Phi^-1((below + ties / 2) /
    n)``, the share cut to ``[1 / 2n, 1 - 1 / 2n]``. Non-decreasing in the value, equal for equal values, and
    bounded (about ±4 for 10,000 values) whatever the scale: a pile of 1.0s is not sent to infinity as its logit
    would be. NaN stays NaN.

    >>> normal_scores(np.array([0.1, 0.5, 0.9, 0.9, np.nan]), np.array([0.1, 0.5, 0.9, 0.9])).round(3).tolist()
    [-1.15, -0.319, 0.674, 0.674, nan]
    """
    n = len(seen)
    if n == 0:
        return np.where(np.isnan(values), np.nan, 0.0)
    share = (np.searchsorted(seen, values, side="left") + np.searchsorted(seen, values, side="right")) / (2 * n)
    scores = ndtri(np.clip(share, 0.5 / n, 1 - 0.5 / n))
    return np.where(np.isnan(values), np.nan, scores)


def fit_fusion(columns: np.ndarray, right: np.ndarray, names: tuple[str, ...]) -> FusionModel:
    """Fit the fusion on ``columns`` (values × signals, NaN where missing) to ``right`` (bool per value).

    With only right (or only wrong) values there is nothing to tell apart: the
    model is the constant share of right values, every weight 0.

    Examples
    --------
    >>> columns = np.array([[0.9, np.nan], [0.8, 0.7], [0.2, 0.9], [0.3, 0.1]])
    >>> model = fit_fusion(columns, np.array([True, True, False, False]), ("a", "b"))
    >>> bool(model.weights[0] > model.weights[1] >= 0)
    True
    >>> scores = model.predict(columns)
    >>> bool(scores[0] > scores[2] and scores[1] > scores[3])
    True
    """
    k = columns.shape[1]
    seen = tuple(np.sort(columns[:, j][~np.isnan(columns[:, j])]) for j in range(k))
    share = float(right.mean()) if len(right) else 1.0
    if share in (0.0, 1.0):
        return FusionModel(names=names, seen=seen, intercept=float(logit(np.clip(share, CLIP, 1 - CLIP))),
                           weights=np.zeros(k), absent=np.zeros(k))
    features, missing = _features(columns, seen)
    design = np.hstack((np.ones((len(right), 1)), features, missing))
    target = right.astype(np.float64)
    n = len(target)
    penalised = np.ones(design.shape[1])
    penalised[0] = 0.0

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ theta
        value = float(np.mean(np.logaddexp(0.0, z) - target * z)) + RIDGE / 2 * float(np.sum(penalised * theta**2))
        gradient = design.T @ (expit(z) - target) / n + RIDGE * penalised * theta
        return value, gradient

    start = np.zeros(design.shape[1])
    start[0] = float(logit(share))
    bounds = [(None, None)] + [(0.0, None)] * k + [(None, None)] * k
    # SLSQP rather than L-BFGS-B: as precise here, and its few small steps do not wait on the BLAS threads that
    # slow L-BFGS-B down several times over on a busy machine
    theta = minimize(loss, start, jac=True, method="SLSQP", bounds=bounds, options={"ftol": 1e-10, "maxiter": 500}).x
    return FusionModel(names=names, seen=seen, intercept=float(theta[0]),
                       weights=np.asarray(theta[1:k + 1], dtype=np.float64).copy(),
                       absent=np.asarray(theta[k + 1:], dtype=np.float64).copy())


def _features(columns: np.ndarray, seen: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The normal scores (0 where missing) and the missing indicators."""
    missing = np.isnan(columns)
    scores = np.column_stack([normal_scores(columns[:, j], seen[j]) for j in range(columns.shape[1])])
    return np.where(missing, 0.0, scores), missing.astype(np.float64)


def cross_fitted(signals: Mapping[str, ArrayLike], error: ArrayLike, *, groups: ArrayLike | None = None,
                 folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """The fused score of every value, each from a model fitted on the other folds of documents.

    Parameters
    ----------
    signals : mapping of str to array-like of float, each shape (n,)
        The signals to fuse, in ``[0, 1]``, NaN where a value lacks one.
    error : array-like of bool, shape (n,)
        Whether each value is an error (``docs/errors.md``).
    groups : array-like of int, shape (n,), optional
        The document of each value: a document's values fall in one fold.
        Without it each value is its own document.
    folds : int, default=5
        Folds of documents (fewer when there are fewer documents; with one
        document there is nothing to fit on and every score is NaN).
    seed : int, default=0
        Seed of the documents' draw into folds.

    Returns
    -------
    ndarray of float, shape (n,)
        In ``(0, 1)``: the estimated probability that the value is right.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> wrong = rng.random(400) < 0.3
    >>> a = np.clip(np.where(wrong, 0.4, 0.7) + rng.normal(0, 0.2, 400), 0, 1)
    >>> b = np.clip(np.where(wrong, 0.3, 0.6) + rng.normal(0, 0.2, 400), 0, 1)
    >>> fused = cross_fitted({"a": a, "b": b}, wrong, groups=np.arange(400) // 4)
    >>> from rpa_sim.route.signals.discrimination import discrimination
    >>> bool(discrimination(fused, wrong).auroc > max(discrimination(a, wrong).auroc, discrimination(b, wrong).auroc))
    True
    """
    names = tuple(signals)
    columns = np.column_stack([np.asarray(signals[name], dtype=np.float64) for name in names])
    wrong = np.asarray(error, dtype=bool)
    n = len(wrong)
    group = np.arange(n) if groups is None else np.asarray(groups)
    labels, inverse = np.unique(group, return_inverse=True)
    k = min(folds, len(labels))
    scores = np.full(n, np.nan)
    if k < 2:
        return scores
    fold = (np.random.default_rng(seed).permutation(len(labels)) % k)[inverse]
    for held in range(k):
        out = fold == held
        model = fit_fusion(columns[~out], ~wrong[~out], names)
        scores[out] = model.predict(columns[out])
    return scores

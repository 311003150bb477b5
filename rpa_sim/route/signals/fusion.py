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

__all__ = ["FusionModel", "CrossFit", "fit_fusion", "normal_scores", "cross_fitted", "cross_fit", "FOLDS", "RIDGE",
           "FTOL"]

#: Folds of documents for cross-fitting (fewer when there are fewer documents).
FOLDS = 5
#: The ridge penalty on every weight but the intercept, added to the mean log-loss as ``RIDGE / 2 * |w|^2``.
RIDGE = 1e-3
#: The constant model's share of right values (all right, or all wrong) is cut to ``[CLIP, 1 - CLIP]``.
CLIP = 1e-4
#: SLSQP stops when the loss improves by less than this in a step.
FTOL = 1e-8


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


class _Ranked:
    """The signals' columns ranked once: per signal its distinct values and each carried value's index among
    them, so that each fold's normal scores come from a count per distinct value, with no sort or search."""

    def __init__(self, columns: np.ndarray) -> None:
        self.columns = columns
        self.missing = np.isnan(columns)
        self.distinct = []
        for j in range(columns.shape[1]):
            values, index = np.unique(columns[~self.missing[:, j], j], return_inverse=True)
            self.distinct.append((values, index))
        #: a missing-indicator column only for the signals some value lacks (the others' would be all zeros)
        self.absent = self.missing.any(axis=0)

    def design(self, train: np.ndarray) -> np.ndarray:
        """Every row's intercept, normal scores among the ``train`` rows (0 where missing), and indicators."""
        n, k = self.columns.shape
        design = np.zeros((n, 1 + k + int(self.absent.sum())))
        design[:, 0] = 1.0
        for j, (values, index) in enumerate(self.distinct):
            carried = ~self.missing[:, j]
            counts = np.bincount(index[train[carried]], minlength=len(values))
            total = int(counts.sum())
            if total:
                below = np.cumsum(counts) - counts
                share = np.clip((below + counts / 2) / total, 0.5 / total, 1 - 0.5 / total)
                design[carried, 1 + j] = ndtri(share)[index]
        design[:, 1 + k:] = self.missing[:, self.absent]
        return design

    def model(self, theta: np.ndarray, train: np.ndarray, names: tuple[str, ...]) -> FusionModel:
        """The fitted parameters as a :class:`FusionModel` (the training values kept to score new ones)."""
        k = self.columns.shape[1]
        absent = np.zeros(k)
        absent[self.absent] = theta[1 + k:]
        seen = tuple(np.sort(self.columns[train & ~self.missing[:, j], j]) for j in range(k))
        return FusionModel(names=names, seen=seen, intercept=float(theta[0]),
                           weights=np.asarray(theta[1:1 + k], dtype=np.float64).copy(), absent=absent)


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
    ranked = _Ranked(columns)
    train = np.ones(len(right), dtype=bool)
    return ranked.model(_fitted(ranked.design(train), right, columns.shape[1]), train, names)


def _fitted(design: np.ndarray, right: np.ndarray, k: int, start: np.ndarray | None = None) -> np.ndarray:
    """The parameters: intercept, ``k`` non-negative weights, the indicators' free weights (the columns after);
    the search starts at ``start`` (another fold's parameters), else at the constant share."""
    share = float(right.mean()) if len(right) else 1.0
    constant = np.zeros(design.shape[1])
    constant[0] = float(logit(np.clip(share, CLIP, 1 - CLIP)))
    if share in (0.0, 1.0):
        return constant  # nothing to tell apart: the constant share
    target = right.astype(np.float64)
    n = len(target)
    penalised = np.ones(design.shape[1])
    penalised[0] = 0.0

    # einsum rather than the @ of BLAS: a tall, thin product is bound by memory, where BLAS's threads only
    # spin (three times the CPU time on a busy machine, for no gain in wall time)
    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = np.einsum("ij,j->i", design, theta)
        value = float(np.mean(np.logaddexp(0.0, z) - target * z)) + RIDGE / 2 * float(np.sum(penalised * theta**2))
        gradient = np.einsum("ij,i->j", design, expit(z) - target) / n + RIDGE * penalised * theta
        return value, gradient

    bounds = [(None, None)] + [(0.0, None)] * k + [(None, None)] * (design.shape[1] - 1 - k)
    # SLSQP rather than L-BFGS-B: as precise here, and its few small steps do not wait on the BLAS threads that
    # slow L-BFGS-B down several times over on a busy machine
    return np.asarray(minimize(loss, constant if start is None else start, jac=True, method="SLSQP", bounds=bounds,
                               options={"ftol": FTOL, "maxiter": 500}).x)


def _features(columns: np.ndarray, seen: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The normal scores (0 where missing) and the missing indicators."""
    missing = np.isnan(columns)
    scores = np.column_stack([normal_scores(columns[:, j], seen[j]) for j in range(columns.shape[1])])
    return np.where(missing, 0.0, scores), missing.astype(np.float64)


@dataclass(frozen=True)
class CrossFit:
    """What cross-fitting gives: every value's fused score, and the folds' models averaged (their intercept and
    weights; None with fewer than two documents), to show what the fusion leans on."""

    scores: np.ndarray
    model: FusionModel | None


def cross_fitted(signals: Mapping[str, ArrayLike], error: ArrayLike, *, groups: ArrayLike | None = None,
                 folds: int = FOLDS, seed: int = 0) -> np.ndarray:
    """The fused score of every value, each from a model fitted on the other folds of documents
    (:func:`cross_fit`'s scores).

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
    return cross_fit(signals, error, groups=groups, folds=folds, seed=seed).scores


def cross_fit(signals: Mapping[str, ArrayLike], error: ArrayLike, *, groups: ArrayLike | None = None,
              folds: int = FOLDS, seed: int = 0) -> CrossFit:
    """:func:`cross_fitted`'s scores, and the average of the folds' models. Each fold's search starts at the
    previous fold's parameters (the folds' models differ little), which saves most of the steps."""
    names = tuple(signals)
    columns = np.column_stack([np.asarray(signals[name], dtype=np.float64) for name in names])
    right = ~np.asarray(error, dtype=bool)
    n = len(right)
    group = np.arange(n) if groups is None else np.asarray(groups)
    labels, inverse = np.unique(group, return_inverse=True)
    k = min(folds, len(labels))
    scores = np.full(n, np.nan)
    if k < 2:
        return CrossFit(scores, None)
    fold = (np.random.default_rng(seed).permutation(len(labels)) % k)[inverse]
    ranked = _Ranked(columns)
    thetas: list[np.ndarray] = []
    for held in range(k):
        train = fold != held
        design = ranked.design(train)
        thetas.append(_fitted(design[train], right[train], len(names), thetas[-1] if thetas else None))
        scores[~train] = expit(np.einsum("ij,j->i", design[~train], thetas[-1]))
    return CrossFit(scores, ranked.model(np.mean(thetas, axis=0), np.ones(n, dtype=bool), names))

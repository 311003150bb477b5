"""The problem of per-field thresholds under a budget, as one curve per field.

Every item ``i`` (a predicted field value, or a question) has a field ``key``, a
``confidence``, a cost ``a_i`` when it is auto-accepted and a cost ``r_i`` when a
person reviews it. A policy gives every field one threshold; an item is reviewed
iff its confidence is strictly below its field's threshold, so within a field the
accepted items are a confidence prefix and equal confidences go together. The
problem is to maximise the number of accepted items subject to
``sum(a_i accepted) + sum(r_i reviewed) <= budget``: a multiple-choice knapsack
with one choice (a threshold) per field. Each field's choices are the points of
its :class:`FieldCurve`; :mod:`rpa_sim.route.per_field.solver` picks one per field.
``docs/optimize.md`` shows how the KIEval_Aligned^tau and mean-ANLS targets
become such budgets.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["FieldCurve", "field_curves", "read_only"]

# Relative tolerance under which three curve points count as collinear (hull vertices kept).
_COLLINEAR = 1e-12


def read_only(array: np.ndarray) -> np.ndarray:
    """``array`` made read-only (in place), so that a frozen result cannot be changed through it."""
    array.flags.writeable = False
    return array


def _items(keys: ArrayLike, confidence: ArrayLike, accept_cost: ArrayLike, review_cost: ArrayLike
           ) -> tuple[list[Hashable], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated items sorted by (key, -confidence, accept cost, review cost).

    The sort uses every column, so the result depends only on the multiset of
    items, never on their input order (identical items are interchangeable).
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    if confidence.ndim != 1:
        raise ValueError(f"confidence must be one-dimensional, got shape {confidence.shape}")
    n = len(confidence)
    keys = np.asarray(keys)
    if keys.ndim != 1 or len(keys) != n:
        raise ValueError(f"keys must be one-dimensional with {n} entries (one per confidence), got shape {keys.shape}")
    costs = []
    for name, values in (("accept_cost", accept_cost), ("review_cost", review_cost)):
        values = np.asarray(values, dtype=np.float64)
        try:
            values = np.broadcast_to(values, (n,))
        except ValueError:
            raise ValueError(f"{name} must be a scalar or have {n} entries, got shape {values.shape}") from None
        if not np.isfinite(values).all():
            raise ValueError(f"{name} must be finite")
        costs.append(values)
    if not np.isfinite(confidence).all():
        raise ValueError("confidence must be finite (no NaN or infinity)")
    confidence = confidence + 0.0  # -0.0 -> 0.0, so a threshold never prints as -0.0
    if n == 0:
        return [], np.zeros(0, np.intp), confidence, costs[0], costs[1]
    names, code = np.unique(keys, return_inverse=True)
    order = np.lexsort((costs[1], costs[0], -confidence, code))
    return names.tolist(), code[order], confidence[order], costs[0][order], costs[1][order]


@dataclass(frozen=True, eq=False)
class FieldCurve:
    """The thresholds one field can take, with the accepted count and cost of each.

    Point ``j`` is the threshold ``thresholds[j]``: the field's items with
    confidence ``>= thresholds[j]`` are accepted (``accepted[j]`` of them) and the
    rest reviewed, for a total cost of ``cost[j]`` over the field's items. Point 0
    is "accept none" (``inf``), then one point per distinct confidence from the
    highest down; the last point, the field's lowest confidence, accepts all.
    """

    key: Hashable
    thresholds: np.ndarray
    accepted: np.ndarray
    cost: np.ndarray

    @property
    def items(self) -> int:
        """How many items the field has."""
        return int(self.accepted[-1])

    def hull(self) -> np.ndarray:
        """Indices of the points on the lower convex hull of (accepted, cost), cheapest first.

        The chain starts at the cheapest point (the one accepting most among
        equally cheap ones) and ends at "accept all"; points to the left of the
        start cost more and accept less, so no budget ever wants them. Collinear
        points (to a relative 1e-12, so that rounding of the cumulative sums
        does not drop them) are kept as vertices: they give the merge finer
        steps. Successive
        slopes (extra cost per extra accepted item) are positive and non-decreasing.

        Examples
        --------
        >>> curve = field_curves(["k"] * 3, [0.9, 0.8, 0.7], [1.0, 5.0, 1.0], 0.0)[0]
        >>> curve.cost.tolist(), curve.hull().tolist()
        ([0.0, 1.0, 6.0, 7.0], [0, 1, 3])
        """
        x, y = self.accepted.tolist(), self.cost.tolist()  # Python floats: a fast scalar loop
        start = int(np.flatnonzero(self.cost == self.cost.min())[-1])
        chain = [start]
        for j in range(start + 1, len(x)):
            while len(chain) >= 2:
                o, a = chain[-2], chain[-1]
                left, right = (x[a] - x[o]) * (y[j] - y[o]), (y[a] - y[o]) * (x[j] - x[o])
                if left - right >= -_COLLINEAR * (abs(left) + abs(right)):
                    break
                chain.pop()
            chain.append(j)
        return np.asarray(chain, dtype=np.intp)


def _curves(names: list[Hashable], code: np.ndarray, confidence: np.ndarray, accept: np.ndarray,
            review: np.ndarray) -> list[FieldCurve]:
    curves: list[FieldCurve] = []
    if len(code) == 0:
        return curves
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(code)) + 1, [len(code)]))
    for f, (lo, hi) in enumerate(pairwise(bounds)):
        c = confidence[lo:hi]
        # the last item of each run of equal confidences closes a point
        ends = np.append(np.flatnonzero(c[1:] != c[:-1]), hi - lo - 1)
        reviewed_all = float(review[lo:hi].sum())
        change = np.cumsum(accept[lo:hi] - review[lo:hi])[ends]
        curves.append(FieldCurve(
            key=names[f],
            thresholds=read_only(np.concatenate(([np.inf], c[ends]))),
            accepted=read_only(np.concatenate(([0], ends + 1)).astype(np.int64)),
            cost=read_only(reviewed_all + np.concatenate(([0.0], change))),
        ))
    return curves


def field_curves(keys: ArrayLike, confidence: ArrayLike, accept_cost: ArrayLike,
                 review_cost: ArrayLike) -> list[FieldCurve]:
    """Every threshold each field can take, with its accepted count and total cost.

    One sort of all items by (key, confidence descending) and one cumulative sum
    of ``accept_cost - review_cost`` per field give every point at once:
    ``cost[j] = sum(review_cost) + cumsum(accept_cost - review_cost)`` at the end
    of the ``j``-th run of equal confidences.

    Parameters
    ----------
    keys : array_like, shape (n,)
        The field of each item (any sortable values, e.g. str).
    confidence : array_like of float, shape (n,)
        Finite confidences.
    accept_cost, review_cost : array_like of float, shape (n,) or scalar
        The cost of each item when auto-accepted and when reviewed. They are
        usually ``>= 0``; nothing here relies on it.

    Returns
    -------
    list of FieldCurve
        One per field, in sorted key order; points ordered from "accept none"
        (threshold ``inf``) to "accept all" (the field's lowest confidence).

    Examples
    --------
    >>> curves = field_curves(["b", "a", "a", "a"], [0.5, 0.9, 0.4, 0.9],
    ...                       accept_cost=[1.0, 0.0, 1.0, 2.0], review_cost=0.25)
    >>> [(c.key, c.thresholds.tolist(), c.accepted.tolist(), c.cost.tolist()) for c in curves]
    [('a', [inf, 0.9, 0.4], [0, 2, 3], [0.75, 2.25, 3.0]), ('b', [inf, 0.5], [0, 1], [0.25, 1.0])]
    """
    return _curves(*_items(keys, confidence, accept_cost, review_cost))


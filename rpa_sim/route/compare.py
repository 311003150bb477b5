"""Comparing trade-off curves: area, operating points, cost optima and Pareto dominance.

Everything here reads :class:`~rpa_sim.route.sweep.Curve` columns; nothing
re-evaluates. A curve's points are (auto-rate, post-correction metric) pairs,
one per threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rpa_sim.common.jsontext import finite
from rpa_sim.route.sweep import Curve

__all__ = ["OperatingPoint", "point_at", "area_under_curve", "operating_point", "cost_optimum", "edge_of_range_text",
           "dominates", "pareto"]


@dataclass(frozen=True)
class OperatingPoint:
    """One threshold of a curve with its figures: the share of predictions auto-accepted, the post-correction
    metric, the items reviewed and the cost; None where a figure is undefined (a table without rows has no
    auto-rate), ``cost`` also without a cost model. ``summary.json`` holds it as it is (``docs/summary.md``)."""

    threshold: float
    auto_rate: float | None
    metric: float | None
    reviewed: float
    cost: float | None


def point_at(curve: Curve, index: int) -> OperatingPoint:
    """The curve's figures at its ``index``-th threshold."""
    cost = curve.columns.get("cost")
    return OperatingPoint(
        threshold=float(curve.threshold[index]),
        auto_rate=finite(float(curve.auto_rate[index])),
        metric=finite(float(curve.metric[index])),
        reviewed=float(curve.columns["reviewed"][index]),
        cost=None if cost is None else finite(float(cost[index])),
    )


def _defined(curve: Curve) -> np.ndarray:
    """The points with a defined metric and auto-rate (a table without rows has no auto-rate)."""
    return ~(np.isnan(curve.metric) | np.isnan(curve.auto_rate))


def _frontier(curve: Curve) -> tuple[np.ndarray, np.ndarray]:
    """The curve's defined points, by increasing auto-rate."""
    keep = _defined(curve)
    auto, metric = curve.auto_rate[keep], curve.metric[keep]
    order = np.lexsort((metric, auto))
    return auto[order], metric[order]


def area_under_curve(curve: Curve) -> float | None:
    """Area under post-correction metric against auto-rate, over auto-rates 0 to 1.

    The metric is interpolated linearly between the curve's points and counts as
    0 where the policy cannot operate (auto-rates above its highest or below its
    lowest point), so a policy is not rewarded for automation it cannot reach.
    None when no point has a defined metric and auto-rate.

    Examples
    --------
    >>> curve = Curve("p", "kie", {"threshold": np.array([0.0, 1.0]), "auto_rate": np.array([1.0, 0.0]),
    ...                            "kieval_aligned": np.array([0.8, 1.0]), "reviewed": np.array([0.0, 10.0])})
    >>> round(area_under_curve(curve), 10)
    0.9
    """
    auto, metric = _frontier(curve)
    if len(auto) == 0:
        return None
    if len(auto) == 1:
        return 0.0
    return float(np.trapezoid(metric, auto))


def operating_point(curve: Curve, target: float) -> OperatingPoint | None:
    """The highest auto-rate whose post-correction metric reaches ``target`` (None if none does).

    Among points of equal auto-rate the higher metric is taken.
    """
    reaching = np.flatnonzero(_defined(curve) & (curve.metric >= target))
    if len(reaching) == 0:
        return None
    best = reaching[np.lexsort((-curve.metric[reaching], -curve.auto_rate[reaching]))[0]]
    return point_at(curve, int(best))


def cost_optimum(curve: Curve) -> OperatingPoint:
    """The cheapest threshold of the curve (ties: the higher auto-rate, then the lower threshold)."""
    if "cost" not in curve.columns:
        raise ValueError(f"curve {curve.policy!r} has no cost column: give a cost model")
    cost = curve.columns["cost"]
    best = np.lexsort((curve.threshold, -curve.auto_rate, cost))[0]
    return point_at(curve, int(best))


def edge_of_range_text(best: OperatingPoint) -> str:
    """Why a cost optimum at the edge of the swept range (a policy's ``cost_optimum`` with ``edge_of_range``)
    is to be read with care, in words.

    >>> edge_of_range_text(OperatingPoint(threshold=0.9, auto_rate=0.25, metric=0.99, reviewed=3999.0, cost=None))
    ... # doctest: +NORMALIZE_WHITESPACE
    'the cheapest point lies at the edge of the range you swept (τ = 0.9000, 25.0% of predictions left
    unreviewed): a cheaper one may lie beyond it'
    """
    from rpa_sim.common.formatting import number, share  # noqa: PLC0415

    # an exact grid (every threshold at which a decision changes) has nothing beyond it, so no edge
    return (f"the cheapest point lies at the edge of the range you swept (τ = {number(best.threshold)}, "
            f"{share(best.auto_rate)} of predictions left unreviewed): a cheaper one may lie beyond it")


def _best_metric_at_least(auto: np.ndarray, metric: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each auto-rate in ``at``, the best metric among points automating at least that much."""
    best_from = np.maximum.accumulate(metric[::-1])[::-1]
    index = np.searchsorted(auto, at, side="left")
    padded = np.append(best_from, -np.inf)
    return padded[index]


def dominates(a: Curve, b: Curve, *, tolerance: float = 1e-12) -> bool:
    """Whether ``a`` Pareto-dominates ``b``.

    Every point of ``b`` is matched or beaten by a point of ``a`` (at least the
    same auto-rate and at least the same metric), and some point of ``a`` is
    strictly better than anything ``b`` offers at its auto-rate.
    """
    auto_a, metric_a = _frontier(a)
    auto_b, metric_b = _frontier(b)
    if len(auto_a) == 0 or len(auto_b) == 0:
        return False
    at = np.union1d(auto_a, auto_b)
    best_a = _best_metric_at_least(auto_a, metric_a, at)
    best_b = _best_metric_at_least(auto_b, metric_b, at)
    return bool(np.all(best_a >= best_b - tolerance) and np.any(best_a > best_b + tolerance))


def pareto(curves: Sequence[Curve]) -> dict[str, list[str]]:
    """For each policy, the policies that dominate it (an empty list: it is on the Pareto front)."""
    return {b.policy: [a.policy for a in curves if a is not b and dominates(a, b)] for b in curves}

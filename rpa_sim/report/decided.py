"""The one decided point of the page: the opening names it, and every figure stars it.

The study's decision (:func:`rpa_sim.study.recommend.decision_of`: the summary's own, or for a summary written
before decisions existed the one the recommendation rules give) is the point. Nothing is computed here that the
decision does not hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rpa_sim.study.decision import Decision, Point

__all__ = ["decided_point", "chosen_point"]


def decided_point(decision: Decision) -> Point | None:
    """The decision's own point as the study found it; None when nothing was decided or its auto-rate is
    undefined."""
    point = decision.point
    if decision.policy is None or point is None or point.auto_rate is None:
        return None
    return point


def chosen_point(decision: Decision) -> tuple[float, float] | None:
    """The decided point's (auto-rate, quality), which the figures star; None when there is none, its quality is
    undefined, or it misses a constraint (no figure stars a point that no plan can run: a ★ is the decision)."""
    point = decided_point(decision) if decision.feasible else None
    if point is None or point.auto_rate is None or point.metric is None:
        return None
    return point.auto_rate, point.metric

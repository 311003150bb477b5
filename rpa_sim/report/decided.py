"""The one decided point of the page: the opening names it, and every figure stars it.

The study's decision (``StudySummary.decision``, a :class:`rpa_sim.study.decision.Decision`) is the
point. A summary written before decisions existed has none: the recommendation
(:func:`rpa_sim.study.recommend.recommend`) stands in, in the decision's shape (:func:`decision_of`).
Nothing is computed here that the summary or the recommendation does not hold.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rpa_sim.report.wording import currency_of, per_day_factor
from rpa_sim.route.costs import CostSplit
from rpa_sim.study.decision import Constraint, Decision, Point
from rpa_sim.study.recommend import recommend

if TYPE_CHECKING:
    from rpa_sim.study.recommend import Recommendation
    from rpa_sim.study.result import StudySummary
    from rpa_sim.study.run import ScenarioResult

__all__ = ["decision_of", "chosen_point", "starred"]


def decision_of(summary: StudySummary) -> Decision:
    """The summary's decision, or, in a summary written before decisions, the recommendation in its shape.

    The recommendation (:func:`rpa_sim.study.recommend.recommend`) has one quality constraint per target, no
    team, no alternatives, its point, and its total cost only (the kinds None, as a recommendation does not
    split it): per day when the daily volume is known, else for the data. Without a recommendation there
    is nothing to decide: no policy, the recommendation's reason, and the basis
    :func:`rpa_sim.study.decision.decide` gives then (``cost`` with costs, else ``target``).
    """
    if summary.decision is not None:
        return summary.decision
    found = recommend(summary)
    if found.basis is None:
        return Decision(policy=None, threshold=None, reviewers=None, feasible=False, constraints=(), binding=None,
                        cost=None, alternatives=(), basis="cost" if summary.costs is not None else "target",
                        edge_of_range=False, reason=found.reason)
    per_day = per_day_factor(summary)
    # a recommendation's cost is not split by kind: only its total is known
    cost = None if found.cost is None else CostSplit(
        review=None, staffing=None, errors=None, rejected=None,
        total=found.cost if per_day is None else found.cost * per_day, currency=currency_of(summary),
        per="data" if per_day is None else "day")
    return Decision(policy=found.policy, threshold=found.threshold, reviewers=None, feasible=True,
                    constraints=tuple(Constraint("quality", target, found.metric, target in found.reached)
                                      for target in summary.targets),
                    binding=None, cost=cost, alternatives=(), basis=found.basis, edge_of_range=False, reason="",
                    point=Point(auto_rate=found.auto_rate, metric=found.metric, reviewed=found.reviewed or 0.0,
                                cost=found.cost))


def chosen_point(decision: Decision) -> tuple[float, float] | None:
    """The decided point's (auto-rate, quality); None when there is none or its quality is undefined."""
    point = _decided_point(decision)
    if point is None or point.auto_rate is None or point.metric is None:
        return None
    return point.auto_rate, point.metric


def _decided_point(decision: Decision) -> Point | None:
    """The decision's own point as the study found it; None when nothing was decided or its auto-rate is
    undefined."""
    point = decision.point
    if decision.policy is None or point is None or point.auto_rate is None:
        return None
    return point


def starred(result: ScenarioResult, found: Recommendation) -> Recommendation:
    """The recommendation the detail plots star, moved to the decision when the summary has one, so that every
    star on the page marks the same point."""
    decision = result.summary.decision
    if decision is None:
        return found
    point = _decided_point(decision)
    if point is None:
        return replace(found, basis=None)
    return replace(found, basis=decision.basis, policy=decision.policy, threshold=decision.threshold,
                   auto_rate=point.auto_rate, metric=point.metric, cost=point.cost)

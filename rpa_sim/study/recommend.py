"""What a summary decided, and what the decided point buys: the reader of summaries of every version.

:func:`decision_of` gives the :class:`~rpa_sim.study.decision.Decision` of a study's
result (:class:`~rpa_sim.study.result.StudySummary`): the one it holds, or, for a
summary written before decisions existed (schema version 1, no ``decision``), the
one the recommendation rules of those versions give, in the decision's shape:

- **With costs**, the cheapest policy at its cheapest threshold (its cost
  optimum); ties go to the higher auto-rate, then to the policy listed first.
  The cost of an error left in the output already prices quality in.
- **Without costs**, the policy that automates most while reaching the first
  target the scenario lists (its operating point at that target); ties go to
  the higher quality, then to the policy listed first.
- Nothing decided (no policy, and the reason) when the data holds no
  predictions, when the scenario sets neither costs nor targets, or when no
  policy reaches the first target.

Such a decision has one quality constraint per target, no team, no
alternatives, its point, and its cost's total only (an old summary does not
split it): per day when the daily volume is known, else for the data.

What a decided point buys is read from the summary beside it: against
reviewing everything and reviewing nothing (:func:`versus`), the certified
alternative (:func:`certified_alternative`: the decided policy's certified
threshold, else the certified threshold that automates most) and the main risk
(:func:`main_risk`), whichever exposure is larger at the decided auto-rate
(ties: calibration):

- calibration: ECE (equal-width bins) x auto-rate, the average confidence
  gap over the share of predictions accepted on confidence alone;
- reviewer: the larger of the reviewer's miss and false-correction rates x
  (1 - auto-rate), the most the reviewer can get wrong among the share reviewed.

There is no main risk to weigh when no prediction has a confidence (the
summary then has no calibration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from rpa_sim.route.costs import CostSplit
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.decision import Constraint, Decision, Point
from rpa_sim.study.result import Calibration, CertifiedThreshold, KieData

if TYPE_CHECKING:
    from rpa_sim.study.result import Baseline, OperatingPoint, PolicyResult, StudySummary

_Figure = TypeVar("_Figure")

__all__ = ["decision_of", "per_day_factor", "Versus", "versus", "CertifiedAlternative", "certified_alternative",
           "Risk", "main_risk", "spans_all_auto_rates", "TOLERANCE"]

#: How much a figure must exceed another to count as above it, and how close an auto-rate range must come to
#: 0 and 1 to span them: sums of shares and means are not exact in floating point.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Versus:
    """A decided point against one baseline (reviewing everything or nothing).

    Attributes
    ----------
    metric, auto_rate, reviewed, cost : float or None
        The baseline's quality after review, auto-rate, reviewed items and
        cost (None when undefined or without costs).
    metric_gain : float or None
        The decided quality minus the baseline's.
    reviews_saved : float
        The baseline's reviewed items minus the decided point's (negative: more reviews).
    savings : float or None
        The baseline's cost minus the decided point's (negative: the decision costs more).
    savings_percent : float or None
        ``savings`` as a percentage of the baseline's cost (None when that cost is 0 or unknown).
    """

    metric: float | None
    auto_rate: float | None
    reviewed: float
    cost: float | None
    metric_gain: float | None
    reviews_saved: float
    savings: float | None
    savings_percent: float | None


@dataclass(frozen=True)
class CertifiedAlternative:
    """A threshold that comes with a guarantee (METRICS.md §7), and what running at it gives.

    ``confidence`` is ``1 - delta``: the probability that the error rate of
    auto-accepted items is at most ``max_error``.
    """

    policy: str
    knob: str
    threshold: float
    max_error: float
    confidence: float
    auto_rate: float | None
    metric: float | None
    cost: float | None


@dataclass(frozen=True)
class Risk:
    """The main risk of a decided point and the figures it was chosen from.

    ``calibration_exposure`` is ECE x auto-rate, ``reviewer_exposure`` is
    max(miss rate, false-correction rate) x (1 - auto-rate); ``kind`` names the larger.
    """

    kind: Literal["calibration", "reviewer"]
    ece: float
    auto_rate: float
    miss_rate: float
    false_correction_rate: float
    calibration_exposure: float
    reviewer_exposure: float


def spans_all_auto_rates(auto_rate_range: tuple[float | None, float | None]) -> bool:
    """Whether a policy's auto-rates run from 0 to 1, so that its AUC compares with others'.

    Examples
    --------
    >>> spans_all_auto_rates((0.0, 1.0)), spans_all_auto_rates((0.735, 0.98)), spans_all_auto_rates((None, None))
    (True, False, False)
    """
    low, high = auto_rate_range
    return low is not None and high is not None and low <= TOLERANCE and high >= 1.0 - TOLERANCE


def decision_of(summary: StudySummary) -> Decision:
    """The summary's decision; for a summary written before decisions existed, the one the recommendation rules
    give (the module's rules).

    Examples
    --------
    A study's decision is its own; the same summary without it (as version 1 wrote them) is decided by the
    rules, here the cheapest point, which the decision also is:

    >>> from dataclasses import replace
    >>> from rpa_sim.study.run import run_scenario
    >>> from rpa_sim.study.scenario import load_scenario
    >>> scenario, base = load_scenario("cost-benefit")
    >>> small = scenario.model_copy(update={"data": scenario.data.model_copy(update={"n": 100})})
    >>> summary = run_scenario(small, base).summary
    >>> decision_of(summary) is summary.decision
    True
    >>> old = decision_of(replace(summary, schema_version=None, decision=None))
    >>> (old.basis, old.policy, old.threshold) == ("cost", summary.decision.policy, summary.decision.threshold)
    True
    """
    if summary.decision is not None:
        return summary.decision
    basis: Literal["cost", "target"] = "cost" if summary.costs is not None else "target"
    chosen = _choose(summary)
    if isinstance(chosen, str):
        return Decision(policy=None, threshold=None, reviewers=None, feasible=False, constraints=(), binding=None,
                        cost=None, alternatives=(), basis=basis, edge_of_range=False, reason=chosen)
    policy, point = chosen
    metric = point.metric
    per_day = per_day_factor(summary)
    # an old summary's point has its total cost only, not split by kind
    cost = None if point.cost is None else CostSplit(
        review=None, staffing=None, errors=None, rejected=None,
        total=point.cost if per_day is None else point.cost * per_day,
        currency=None if summary.costs is None else summary.costs.currency, per="data" if per_day is None else "day")
    return Decision(policy=policy.policy, threshold=point.threshold, reviewers=None, feasible=True,
                    constraints=tuple(Constraint("quality", target, metric, metric is not None and metric >= target)
                                      for target in summary.targets),
                    binding=None, cost=cost, alternatives=(), basis=basis, edge_of_range=False, reason="",
                    point=Point(auto_rate=point.auto_rate, metric=metric, reviewed=point.reviewed, cost=point.cost))


def _choose(summary: StudySummary) -> tuple[PolicyResult, OperatingPoint] | str:
    """The policy and point the recommendation rules choose, or the reason there is none."""
    if not summary.data.predictions:
        return "the data holds no predictions, so there is nothing to route"
    policies = summary.policies
    if summary.costs is not None:
        # min() keeps the first of equal keys: the policy listed first wins a full tie
        # with costs every policy has its cost optimum (and, the data having predictions, its auto-rate)
        optima = [(p, _known(p.cost_optimum)) for p in policies]
        return min(optima, key=lambda pair: (pair[1].cost, -_known(pair[1].auto_rate)))
    if not summary.targets:
        return "the scenario sets neither costs nor a target: add costs or targets to get a recommendation"
    key = f"{summary.targets[0]:g}"
    reaching = [(p, point) for p in policies if (point := p.operating_points.get(key)) is not None]
    if not reaching:
        best = summary.baselines.review_all.metric
        return (f"no policy reaches the first target {key}"
                + ("" if best is None else f" (reviewing everything gives {best:.4f})"))
    # a point that reaches the target has its metric and auto-rate
    return min(reaching, key=lambda pair: (-_known(pair[1].auto_rate), -_known(pair[1].metric)))


def per_day_factor(summary: StudySummary) -> float | None:
    """What turns a total for the data into a total per day (None when the daily volume is unknown)."""
    data = summary.data
    size = data.documents if isinstance(data, KieData) else data.questions
    volume = None if summary.costs is None else summary.costs.volume_per_day
    return None if volume is None or not size else volume / size


def versus(point: Point, baseline: Baseline, *, auto_rate: float | None) -> Versus:
    """A decided point against a baseline (reviewing everything or nothing), whose auto-rate is ``auto_rate``
    (0 or 1; None without predictions).

    >>> from rpa_sim.study.result import Baseline
    >>> found = versus(Point(auto_rate=0.6, metric=0.97, reviewed=400.0, cost=100.0),
    ...                Baseline(metric=0.96, reviewed=1000.0, cost=250.0), auto_rate=0.0)
    >>> found.reviews_saved, found.savings, round(found.savings_percent, 6)
    (600.0, 150.0, 60.0)
    """
    cost, base_cost = point.cost, baseline.cost
    savings = None if cost is None or base_cost is None else base_cost - cost
    metric, base_metric = point.metric, baseline.metric
    return Versus(
        metric=base_metric, auto_rate=auto_rate, reviewed=baseline.reviewed, cost=base_cost,
        metric_gain=None if metric is None or base_metric is None else metric - base_metric,
        reviews_saved=baseline.reviewed - point.reviewed, savings=savings,
        savings_percent=None if savings is None or not base_cost else 100.0 * savings / base_cost,
    )


def certified_alternative(summary: StudySummary, decided: str | None) -> CertifiedAlternative | None:
    """The threshold with a guarantee beside the decided policy ``decided``: its own certified threshold, else
    the certified threshold that automates most; None when no policy has one."""
    # a certification with a threshold has its figures there
    certified = [(p, p.certified, _known(p.certified.at_threshold)) for p in summary.policies
                 if isinstance(p.certified, CertifiedThreshold) and p.certified.threshold is not None]
    if not certified:
        return None
    own = [choice for choice in certified if choice[0].policy == decided]
    policy, found, at = own[0] if own else min(certified, key=lambda choice: -(choice[2].auto_rate or 0.0))
    return CertifiedAlternative(policy=policy.policy, knob=policy.knob, threshold=_known(found.threshold),
                                max_error=found.max_error, confidence=1.0 - found.delta,
                                auto_rate=at.auto_rate, metric=at.metric, cost=at.cost)


def main_risk(calibration: Calibration, reviewer: Reviewer, auto_rate: float) -> Risk:
    """The main risk at ``auto_rate`` by the module's rule: calibration or the reviewer, whichever exposure is
    larger (ties: calibration).

    Parameters
    ----------
    calibration : Calibration
        The study's calibration (``StudySummary.calibration``, of a study whose predictions have confidences).
    reviewer : Reviewer
        The study's reviewer.
    auto_rate : float
        The share of predictions accepted without review at the point in question.

    Examples
    --------
    >>> from rpa_sim.study.result import Reliability
    >>> calibration = Calibration(0.05, None, None, Reliability((), (), (), (), ()), ())
    >>> found = main_risk(calibration, Reviewer(miss_rate=0.02), 0.8)
    >>> found.kind, round(found.calibration_exposure, 4), round(found.reviewer_exposure, 4)
    ('calibration', 0.04, 0.004)
    """
    ece = _known(calibration.ece_equal_width)  # a calibration of predictions with confidences has its ECE
    miss, broken = reviewer.miss_rate, reviewer.false_correction_rate
    calibration_exposure = ece * auto_rate
    reviewer_exposure = max(miss, broken) * (1.0 - auto_rate)
    return Risk(kind="calibration" if calibration_exposure >= reviewer_exposure else "reviewer", ece=ece,
                auto_rate=auto_rate, miss_rate=miss, false_correction_rate=broken,
                calibration_exposure=calibration_exposure, reviewer_exposure=reviewer_exposure)


def _known(value: _Figure | None) -> _Figure:
    """``value``, read where the study's figures make it present (the comments at each use say why)."""
    assert value is not None, "a figure read where the study does not have it"
    return value

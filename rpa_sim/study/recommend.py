"""What to do: the policy and threshold a study recommends, read from its summary.

:func:`recommend` takes a study's result (:class:`~rpa_sim.study.result.StudySummary`, the figures of
``summary.json``) and applies fixed rules, so that the report states a decision
instead of leaving it to the reader. A summary with
a ``decision`` (:mod:`rpa_sim.study.decision`, every summary :func:`~rpa_sim.study.run.run_study`
writes) is followed: its policy and threshold, its basis, and no recommendation
when it is infeasible (its reason). Without one (summaries of earlier versions)
the rules are:

- **With costs**, the cheapest policy at its cheapest threshold (its cost
  optimum); ties go to the higher auto-rate, then to the policy listed first.
  The cost of an error left in the output already prices quality in.
- **Without costs**, the policy that automates most while reaching the first
  target the scenario lists (its operating point at that target); ties go to
  the higher quality, then to the policy listed first.
- No recommendation when the data holds no predictions, when the scenario
  sets neither costs nor targets, or when no policy reaches the first target;
  :attr:`Recommendation.reason` says which.

The recommended point is compared with reviewing everything and reviewing
nothing (:class:`Versus`). The certified alternative is the recommended
policy's certified threshold, else the certified threshold that automates most.
The main risk is whichever exposure is larger at the recommended auto-rate
(ties: calibration):

- calibration: ECE (equal-width bins) x auto-rate, the average confidence
  gap over the share of predictions accepted on confidence alone;
- reviewer: the larger of the reviewer's miss and false-correction rates x
  (1 - auto-rate), the most the reviewer can get wrong among the share reviewed.

There is no main risk to weigh when no prediction has a confidence (the
summary then has no calibration).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.result import Calibration, CertifiedThreshold, OperatingPoint

if TYPE_CHECKING:
    from rpa_sim.study.decision import Decision
    from rpa_sim.study.result import Baseline, PolicyResult, StudySummary

_Figure = TypeVar("_Figure")
#: What a recommendation rests on: (basis, policy, point, target), or the reason there is none.
_Choice = tuple[Literal["cost", "target"], "PolicyResult", OperatingPoint, "float | None"] | str

__all__ = ["Recommendation", "Versus", "CertifiedAlternative", "Risk", "recommend", "main_risk",
           "spans_all_auto_rates", "TOLERANCE"]

#: How much a figure must exceed another to count as above it, and how close an auto-rate range must come to
#: 0 and 1 to span them: sums of shares and means are not exact in floating point.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Versus:
    """The recommended point against one baseline (reviewing everything or nothing).

    Attributes
    ----------
    metric, auto_rate, reviewed, cost : float or None
        The baseline's quality after review, auto-rate, reviewed items and
        cost (None when undefined or without costs).
    metric_gain : float or None
        Recommended quality minus the baseline's.
    reviews_saved : float
        The baseline's reviewed items minus the recommended point's (negative: more reviews).
    savings : float or None
        The baseline's cost minus the recommended point's (negative: the recommendation costs more).
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
    """The main risk of the recommendation and the figures it was chosen from.

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


@dataclass(frozen=True)
class Recommendation:
    """The decision a study supports (see the module's rules).

    Attributes
    ----------
    basis : {"cost", "target"} or None
        ``"cost"``: the cost optimum; ``"target"``: the most automation
        reaching ``target``; None: no recommendation (see ``reason``).
    reason : str
        Why there is no recommendation; empty when there is one.
    policy, knob : str or None
        The policy and the quantity its threshold applies to (``confidence``, ``grounding``).
    threshold : float or None
        The recommended τ.
    target : float or None
        The target the recommendation was chosen for (basis ``"target"``).
    auto_rate, metric, reviewed, cost : float or None
        The recommended point's figures.
    reached, missed : tuple of float
        The scenario's targets the recommended quality reaches, and those it misses.
    beats_review_all : bool
        Whether the recommended quality is above reviewing everything (a policy that reviews whole documents
        also adds what the model missed, which reviewing each prediction cannot).
    versus_review_all, versus_review_none : Versus or None
    certified : CertifiedAlternative or None
    risk : Risk or None
        None without a recommendation, or when no prediction has a confidence (no calibration to weigh).
    """

    basis: Literal["cost", "target"] | None
    reason: str
    policy: str | None = None
    knob: str | None = None
    threshold: float | None = None
    target: float | None = None
    auto_rate: float | None = None
    metric: float | None = None
    reviewed: float | None = None
    cost: float | None = None
    reached: tuple[float, ...] = ()
    missed: tuple[float, ...] = ()
    beats_review_all: bool = False
    versus_review_all: Versus | None = None
    versus_review_none: Versus | None = None
    certified: CertifiedAlternative | None = None
    risk: Risk | None = None

    def to_dict(self) -> dict[str, Any]:
        """The recommendation as plain JSON-ready values (tuples as lists)."""
        found = asdict(self)
        found["reached"], found["missed"] = list(self.reached), list(self.missed)
        return found


def spans_all_auto_rates(auto_rate_range: tuple[float | None, float | None]) -> bool:
    """Whether a policy's auto-rates run from 0 to 1, so that its AUC compares with others'.

    Examples
    --------
    >>> spans_all_auto_rates((0.0, 1.0)), spans_all_auto_rates((0.735, 0.98)), spans_all_auto_rates((None, None))
    (True, False, False)
    """
    low, high = auto_rate_range
    return low is not None and high is not None and low <= TOLERANCE and high >= 1.0 - TOLERANCE


def recommend(summary: StudySummary) -> Recommendation:
    """The policy and threshold the study's figures support, compared with the two extremes.

    Parameters
    ----------
    summary : StudySummary
        The study's result (``ScenarioResult.summary``, or ``summary.json`` read by
        :meth:`~rpa_sim.study.result.StudySummary.from_json`).

    Returns
    -------
    Recommendation
        Its ``basis`` is None, and ``reason`` says why, when the figures support no choice.

    Examples
    --------
    A study of 2,000 documents with costs, whose decision is the confidence policy at τ = 0.9:

    >>> from rpa_sim.study.run import run_scenario
    >>> from rpa_sim.study.scenario import load_scenario
    >>> scenario, base = load_scenario("cost-benefit")
    >>> small = scenario.model_copy(update={"data": scenario.data.model_copy(update={"n": 100})})
    >>> summary = run_scenario(small, base).summary
    >>> found = recommend(summary)
    >>> (found.basis, found.policy, found.threshold) == ("cost", summary.decision.policy, summary.decision.threshold)
    True
    >>> found.versus_review_all.reviews_saved == summary.baselines.review_all.reviewed - found.reviewed
    True
    """
    chosen = _choose(summary)
    if isinstance(chosen, str):
        return Recommendation(basis=None, reason=chosen, certified=_certified(summary, None))
    basis, policy, point, target = chosen
    baselines = summary.baselines
    predictions = summary.data.predictions
    metric = point.metric
    review_all = baselines.review_all.metric
    return Recommendation(
        basis=basis, reason="", policy=policy.policy, knob=policy.knob, threshold=point.threshold,
        target=target, auto_rate=point.auto_rate, metric=metric, reviewed=point.reviewed, cost=point.cost,
        reached=tuple(t for t in summary.targets if metric is not None and metric >= t),
        missed=tuple(t for t in summary.targets if metric is None or metric < t),
        beats_review_all=metric is not None and review_all is not None and metric > review_all + TOLERANCE,
        versus_review_all=_versus(point, baselines.review_all, auto_rate=0.0 if predictions else None),
        versus_review_none=_versus(point, baselines.review_none, auto_rate=1.0 if predictions else None),
        certified=_certified(summary, policy.policy),
        risk=None if summary.calibration is None else main_risk(summary.calibration, summary.reviewer,
                                                                _known(point.auto_rate)),
    )


def _choose(summary: StudySummary) -> _Choice:
    """(basis, policy, point, target) by the module's rules, or the reason there is none."""
    if summary.decision is not None:
        return _decided(summary, summary.decision)
    if not summary.data.predictions:
        return "the data holds no predictions, so there is nothing to route"
    policies = summary.policies
    if summary.costs is not None:
        # min() keeps the first of equal keys: the policy listed first wins a full tie
        # with costs every policy has its cost optimum (and, the data having predictions, its auto-rate)
        optima = [(p, _known(p.cost_optimum)) for p in policies]
        policy, optimum = min(optima, key=lambda pair: (pair[1].cost, -_known(pair[1].auto_rate)))
        return "cost", policy, optimum, None
    if not summary.targets:
        return "the scenario sets neither costs nor a target: add costs or targets to get a recommendation"
    target = summary.targets[0]
    key = f"{target:g}"
    reaching = [(p, point) for p in policies if (point := p.operating_points.get(key)) is not None]
    if not reaching:
        best = summary.baselines.review_all.metric
        return (f"no policy reaches the first target {key}"
                + ("" if best is None else f" (reviewing everything gives {best:.4f})"))
    # a point that reaches the target has its metric and auto-rate
    policy, point = min(reaching, key=lambda pair: (-_known(pair[1].auto_rate), -_known(pair[1].metric)))
    return "target", policy, point, target


def _decided(summary: StudySummary, decision: Decision) -> _Choice:
    """The study's decision as (basis, policy, point, target), or the reason there is none."""
    if decision.policy is None or not decision.feasible:
        return decision.reason
    policy = next(p for p in summary.policies if p.policy == decision.policy)
    target = summary.targets[0] if decision.basis == "target" else None
    point = _known(decision.point)  # a feasible decision has its point
    return decision.basis, policy, OperatingPoint(threshold=_known(decision.threshold), auto_rate=point.auto_rate,
                                                  metric=point.metric, reviewed=point.reviewed, cost=point.cost), target


def _versus(point: OperatingPoint, baseline: Baseline, *, auto_rate: float | None) -> Versus:
    cost, base_cost = point.cost, baseline.cost
    savings = None if cost is None or base_cost is None else base_cost - cost
    metric, base_metric = point.metric, baseline.metric
    return Versus(
        metric=base_metric, auto_rate=auto_rate, reviewed=baseline.reviewed, cost=base_cost,
        metric_gain=None if metric is None or base_metric is None else metric - base_metric,
        reviews_saved=baseline.reviewed - point.reviewed, savings=savings,
        savings_percent=None if savings is None or not base_cost else 100.0 * savings / base_cost,
    )


def _certified(summary: StudySummary, recommended: str | None) -> CertifiedAlternative | None:
    # a certification with a threshold has its figures there
    certified = [(p, p.certified, _known(p.certified.at_threshold)) for p in summary.policies
                 if isinstance(p.certified, CertifiedThreshold) and p.certified.threshold is not None]
    if not certified:
        return None
    own = [choice for choice in certified if choice[0].policy == recommended]
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

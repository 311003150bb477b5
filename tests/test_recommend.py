"""The recommendation rules, on hand-built study summaries (typed, as ``summary.json`` reads) written before
decisions existed: :func:`decision_of` reads them as the decision the rules give; and what a decided point buys
against the two extremes (``versus``), its certified alternative and its main risk."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rpa_sim.route.costs import CostModel
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.study.decision import Decision
from rpa_sim.study.recommend import (
    certified_alternative,
    decision_of,
    main_risk,
    spans_all_auto_rates,
    versus,
)
from rpa_sim.study.result import (
    AtThreshold,
    Baseline,
    Baselines,
    Calibration,
    CertifiedThreshold,
    CostOptimum,
    FrozenMap,
    KieData,
    NotCertifiable,
    OperatingPoint,
    PolicyResult,
    Reliability,
    StudySummary,
)


def _point(threshold, auto_rate, metric, reviewed, cost=None):
    return OperatingPoint(threshold=threshold, auto_rate=auto_rate, metric=metric, reviewed=reviewed, cost=cost)


def _optimum(threshold, auto_rate, metric, reviewed, cost):
    """A cost optimum; what it saves plays no part in the rules (250 and 400: the baselines' costs below)."""
    return CostOptimum(threshold=threshold, auto_rate=auto_rate, metric=metric, reviewed=reviewed, cost=cost,
                       savings_vs_review_all=250.0 - cost, savings_vs_review_none=400.0 - cost)


def _policy(name, *, points=None, optimum=None, certified=None, knob="confidence"):
    return PolicyResult(policy=name, description="", knob=knob, auc=None, auto_rate_range=(0.0, 1.0),
                        operating_points=FrozenMap(points), cost_optimum=optimum, certified=certified,
                        dominated_by=())


def _certified(threshold, auto_rate, *, max_error=0.03, delta=0.05):
    return CertifiedThreshold(threshold=threshold, max_error=max_error, delta=delta, calibration_n=500, accepted_n=200,
                         accepted_errors=3, p_value=0.01, upper_bound=0.029, holdout_auto_rate=auto_rate,
                         holdout_error=0.02, guarantee="",
                         at_threshold=AtThreshold(auto_rate=auto_rate, metric=0.95, cost=90.0))


def _data(predictions):
    """KIE data with ``predictions`` (the rules read only how many there are)."""
    return KieData(predictions=predictions, documents=predictions // 10, entities_gt=predictions,
                   entities_pred=predictions, tp=0, fp=0, fn=0, substitutions=0, additions=0, deletions=0,
                   entity_f1=None, group_f1=None, kieval_aligned=None, group_aligned=None, ignored_empty=0,
                   precision=None, recall=None, grouping_blind_entity_f1=None, groups_gt=0, groups_pred=0,
                   groups_paired=0, groups_tp=0, value_match="exact")


def _summary(policies, *, costs=True, targets=(0.9,), predictions=1000, ece=0.05, miss=0.02, broken=0.0):
    """A summary of ``policies``; it writes and reads back as summary.json does, so it is one rpa-sim could write."""
    no_bins = Reliability(lower=(), upper=(), count=(), mean_confidence=(), accuracy=())
    summary = StudySummary(
        scenario="hand-built", description="", task="kie", metric="kieval_aligned", data=_data(predictions),
        reviewer=Reviewer(miss_rate=miss, false_correction_rate=broken),
        costs=CostModel(hourly_rate=30.0) if costs else None, thresholds="exact", targets=tuple(targets),
        calibration=Calibration(ece_equal_width=ece, ece_equal_mass=None, aurc=None, reliability=no_bins,
                                by_field=()) if predictions else None,
        baselines=Baselines(review_none=Baseline(metric=0.80, reviewed=0.0, cost=400.0 if costs else None),
                            review_all=Baseline(metric=0.96, reviewed=1000.0, cost=250.0 if costs else None)),
        policies=tuple(policies), optimized_per_field=FrozenMap())
    assert StudySummary.from_json(summary.to_json()) == summary
    return summary


def _versus(summary: StudySummary, found: Decision):
    """The decided point against reviewing everything and nothing."""
    return (versus(found.point, summary.baselines.review_all, auto_rate=0.0),
            versus(found.point, summary.baselines.review_none, auto_rate=1.0))


def _met(found: Decision) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The targets reached and missed: an old summary's decision has one quality constraint per target."""
    assert all(constraint.name == "quality" for constraint in found.constraints)
    return (tuple(c.target for c in found.constraints if c.met), tuple(c.target for c in found.constraints
                                                                       if not c.met))


def test_with_costs_the_cheapest_optimum_is_recommended_and_compared():
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0)),
                        _policy("b", optimum=_optimum(0.8, 0.6, 0.97, 400.0, 100.0))], targets=(0.96, 0.9))
    found = decision_of(summary)
    assert (found.basis, found.policy, found.threshold, found.feasible) == ("cost", "b", 0.8, True)
    point = found.point
    assert (point.auto_rate, point.metric, point.reviewed, point.cost) == (0.6, 0.97, 400.0, 100.0)
    # the cost is the point's total only, for the data (no daily volume), and no team nor alternative
    assert (found.cost.total, found.cost.per, found.cost.review) == (100.0, "data", None)
    assert (found.reviewers, found.alternatives, found.binding, found.reason) == (None, (), None, "")
    assert _met(found) == ((0.96, 0.9), ())
    everything, nothing = _versus(summary, found)
    assert everything.savings == 150.0 and everything.savings_percent == pytest.approx(60.0)
    assert everything.reviews_saved == 600.0 and everything.metric_gain == pytest.approx(0.01)
    assert everything.auto_rate == 0.0 and nothing.auto_rate == 1.0
    assert nothing.savings == 300.0 and nothing.savings_percent == pytest.approx(75.0)
    assert nothing.reviews_saved == -400.0 and nothing.metric_gain == pytest.approx(0.17)


def test_cost_ties_go_to_more_automation_then_to_the_policy_listed_first():
    same = _optimum(0.9, 0.5, 0.95, 500.0, 100.0)
    summary = _summary([_policy("a", optimum=same), _policy("b", optimum=replace(same, auto_rate=0.7)),
                        _policy("c", optimum=replace(same, auto_rate=0.7))])
    assert decision_of(summary).policy == "b"


def test_the_cost_is_per_day_when_the_volume_is_known():
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0))])
    daily = replace(summary, costs=CostModel(hourly_rate=30.0, currency="EUR", volume_per_day=500.0))
    cost = decision_of(daily).cost  # 100 documents in the data, 500 a day
    assert (cost.total, cost.per, cost.currency) == (pytest.approx(600.0), "day", "EUR")
    assert decision_of(daily).point.cost == 120.0  # the point's own cost stays for the data


def test_a_summary_with_a_decision_is_read_as_it_is():
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0))])
    decided = Decision(policy="a", threshold=0.5, reviewers=None, feasible=False, constraints=(), binding="quality",
                       cost=None, alternatives=(), basis="cost", edge_of_range=False, reason="none meets")
    assert decision_of(replace(summary, decision=decided)) is decided


def test_a_recommendation_that_costs_more_than_a_baseline_shows_a_negative_saving():
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.9, 0.85, 100.0, 300.0))], targets=(0.9, 0.8))
    nothing = replace(summary.baselines.review_none, cost=0.0)  # nothing to pay without review: no percentage
    summary = replace(summary, baselines=replace(summary.baselines, review_none=nothing))
    found = decision_of(summary)
    everything, nothing = _versus(summary, found)
    assert everything.savings == -50.0 and everything.savings_percent == pytest.approx(-20.0)
    assert nothing.savings == -300.0 and nothing.savings_percent is None
    assert _met(found) == ((0.8,), (0.9,)) and everything.metric_gain < 0


def test_without_costs_the_most_automation_at_the_first_target_is_recommended():
    points = {"a": {"0.9": _point(0.7, 0.80, 0.91, 200.0), "0.95": _point(0.9, 0.50, 0.95, 500.0)},
              "b": {"0.9": _point(0.6, 0.85, 0.90, 150.0), "0.95": _point(0.95, 0.60, 0.95, 400.0)},
              "c": {"0.9": None, "0.95": None}}
    summary = _summary([_policy(name, points=p) for name, p in points.items()], costs=False, targets=(0.9, 0.95))
    found = decision_of(summary)
    assert (found.basis, found.policy, found.threshold) == ("target", "b", 0.6)
    everything, _ = _versus(summary, found)
    assert found.cost is None and everything.savings is None and everything.savings_percent is None
    assert _met(found)[1] == (0.95,)
    # the first target listed counts, not the lowest
    summary = replace(summary, targets=(0.95, 0.9))
    assert (decision_of(summary).policy, decision_of(summary).threshold) == ("b", 0.95)


def test_target_ties_go_to_the_higher_quality():
    summary = _summary([_policy("a", points={"0.9": _point(0.7, 0.8, 0.90, 200.0)}),
                        _policy("b", points={"0.9": _point(0.6, 0.8, 0.92, 200.0)})], costs=False)
    assert decision_of(summary).policy == "b"


@pytest.mark.parametrize(("changes", "reason"), [
    ({"predictions": 0}, "the data holds no predictions, so there is nothing to route"),
    ({"costs": False, "targets": ()}, "the scenario sets neither costs nor a target: add costs or targets to get a "
                                      "recommendation"),
    ({"costs": False, "targets": (0.99,)}, "no policy reaches the first target 0.99 (reviewing everything gives "
                                           "0.9600)"),
])
def test_no_recommendation_says_why(changes, reason):
    policy = _policy("a", points={"0.9": _point(0.7, 0.8, 0.9, 200.0), "0.99": None},
                     optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0))
    summary = _summary([policy], **changes)
    found = decision_of(summary)
    assert (found.policy, found.threshold, found.point, found.feasible) == (None, None, None, False)
    assert found.reason == reason and found.basis == ("cost" if summary.costs is not None else "target")


def test_the_certified_alternative_prefers_the_recommended_policy():
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0), certified=_certified(0.97, 0.5)),
                        _policy("b", optimum=_optimum(0.8, 0.6, 0.97, 400.0, 100.0), certified=_certified(0.96, 0.4))])
    certified = certified_alternative(summary, decision_of(summary).policy)
    assert (certified.policy, certified.threshold, certified.auto_rate) == ("b", 0.96, 0.4)
    assert certified.max_error == 0.03 and certified.confidence == pytest.approx(0.95)


def test_otherwise_the_certified_threshold_that_automates_most():
    budget = NotCertifiable(threshold=None, guarantee="not certified: a review budget can force items through")
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 100.0), certified=budget),
                        _policy("b", optimum=_optimum(0.8, 0.6, 0.97, 400.0, 120.0), certified=_certified(0.96, 0.4)),
                        _policy("c", optimum=_optimum(0.8, 0.6, 0.97, 400.0, 130.0), certified=_certified(0.98, 0.45))])
    found = decision_of(summary)
    assert found.policy == "a" and certified_alternative(summary, found.policy).policy == "c"
    # nothing passes the test: a certification without a threshold (nor its figures)
    untested = [replace(p, certified=replace(p.certified, threshold=None, at_threshold=None))
                for p in summary.policies[1:]]
    assert certified_alternative(replace(summary, policies=(summary.policies[0], *untested)), "a") is None


@pytest.mark.parametrize(("auto_rate", "ece", "miss", "broken", "kind"), [
    (0.8, 0.05, 0.02, 0.0, "calibration"),  # 0.04 against 0.004
    (0.1, 0.05, 0.02, 0.0, "reviewer"),     # 0.005 against 0.018
    (0.5, 0.02, 0.0, 0.02, "calibration"),  # 0.01 against 0.01: a tie goes to calibration
    (0.5, 0.02, 0.0, 0.03, "reviewer"),     # the false-correction rate counts as much as the miss rate
])
def test_the_main_risk_is_the_larger_exposure(auto_rate, ece, miss, broken, kind):
    summary = _summary([_policy("a", optimum=_optimum(0.9, auto_rate, 0.95, 300.0, 120.0))], ece=ece, miss=miss,
                       broken=broken)
    risk = main_risk(summary.calibration, summary.reviewer, decision_of(summary).point.auto_rate)
    assert risk.kind == kind
    assert risk.calibration_exposure == pytest.approx(ece * auto_rate)
    assert risk.reviewer_exposure == pytest.approx(max(miss, broken) * (1 - auto_rate))


def test_the_decision_of_an_old_summary_is_a_summary_s_decision():
    """It writes and reads back as a summary's decision does: a reader of summaries gets one kind of decision."""
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0),
                                certified=_certified(0.97, 0.5))])
    found = decision_of(summary)
    again = StudySummary.from_json(replace(summary, schema_version=3, decision=found).to_json())
    assert again.decision == found and json.loads(again.to_json())["decision"]["cost"]["review"] is None


def test_summary_is_not_changed():
    summary = _summary([_policy("a", optimum=_optimum(0.9, 0.7, 0.95, 300.0, 120.0))])
    before = summary.to_json()
    decision_of(summary)
    assert summary.to_json() == before


@pytest.mark.parametrize(("span", "full"), [
    ((0.0, 1.0), True), ((1e-12, 1.0 - 1e-12), True), ((0.0, 0.958), False), ((0.735, 1.0), False),
    ((None, None), False),
])
def test_a_curve_is_full_when_its_auto_rates_run_from_0_to_1(span, full):
    assert spans_all_auto_rates(span) is full

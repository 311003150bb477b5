"""Comparing curves: AUC, operating points, cost optimum (against brute force) and Pareto dominance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rpa_sim.evaluate.metrics.kieval import CORRECT, evaluate_document
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.compare import area_under_curve, cost_optimum, dominates, operating_point, pareto
from rpa_sim.route.costs import CostModel
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Curve, Sweeper


def curve(name, auto, metric, cost=None):
    columns = {"threshold": np.linspace(0, 1, len(auto)), "auto_rate": np.array(auto, float),
               "kieval_aligned": np.array(metric, float), "reviewed": 10 * (1 - np.array(auto, float))}
    if cost is not None:
        columns["cost"] = np.array(cost, float)
    return Curve(name, "kie", columns)


def test_auc_by_hand():
    # trapezoids over auto-rate: (0.5 * (1.0 + 0.9) + 0.5 * (0.9 + 0.6)) / 2
    assert area_under_curve(curve("a", [1.0, 0.5, 0.0], [0.6, 0.9, 1.0])) == pytest.approx(0.85)
    # a policy that cannot automate beyond 50% gets nothing above it
    assert area_under_curve(curve("b", [0.5, 0.0], [0.9, 1.0])) == pytest.approx(0.475)
    assert area_under_curve(curve("c", [1.0, 0.0], [np.nan, np.nan])) is None


def test_operating_point_is_the_highest_auto_rate_reaching_the_target():
    c = curve("a", [1.0, 0.8, 0.5, 0.0], [0.6, 0.95, 0.97, 1.0])
    point = operating_point(c, 0.95)
    assert (point.auto_rate, point.metric) == (0.8, 0.95)
    assert operating_point(c, 0.999).auto_rate == 0.0
    assert operating_point(curve("b", [1.0], [0.5]), 0.9) is None


def expected_figures(documents, policy, reviewer, prices, threshold):
    """Expected reviews, auto-rate and cost at ``threshold``, replayed from the records' KIEval labels.

    Written from docs/replay.md: an entity is routed when its confidence is below τ (with escalation,
    when any entity of its document is); a budget reviews the least confident routed entities first
    (ties: the earlier one) up to ``floor(share * n)``; every entity not reviewed is audited with
    probability ``audit``. A reviewed error stays with probability ``m``; a document review with
    ``fix_additions`` adds each missed value with probability ``1 - m``. ``prices`` = (per review, per
    document opened, per error left).
    """
    entities = [(confidence, d, label != CORRECT)
                for d, outcome in enumerate(documents)
                for confidence, label in zip(outcome.confidences, outcome.labels.tolist())]
    escalates = policy.escalate == "document"
    escalated = {d for confidence, d, _ in entities if confidence < threshold} if escalates else set()
    routed = [i for i, (confidence, d, _) in enumerate(entities)
              if (d in escalated if escalates else confidence < threshold)]
    if policy.budget is not None:
        limit = math.floor(policy.budget.share * len(entities))
        routed = sorted(routed, key=lambda i: (entities[i][0], i))[:limit]
    routed = set(routed)
    chance = [1.0 if i in routed else policy.audit for i in range(len(entities))]
    untouched = [1.0] * len(documents)  # per document: the probability that no entity of it is reviewed
    errors = 0.0
    for i, (_, d, wrong) in enumerate(entities):
        untouched[d] *= 1.0 - chance[i]
        if wrong:
            errors += 1.0 - chance[i] * (1.0 - reviewer.miss_rate)
        else:
            errors += chance[i] * reviewer.false_correction_rate
    for d, outcome in enumerate(documents):
        fixed = policy.fix_additions and d in escalated
        errors += len(outcome.additions) * (reviewer.miss_rate if fixed else 1.0)
    reviews = sum(chance)
    per_review, per_document, per_error = prices
    cost = reviews * per_review + sum(1.0 - u for u in untouched) * per_document + errors * per_error
    return {"reviewed": reviews, "auto_rate": 1.0 - reviews / len(entities), "cost": cost}


def test_cost_optimum_equals_brute_force_over_the_grid():
    records = list(generate_receipts(150, seed=9))
    documents = [evaluate_document(r.ground_truth, r.prediction) for r in records]
    table = evaluate_kie(records)
    costs = CostModel(hourly_rate=30, per_residual_error=1.2)
    reviewer = Reviewer(seconds_per_item=5, seconds_per_document=12, miss_rate=0.03, false_correction_rate=0.01)
    prices = (5 * 30 / 3600, 12 * 30 / 3600, 1.2)  # 5 s and 12 s at 30 an hour
    grid = np.linspace(0, 1, 101)
    optima = set()
    for name in ("confidence", "document-escalation", "audited-budget"):
        policy = load_policy(name)
        curve = Sweeper(table, policy, reviewer=reviewer, costs=costs).curve(grid)
        replayed = [expected_figures(documents, policy, reviewer, prices, t) for t in grid]
        np.testing.assert_allclose(curve.columns["cost"], [r["cost"] for r in replayed], rtol=1e-12, atol=0)
        # cheapest; ties: the higher auto-rate, then the lower threshold
        brute = min(range(len(grid)), key=lambda k: (replayed[k]["cost"], -replayed[k]["auto_rate"], grid[k]))
        best = cost_optimum(curve)
        assert best.threshold == grid[brute]
        assert best.cost == pytest.approx(replayed[brute]["cost"], rel=1e-12)
        assert best.auto_rate == pytest.approx(replayed[brute]["auto_rate"], abs=1e-12)
        assert best.reviewed == pytest.approx(replayed[brute]["reviewed"], rel=1e-12)
        optima.add(best.threshold)
    assert not optima & {0.0, 1.0}  # an interior optimum: the search had something to find


def test_cost_optimum_ties_by_hand():
    # costs 3, 1, 1, 1, 2: three cheapest; of those .25 and .75 automate 70%, .5 only 50%; .25 is lower
    c = curve("a", [1.0, 0.7, 0.5, 0.7, 0.0], [0.6, 0.8, 0.9, 0.8, 1.0], cost=[3.0, 1.0, 1.0, 1.0, 2.0])
    point = cost_optimum(c)
    assert (point.threshold, point.auto_rate, point.cost, point.metric) == (0.25, 0.7, 1.0, 0.8)


def test_cost_optimum_needs_costs():
    with pytest.raises(ValueError, match="no cost column"):
        cost_optimum(curve("a", [1.0, 0.0], [0.5, 1.0]))


def test_pareto_dominance():
    better = curve("better", [1.0, 0.5, 0.0], [0.8, 0.95, 1.0])
    worse = curve("worse", [1.0, 0.5, 0.0], [0.7, 0.9, 1.0])
    crossing = curve("crossing", [1.0, 0.5, 0.0], [0.85, 0.9, 1.0])
    assert dominates(better, worse) and not dominates(worse, better)
    assert not dominates(better, better)
    assert not dominates(better, crossing) and not dominates(crossing, better)
    assert pareto([better, worse, crossing]) == {"better": [], "worse": ["better", "crossing"], "crossing": []}

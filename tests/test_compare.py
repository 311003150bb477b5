"""Comparing curves: AUC, operating points, cost optimum (against brute force) and Pareto dominance."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.compare import area_under_curve, cost_optimum, dominates, operating_point, pareto
from rpa_sim.costs import CostModel
from rpa_sim.outcomes import evaluate_kie
from rpa_sim.policies import load_policy
from rpa_sim.reviewer import Reviewer
from rpa_sim.sweep import Curve, Sweeper
from rpa_sim.generators import generate_receipts


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


def test_cost_optimum_equals_brute_force_over_the_grid():
    table = evaluate_kie(generate_receipts(150, seed=9))
    costs = CostModel(hourly_rate=30, per_residual_error=1.2)
    reviewer = Reviewer(seconds_per_item=5, seconds_per_document=12, miss_rate=0.03)
    for name in ("confidence", "document-escalation", "audited-budget"):
        sweeper = Sweeper(table, load_policy(name), reviewer=reviewer, costs=costs)
        grid = np.linspace(0, 1, 101)
        best = cost_optimum(sweeper.curve(grid))
        brute = min(grid, key=lambda t: (sweeper.at(t)["cost"], -sweeper.at(t)["auto_rate"], t))
        assert best.threshold == brute
        assert best.cost == pytest.approx(sweeper.at(brute)["cost"], abs=1e-9)


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

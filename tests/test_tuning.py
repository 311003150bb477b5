"""The optimized per-field policy: its budget form equals the metric, and the sweep engine confirms it."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.compare import operating_point
from rpa_sim.route.per_field.policy import optimized_policy, target_costs
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper
from tests.support_records import vqa_records


@pytest.mark.parametrize("reviewer", [Reviewer(), Reviewer(miss_rate=0.1, false_correction_rate=0.02)])
def test_budget_form_is_the_metric(reviewer):
    # For any reviewed set, cost <= budget exactly when the expected metric reaches the target.
    table = evaluate_kie(generate_receipts(60, seed=8))
    sweeper = Sweeper(table, load_policy("confidence"), reviewer=reviewer)
    rng = np.random.default_rng(0)
    for threshold in rng.random(30):
        reviewed = table.confidence < threshold
        metric = sweeper.at(threshold)["kieval_aligned"]
        for target in (0.85, 0.9, 0.95):
            accepted_cost, reviewed_cost, budget = target_costs(table, target, reviewer)
            cost = accepted_cost[~reviewed].sum() + reviewed_cost[reviewed].sum()
            if abs(metric - target) > 1e-9:
                assert (cost <= budget) == (metric >= target)


@pytest.mark.parametrize("target", [0.75, 0.8, 0.85])
def test_optimized_kie_policy(target):
    table = evaluate_kie(generate_receipts(200, seed=2))
    reviewer = Reviewer(miss_rate=0.03)
    optimized = optimized_policy(table, target, reviewer=reviewer)
    assert optimized.result.feasible and optimized.result.optimal
    point = Sweeper(table, optimized.policy, reviewer=reviewer).at(0.0)
    assert point["kieval_aligned"] >= target - 1e-12
    assert point["auto_rate"] == pytest.approx(optimized.result.auto_rate, abs=1e-12)
    single = operating_point(Sweeper(table, load_policy("confidence"), reviewer=reviewer).curve(), target)
    assert point["auto_rate"] >= single.auto_rate


def test_optimized_vqa_policy_by_question_type():
    table = evaluate_vqa(vqa_records(60))
    optimized = optimized_policy(table, 0.9)
    assert set(optimized.thresholds()) == set(table.question_types)
    point = Sweeper(table, optimized.policy).at(0.0)
    assert point["anls"] >= 0.9 - 1e-12


def test_unreachable_kie_target_is_infeasible():
    table = evaluate_kie(generate_receipts(50, seed=1))
    assert not optimized_policy(table, 0.9999).result.feasible

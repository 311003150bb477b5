"""One definition of an error per task (docs/errors.md): the cost model, certification, calibration and the
dashboard count the same rows; the optimizer's ANLS shortfall is another quantity."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.evaluate.metrics.calibration import is_correct, reliability_table
from rpa_sim.evaluate.outcomes import OutcomeTable, evaluate_kie, evaluate_vqa
from rpa_sim.records.models import VQARecord
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.route.certify import certify_policy, certify_threshold
from rpa_sim.route.costs import CostModel
from rpa_sim.route.per_field.policy import target_costs
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper
from rpa_sim.tui.model import DashboardModel


def _questions(rows: list[tuple[str, str, float]]):
    return evaluate_vqa([VQARecord.model_validate({"id": f"q{i}", "answers": [answer],
                                                   "prediction": {"answer": predicted, "confidence": confidence}})
                         for i, (answer, predicted, confidence) in enumerate(rows)])


def test_vqa_cost_by_hand():
    # ANLS (threshold 0.5): "abcd" vs "abcd" 1; vs "abce" 1 - 1/4 = 0.75; vs "abxy" 1 - 2/4 = 0.5;
    # vs "wxyz" NLS 0 -> 0; "hello" vs "xyz" NLS 0 -> 0. Errors (ANLS < 0.5): the last two only.
    table = _questions([("abcd", "abcd", 0.9), ("abcd", "abce", 0.7), ("abcd", "abxy", 0.5),
                        ("abcd", "wxyz", 0.3), ("hello", "xyz", 0.8)])
    assert table.anls.tolist() == [1.0, 0.75, 0.5, 0.0, 0.0]
    assert table.errors().tolist() == [False, False, False, True, True]
    reviewer = Reviewer(miss_rate=0.2, false_correction_rate=0.1)
    costs = CostModel(per_review=1.0, per_residual_error=10.0)
    sweeper = Sweeper(table, load_policy("confidence"), reviewer=reviewer, costs=costs)
    # Expected errors of a question: accepted, 1 if ANLS < 0.5 else 0; reviewed, f = 0.1 if its ANLS is 1
    # (a false correction breaks it), m = 0.2 if it is an error (missed), else 0 (fixed, or missed but
    # still at ANLS >= 0.5).
    # τ = 0.6 reviews confidences 0.3 and 0.5: errors 1 (0.8, accepted) + 0.2 (0.3, missed) + 0 (0.5);
    # cost = 2 reviews * 1 + 1.2 errors * 10 = 14.
    at = sweeper.at(0.6)
    assert at["reviewed"] == 2.0
    assert at["cost"] == pytest.approx(14.0, abs=1e-12)
    # τ = 0.95 reviews all five: errors 0.1 (ANLS 1) + 0 + 0 + 0.2 + 0.2 = 0.5; cost = 5 * 1 + 0.5 * 10 = 10.
    at = sweeper.at(0.95)
    assert at["reviewed"] == 5.0
    assert at["cost"] == pytest.approx(10.0, abs=1e-12)
    # Counted by accuracy (exact match) instead, four questions would be wrong at τ = 0: 40, not 20.
    assert sweeper.at(0.0)["cost"] == 20.0


def test_vqa_expected_errors_equal_monte_carlo_means():
    table = evaluate_vqa(generate_docvqa(120, seed=5))
    reviewer = Reviewer(miss_rate=0.3, false_correction_rate=0.1)
    sweeper = Sweeper(table, load_policy("audited-budget"), reviewer=reviewer,
                      costs=CostModel(per_residual_error=1.0))
    grid = np.array([0.0, 0.3, 0.6, 0.9, 1.1])
    expected = sweeper.curve(grid).columns["cost"]
    spread = sweeper.replicate(3000, seed=7, grid=grid)
    margin = 5 * spread.std["cost"] / np.sqrt(spread.replicates) + 1e-9
    assert np.all(np.abs(spread.mean["cost"] - expected) <= margin)


def _table(task: str) -> OutcomeTable:
    return evaluate_kie(generate_receipts(150, seed=6)) if task == "kie" else evaluate_vqa(generate_docvqa(200, seed=6))


@pytest.mark.parametrize("task", ["kie", "vqa"])
def test_certification_calibration_cost_and_dashboard_count_the_same_rows(task):
    table = _table(task)
    errors = table.errors()
    assert errors.dtype == bool and len(errors) == len(table) and 0 < errors.sum() < len(table)
    # the task's definition
    expected = table.outcome != 0 if task == "kie" else table.anls < 0.5
    assert np.array_equal(errors, expected)
    # calibration: right is not an error, and the reliability table's bins add up to the same errors
    assert np.array_equal(is_correct(table), ~errors)
    bins = reliability_table(table.confidence, is_correct(table))
    filled = bins.count > 0
    assert round(float(np.sum(bins.count[filled] * (1 - bins.accuracy[filled])))) == errors.sum()
    # cost: a perfect reviewer, only residual errors priced; KIE also counts the additions, which have no row
    sweeper = Sweeper(table, load_policy("confidence"), costs=CostModel(per_residual_error=1.0))
    missed = table.counts.additions if task == "kie" else 0
    assert sweeper.at(0.0)["cost"] == errors.sum() + missed
    # certification: the errors among the accepted items at the certified threshold are the cost's
    certified = certify_policy(sweeper, max_error=0.3, delta=0.2, calibration_fraction=1.0)
    threshold = certified.threshold
    assert threshold is not None
    accepted = table.confidence >= threshold
    assert certified.accepted_errors == errors[accepted].sum() and certified.accepted_n == accepted.sum()
    assert sweeper.at(threshold)["cost"] == pytest.approx(errors[accepted].sum() + missed, abs=1e-9)
    direct = certify_threshold(table.confidence, errors, max_error=0.3, delta=0.2, calibration_fraction=1.0,
                               groups=table.review_units)
    assert direct.threshold == threshold
    # the dashboard's per-field errors (KIE: by kind)
    model = DashboardModel.from_table(task, table, [load_policy("confidence")])
    rows = [row for row in model.field_rows(0, 0.5) if row.get("by", "key") in ("key", "question type")]
    counted = sum(row["substitutions"] + row["deletions"] if task == "kie" else row["errors"] for row in rows)
    assert counted == errors.sum()


def test_the_anls_shortfall_is_not_an_error_count():
    table = _questions([("abcd", "abcd", 0.9), ("abcd", "abce", 0.7), ("abcd", "wxyz", 0.3)])
    reviewer = Reviewer(miss_rate=0.2, false_correction_rate=0.1)
    shortfall, reviewed, budget = target_costs(table, 0.8, reviewer)
    # accepted: 1 - ANLS; reviewed: f when ANLS is 1, else m (1 - ANLS); budget: n (1 - target)
    assert shortfall.tolist() == [0.0, 0.25, 1.0]
    assert reviewed.tolist() == [0.1, pytest.approx(0.05), 0.2]
    assert budget == pytest.approx(0.6)
    # the question at ANLS 0.75 falls short of a perfect answer, yet it is right
    assert table.errors().tolist() == [False, False, True]

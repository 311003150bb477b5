"""Audit planning (issue 14): Neyman allocation over confidence bands, widths by hand, the plan file."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.operate.monitoring.audit_plan import AuditPlan, load_audit_plan
from rpa_sim.operate.monitoring.planning import (
    PRIOR_FLOOR,
    confidence_bands,
    exact_width,
    expected_width,
    neyman_allocation,
    plan_audit,
)
from rpa_sim.operate.monitoring.replay import Replayer
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.policies import load_policy

CONFIDENCE = load_policy("confidence")


@pytest.fixture(scope="module")
def receipts():
    return evaluate_kie(generate_receipts(300, seed=8))


def test_neyman_allocation_is_proportional_to_size_times_deviation():
    # weights 100 * 0.1 = 10, 200 * 0.3 = 60, 100 * 0.3 = 30: 100 audits split 10 / 60 / 30
    assert neyman_allocation(np.array([100, 200, 100]), np.array([0.1, 0.3, 0.3]), 100).tolist() == [10, 60, 30]


def test_neyman_allocation_rounds_by_largest_remainder_to_the_total():
    # shares 10 / 3 each: 3.33 -> 4, 3, 3 (ties go to the earlier stratum)
    assert neyman_allocation(np.array([50, 50, 50]), np.array([0.2, 0.2, 0.2]), 10).tolist() == [4, 3, 3]


def test_neyman_allocation_caps_a_stratum_at_its_size_and_shares_the_rest():
    # weights 5 and 10 give the first 16.7 of 50 audits, more than its 10 items: it takes 10, the other 40
    assert neyman_allocation(np.array([10, 1000]), np.array([0.5, 0.01]), 50).tolist() == [10, 40]
    assert neyman_allocation(np.array([10, 20]), np.array([0.5, 0.5]), 1000).tolist() == [10, 20]


def test_neyman_allocation_gives_every_stratum_one_audit_when_it_can():
    assert neyman_allocation(np.array([1000, 1000]), np.array([0.001, 0.5]), 50).tolist() == [1, 49]
    assert neyman_allocation(np.array([1000, 1000, 1000]), np.array([0.001, 0.001, 0.5]), 2).tolist() == [0, 0, 2]


def test_bands_hold_about_equal_shares_and_keep_ties_together():
    confidence = np.arange(1, 101) / 100  # 0.01 .. 1.00
    bands = confidence_bands(confidence, 4)
    assert [(b.at_least, b.below) for b in bands] == [(0.0, 0.26), (0.26, 0.51), (0.51, 0.76), (0.76, None)]
    sizes = [int(b.contains(confidence).sum()) for b in bands]
    assert sizes == [25, 25, 25, 25]
    tied = np.array([0.5] * 10 + [1.0] * 90)
    assert [str(b) for b in confidence_bands(tied, 4)] == ["[0, 1)", "[1, 1]"]
    assert [str(b) for b in confidence_bands(np.full(5, 0.7), 3)] == ["[0, 1]"]


def test_expected_width_is_cochrans_stratified_formula():
    sizes, priors, audits = np.array([300, 100]), np.array([0.1, 0.3]), np.array([30, 20])
    z = norm.ppf(0.975)
    variance = (0.75 ** 2 * 0.1 * 0.9 / 30 * (1 - 30 / 300)) + (0.25 ** 2 * 0.3 * 0.7 / 20 * (1 - 20 / 100))
    assert expected_width(sizes, priors, audits, confidence_level=0.95) == pytest.approx(2 * z * math.sqrt(variance))
    assert expected_width(sizes, priors, sizes, confidence_level=0.95) == 0.0  # everything audited
    assert expected_width(sizes, priors, np.array([30, 0]), confidence_level=0.95) == math.inf


def test_exact_width_is_the_bonferroni_clopper_pearson_width_at_the_expected_count():
    # two bands, no error expected in either: each upper bound solves (1 - p)^n = 0.05 / 4
    width = exact_width(np.array([100, 300]), np.array([0.0, 0.0]), np.array([10, 30]), confidence_level=0.95)
    assert width == pytest.approx(0.25 * (1 - 0.0125 ** (1 / 10)) + 0.75 * (1 - 0.0125 ** (1 / 30)))


def test_a_target_width_gets_the_fewest_audits_that_reach_it(receipts):
    planned = plan_audit(receipts, CONFIDENCE, threshold=0.9, target_width=0.06, bands=3)
    assert planned.expected_width <= 0.06
    # one audit fewer, allocated the same way, misses the target
    sizes = np.array([band.auto_accepted for band in planned.bands])
    priors = np.array([band.prior_error for band in planned.bands])
    deviations = np.sqrt(priors * (1 - priors))
    fewer = neyman_allocation(sizes, deviations, planned.audits - 1)
    assert expected_width(sizes, priors, fewer, confidence_level=0.95) > 0.06


def test_bands_priors_and_rates_come_from_the_accepted_confidences(receipts):
    planned = plan_audit(receipts, CONFIDENCE, threshold=0.9, budget=120, bands=3, cost_per_audit=2.5)
    accepted = receipts.confidence >= 0.9
    assert planned.auto_accepted == int(accepted.sum())
    assert sum(band.auto_accepted for band in planned.bands) == planned.auto_accepted
    for band in planned.bands:
        mine = accepted & band.band.contains(receipts.confidence)
        assert band.auto_accepted == int(mine.sum())
        assert band.prior_error == pytest.approx(max((1 - receipts.confidence[mine]).mean(), PRIOR_FLOOR))
        assert band.rate == band.audits / band.auto_accepted
    assert planned.audits == 120 and planned.cost == 300.0
    priors = np.array([band.prior_error for band in planned.bands])
    sizes = np.array([band.auto_accepted for band in planned.bands])
    overall = float(np.dot(sizes, priors) / sizes.sum())
    assert planned.uniform_width == pytest.approx(expected_width(
        np.array([planned.auto_accepted]), np.array([overall]), np.array([120]), confidence_level=0.95))
    assert planned.expected_width <= planned.uniform_width  # Neyman never does worse than a uniform audit


def test_the_plan_file_reads_back_and_replays_at_its_rates(receipts, tmp_path):
    planned = plan_audit(receipts, CONFIDENCE, threshold=0.9, budget=100, bands=3)
    path = tmp_path / "plan.yaml"
    path.write_text(planned.to_yaml())
    plan = load_audit_plan(path)
    assert plan == planned.audit_plan()
    assert plan.planned["audits"] == 100
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=plan)
    accepted = ~replayer.reviewed
    # the expected audits are the planned ones: rate * band size, summed
    assert replayer.inclusion_probability[accepted].sum() == pytest.approx(100)


def test_a_plan_file_with_a_bad_setting_names_its_line(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text("strata:\n- confidence: {below: 0.9}\n  rate: 1.5\n")
    with pytest.raises(InputError, match=r"plan.yaml: line 3: strata\[0\].rate: expected a number at most 1, got 1.5"):
        load_audit_plan(path)


def test_plan_strata_need_distinct_names():
    with pytest.raises(ValueError, match="strata need distinct names"):
        AuditPlan.model_validate({"strata": [{"name": "a", "rate": 0.1}, {"name": "a", "rate": 0.2}]})


def test_nothing_accepted_is_nothing_to_plan(receipts):
    with pytest.raises(InputError, match=r"auto-accepts nothing at threshold 1\.5: there is nothing to audit"):
        plan_audit(receipts, CONFIDENCE, threshold=1.5, budget=10)


@pytest.mark.parametrize("settings, message", [
    ({}, "exactly one of target_width and budget"),
    ({"budget": 5, "target_width": 0.1}, "exactly one of target_width and budget"),
    ({"target_width": 0.0}, "target_width must be in"),
    ({"budget": 5, "confidence_level": 1.0}, "confidence_level must be in"),
])
def test_plan_settings_are_checked(receipts, settings, message):
    with pytest.raises(ValueError, match=message):
        plan_audit(receipts, CONFIDENCE, threshold=0.9, **settings)

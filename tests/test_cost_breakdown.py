"""One cost function (issue 21): ``CostModel.breakdown`` prices every point; its parts sum to the total, the total is
the sweep's ``cost`` column at every threshold of every bundled policy (with and without staffing), and the summary's
cost optimum carries the split and the savings by kind."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.bundled import bundled_files
from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.operate.queue.summary import OperationModel, staffed_curve
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.route.costs import CostBasis, CostModel
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import Scenario

REVIEWER = Reviewer(seconds_per_item=7, seconds_per_document=20, miss_rate=0.05, false_correction_rate=0.01)
#: every price at work: review time by the hour, a fixed price per document, errors, rejections
TIMED = CostModel(hourly_rate=30.0, per_document=0.4, per_residual_error=2.5, per_rejected=0.7,
                  per_rejected_document=1.3, currency="EUR")
#: every price fixed
FIXED = CostModel(per_review=0.11, per_document=0.3, per_residual_error=1.5, per_rejected=0.2,
                  per_rejected_document=0.9)
OPERATIONS = OperationsSpec.model_validate({
    "arrivals": {"hourly": [0] * 8 + [40, 60, 60, 50, 30, 40, 50, 40, 20] + [0] * 7},
    "reviewers": {"count": 3}, "service_level": {"share": 0.9, "within_hours": 2}, "days": 1,
    "hourly_cost": 26.0})
PARTS = ("review_items", "review_documents", "staffing", "errors", "rejected_items", "rejected_documents")


@pytest.fixture(scope="module")
def tables():
    # document types, for the bundled policy that sets thresholds per type
    types = ("invoice", "phone-photo", "scan")
    receipts = [record.model_copy(update={"document_type": types[index % 3]})
                for index, record in enumerate(generate_receipts(150, seed=3))]
    return {"kie": evaluate_kie(receipts),
            "vqa": evaluate_vqa(generate_docvqa(150, seed=3))}


def _policies():
    return sorted(bundled_files("policy"))


def _legacy_cost(costs: CostModel, basis: CostBasis) -> np.ndarray:
    """The cost column as the sweep computed it before the breakdown, in the same order."""
    return (basis.reviewed * costs.review_price(REVIEWER) + basis.opened * costs.document_price(REVIEWER)
            + basis.residual_errors * costs.per_residual_error + basis.rejected * costs.per_rejected
            + basis.rejected_documents * costs.per_rejected_document)


def _check_sums(breakdown, cost: np.ndarray) -> None:
    parts = sum(getattr(breakdown, name) for name in PARTS)
    np.testing.assert_allclose(parts, breakdown.total, rtol=1e-12, atol=1e-9)
    assert np.array_equal(breakdown.total, cost)
    by_kind = breakdown.by_kind()
    np.testing.assert_allclose(by_kind["review"] + by_kind["staffing"] + by_kind["errors"] + by_kind["rejected"],
                               cost, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("task", ["kie", "vqa"])
@pytest.mark.parametrize("costs", [TIMED, FIXED], ids=["timed", "fixed"])
@pytest.mark.parametrize("name", _policies())
def test_parts_sum_to_the_total_and_the_total_is_the_cost_column(tables, task, costs, name):
    table = tables[task]
    try:
        sweeper = Sweeper(table, load_policy(name), reviewer=REVIEWER, costs=costs)
    except InputError:  # a receipts policy (document rules, receipt fields) on questions
        assert task == "vqa"
        pytest.skip("a receipts policy")
    curve = sweeper.curve("exact")
    breakdown = curve.breakdown
    _check_sums(breakdown, curve.columns["cost"])
    # the column keeps its bytes: the sum of the prices in the order the sweep always used
    assert np.array_equal(curve.columns["cost"], _legacy_cost(costs, curve.basis))
    np.testing.assert_array_equal(breakdown.review_items, curve.columns["reviewed"] * costs.review_price(REVIEWER))
    assert not np.any(breakdown.staffing)
    if "rejected" in curve.columns:
        np.testing.assert_array_equal(breakdown.rejected_items, curve.columns["rejected"] * costs.per_rejected)
    # a point query prices the same way
    middle = len(curve) // 2
    point = costs.breakdown(REVIEWER, curve.basis.at(middle))
    assert point == breakdown.at(middle)
    assert sweeper.at(float(curve.threshold[middle]))["cost"] == point.total


@pytest.mark.parametrize("costs", [TIMED, FIXED], ids=["timed", "fixed"])
@pytest.mark.parametrize("name", _policies())
def test_staffing_replaces_timed_review_and_keeps_the_parts_summing(tables, costs, name):
    table = tables["kie"]
    model = OperationModel(OPERATIONS, documents=table.unit_count, reviewer=REVIEWER, costs=costs)
    curve = Sweeper(table, load_policy(name), reviewer=REVIEWER, costs=costs).curve("linspace:0:1:21")
    staffed = staffed_curve(curve, model, costs, REVIEWER)
    breakdown = staffed.breakdown
    _check_sums(breakdown, staffed.columns["cost"])
    np.testing.assert_array_equal(breakdown.staffing, staffed.columns["staffing_cost"])
    # time priced by the hour is paid as staffing; a fixed price stays
    expected_items = 0.0 if costs.per_review is None else curve.basis.reviewed * costs.per_review
    np.testing.assert_array_equal(breakdown.review_items, expected_items * np.ones(len(curve)))
    np.testing.assert_array_equal(breakdown.review_documents, curve.basis.opened * costs.per_document)
    np.testing.assert_array_equal(breakdown.errors, curve.breakdown.errors)
    # the re-pricing as it was before the breakdown: the unstaffed cost less the timed review, plus staffing
    timed = (0.0 if costs.per_review is not None else costs.review_price(REVIEWER)) * curve.basis.reviewed
    assert np.array_equal(staffed.columns["cost"], curve.columns["cost"] - (timed + 0.0 * curve.basis.opened)
                          + staffed.columns["staffing_cost"])


def test_scalars_and_scaling():
    basis = CostBasis(reviewed=10.0, opened=4.0, residual_errors=3.0, rejected=2.0, rejected_documents=1.0)
    parts = TIMED.breakdown(REVIEWER, basis)
    assert parts.review_items == pytest.approx(10 * 30 * 7 / 3600) and parts.review_documents == pytest.approx(1.6)
    assert (parts.errors, parts.rejected_items, parts.rejected_documents, parts.staffing) == (7.5, 1.4, 1.3, 0.0)
    assert parts.total == pytest.approx(sum(getattr(parts, name) for name in PARTS), rel=1e-15)
    assert parts.currency == "EUR" and set(parts.by_kind()) == {"review", "staffing", "errors", "rejected", "total",
                                                                "currency"}
    double = TIMED.breakdown(REVIEWER, basis.scaled(2.0))
    assert double.total == pytest.approx(2 * parts.total, rel=1e-15)
    saved = double.minus(parts)
    assert saved.total == pytest.approx(parts.total, rel=1e-15) and saved.currency == "EUR"


BUNDLED_WITH_COSTS = ["receipts-demo", "cost-benefit", "operations-day"]


@pytest.mark.parametrize("name", BUNDLED_WITH_COSTS)
def test_the_summary_splits_the_cost_optimum_and_its_savings(name):
    from rpa_sim.study.scenario import load_scenario

    scenario, base = load_scenario(name)
    # a smaller sample of the same scenario: the same code paths, in a fraction of the time
    scenario = Scenario.model_validate({**scenario.model_dump(exclude_unset=True),
                                        "data": {**scenario.data.model_dump(exclude_unset=True), "n": 300}})
    result = run_scenario(scenario, base)
    review_all = result.summary.to_dict()["baselines"]["review_all"]
    for policy, curve in zip(result.summary.to_dict()["policies"], result.curves):
        best = policy["cost_optimum"]
        index = int(np.flatnonzero(curve.threshold == best["threshold"])[0])
        assert best["breakdown"] == {**curve.breakdown.at(index).by_kind()}
        assert best["breakdown"]["total"] == best["cost"] == curve.columns["cost"][index]
        split = best["savings_by_kind"]
        assert set(split) == {"review", "staffing", "errors", "rejected"}
        assert sum(split.values()) == pytest.approx(best["savings_vs_review_all"], rel=1e-9, abs=1e-6)
        assert best["reviews_saved"] == review_all["reviewed"] - best["reviewed"]
        if name == "operations-day":
            assert best["breakdown"]["staffing"] > 0 and best["breakdown"]["review"] == 0.0

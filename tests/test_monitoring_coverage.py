"""Coverage measured over replayed days (issue 14): the intervals against the truth rpa-sim knows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rpa_sim.evaluate.outcomes import evaluate_kie
from rpa_sim.operate.monitoring.coverage import coverage_markdown, measure_coverage
from rpa_sim.operate.monitoring.estimators import estimate
from rpa_sim.operate.monitoring.planning import plan_audit
from rpa_sim.operate.monitoring.replay import Replayer
from rpa_sim.records.synthetic import generate_receipts
from rpa_sim.route.policies import load_policy
from rpa_sim.route.reviewer import Reviewer

CONFIDENCE = load_policy("confidence")
DAYS = 150


@pytest.fixture(scope="module")
def receipts():
    return evaluate_kie(generate_receipts(400, seed=21))


@pytest.fixture(scope="module")
def uniform_rows(receipts):
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=0.05)
    reviewers = {"perfect": Reviewer(), "missing": Reviewer(miss_rate=0.3, false_correction_rate=0.02)}
    return replayer, measure_coverage(replayer, days=DAYS, seed=100, reviewers=reviewers)


def test_each_row_is_what_the_days_give(receipts, uniform_rows):
    replayer, rows = uniform_rows
    truth = float(receipts.errors()[receipts.confidence >= 0.9].mean())
    first = rows[0]
    assert (first.reviewer, first.method, first.days, first.truth) == ("perfect", "classical", DAYS, truth)
    covered, widths, biases = [], [], []
    for day_index in range(DAYS):
        interval = estimate(replayer.day(seed=100 + day_index).log, method="classical").auto_error
        covered.append(interval.low <= truth <= interval.high)
        widths.append(interval.high - interval.low)
        biases.append(interval.estimate - truth)
    assert first.coverage == np.mean(covered)
    assert first.coverage_error == pytest.approx(math.sqrt(first.coverage * (1 - first.coverage) / DAYS))
    assert first.mean_width == pytest.approx(np.mean(widths))
    assert first.bias == pytest.approx(np.mean(biases))


def test_intervals_cover_near_their_nominal_level(uniform_rows):
    _, rows = uniform_rows
    for row in rows:
        # a 95% interval's coverage within four Monte Carlo standard errors of 0.95 (or above it: exact ones are
        # conservative)
        assert row.coverage >= 0.95 - 4 * math.sqrt(0.95 * 0.05 / DAYS), row
        assert abs(row.bias) < 0.01, row


def test_the_naive_figure_is_biased_and_a_missing_reviewer_lowers_it(uniform_rows):
    _, rows = uniform_rows
    perfect = next(row for row in rows if row.reviewer == "perfect")
    missing = next(row for row in rows if row.reviewer == "missing")
    # reviewed items are the unsure ones: far more errors than among accepted ones
    assert perfect.naive_bias > 0.2
    # a reviewer who misses 30% of the errors reports fewer (false corrections add a few)
    assert missing.naive_bias < perfect.naive_bias


def test_reviewer_errors_break_the_quality_interval_not_the_error_rates(uniform_rows):
    _, rows = uniform_rows
    perfect = {row.method: row for row in rows if row.reviewer == "perfect"}
    missing = {row.method: row for row in rows if row.reviewer == "missing"}
    for method in perfect:
        assert missing[method].coverage == perfect[method].coverage  # audits are careful: the same draws
        assert perfect[method].quality_coverage == perfect[method].coverage  # with a perfect reviewer, the same
        assert missing[method].quality_coverage < perfect[method].quality_coverage


def test_ppi_intervals_are_narrower_than_classical_on_generated_receipts(uniform_rows):
    _, rows = uniform_rows
    widths = {row.method: row.mean_width for row in rows if row.reviewer == "perfect"}
    assert widths["ppi"] < widths["classical"]


def test_a_neyman_plan_with_stratified_and_ppi(receipts):
    planned = plan_audit(receipts, CONFIDENCE, threshold=0.9, budget=300, bands=3)
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=planned.audit_plan())
    rows = measure_coverage(replayer, days=60, seed=0, methods=("stratified", "ppi"))
    stratified, ppi = rows
    assert stratified.coverage >= 0.95  # exact per band and Bonferroni: conservative
    assert ppi.mean_width < stratified.mean_width


def test_the_markdown_table_has_a_row_per_reviewer_and_method(uniform_rows):
    _, rows = uniform_rows
    lines = coverage_markdown(rows).splitlines()
    assert len(lines) == 2 + len(rows) == 8
    assert lines[2].startswith("| perfect | classical | ")


def test_settings_are_checked(receipts):
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=0.05)
    with pytest.raises(ValueError, match="days must be at least 1, got 0"):
        measure_coverage(replayer, days=0, seed=0)
    with pytest.raises(ValueError, match="methods must name at least one method"):
        measure_coverage(replayer, days=1, seed=0, methods=())
    everything = Replayer(receipts, CONFIDENCE, threshold=1.5)
    with pytest.raises(ValueError, match="the policy reviews every item"):
        measure_coverage(everything, days=1, seed=0)

"""Replaying production days (issue 14): routes, audits and what people find, against the outcome table."""

from __future__ import annotations

import numpy as np
import pytest

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.operate.monitoring.log import AUDIT, AUTO, REVIEW, UNCHECKED
from rpa_sim.operate.monitoring.replay import Replayer, reviewed_items
from rpa_sim.records.synthetic import generate_docvqa, generate_receipts
from rpa_sim.route.policies import Policy, load_policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper

CONFIDENCE = load_policy("confidence")


@pytest.fixture(scope="module")
def receipts():
    return evaluate_kie(generate_receipts(300, seed=5))


@pytest.fixture(scope="module")
def questions():
    return evaluate_vqa(generate_docvqa(400, seed=5))


def test_routes_are_the_thresholds_and_audits_only_accepted_rows(receipts):
    day = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=0.1).day(seed=1)
    route = day.log.route
    below = receipts.confidence < 0.9
    assert np.array_equal(route == REVIEW, below)
    assert set(route[~below].tolist()) == {AUTO, AUDIT}
    assert np.all(day.log.inclusion_probability[below] == 1.0)
    assert np.all(day.log.inclusion_probability[~below] == 0.1)
    # 0.1 of the accepted rows in expectation: within four binomial standard errors
    accepted = int((~below).sum())
    assert abs(int((route == AUDIT).sum()) - 0.1 * accepted) < 4 * np.sqrt(accepted * 0.1 * 0.9)


def test_audits_label_exactly_and_nobody_labels_auto_rows(receipts):
    day = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=0.3).day(
        seed=2, reviewer=Reviewer(miss_rate=0.5, false_correction_rate=0.5))
    audited, auto = day.log.route == AUDIT, day.log.route == AUTO
    assert np.array_equal(day.log.correct[audited], (~receipts.errors()[audited]).astype(np.int8))
    assert np.all(day.log.correct[auto] == UNCHECKED)
    assert all(value is None for value in day.log.corrected_value[~(day.log.route == REVIEW)])


def test_a_perfect_reviewer_reports_the_truth_and_writes_the_corrections(receipts):
    day = Replayer(receipts, CONFIDENCE, threshold=0.9).day(seed=3)
    reviewed = day.log.route == REVIEW
    assert np.array_equal(day.log.correct[reviewed], (~receipts.errors()[reviewed]).astype(np.int8))
    corrected = day.log.corrected_value
    substitution, deletion = reviewed & (receipts.outcome == 1), reviewed & (receipts.outcome == 2)
    assert corrected[substitution].tolist() == receipts.correction[substitution].tolist()
    assert set(corrected[deletion].tolist()) == {""}  # a deleted value is removed
    assert all(value is None for value in corrected[reviewed & (receipts.outcome == 0)])
    assert day.log.id.tolist() == receipts.document_ids[receipts.document].tolist()
    assert day.log.key.tolist() == [receipts.keys[code] for code in receipts.key.tolist()]
    # nothing is wrong after a perfect review: the output's errors are the accepted ones
    assert day.errors_after.sum() == receipts.errors()[~reviewed].sum()
    assert day.quality == 1 - receipts.errors()[~reviewed].sum() / len(receipts)


def test_a_reviewer_who_misses_everything_reports_every_error_as_correct(receipts):
    day = Replayer(receipts, CONFIDENCE, threshold=0.9).day(seed=4, reviewer=Reviewer(miss_rate=1.0))
    reviewed = day.log.route == REVIEW
    assert np.all(day.log.correct[reviewed] == 1)
    assert all(value is None for value in day.log.corrected_value[reviewed])
    assert day.errors_after.sum() == receipts.errors().sum()


def test_a_reviewer_who_breaks_everything_reports_every_correct_value_wrong(receipts):
    day = Replayer(receipts, CONFIDENCE, threshold=0.9).day(seed=4, reviewer=Reviewer(false_correction_rate=1.0))
    reviewed = day.log.route == REVIEW
    assert np.all(day.log.correct[reviewed] == 0)
    right = reviewed & ~receipts.errors()
    assert all(value is None for value in day.log.corrected_value[right])  # what they wrote is unknown
    assert np.array_equal(day.errors_after, np.where(reviewed, ~receipts.errors(), receipts.errors()))


def test_reviewer_rates_are_drawn_at_their_frequency(receipts):
    day = Replayer(receipts, CONFIDENCE, threshold=0.95).day(
        seed=5, reviewer=Reviewer(miss_rate=0.3, false_correction_rate=0.1))
    reviewed = day.log.route == REVIEW
    errors = receipts.errors()
    for rows, reported_correct, rate in ((reviewed & errors, 1, 0.3), (reviewed & ~errors, 0, 0.1)):
        count = int(rows.sum())
        hits = int((day.log.correct[rows] == reported_correct).sum())
        assert abs(hits - rate * count) < 4 * np.sqrt(count * rate * (1 - rate)), (rate, hits, count)


def test_days_average_to_the_sweepers_expected_residual_errors(receipts):
    # the Sweeper's expectation is computed another way (replay terms summed in entry order)
    reviewer = Reviewer(miss_rate=0.2, false_correction_rate=0.05)
    point = Sweeper(receipts, CONFIDENCE, reviewer=reviewer).at(0.9)
    expected = point["residual_substitutions"] + point["residual_deletions"]
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9)
    drawn = np.array([replayer.day(seed=seed, reviewer=reviewer).errors_after.sum() for seed in range(200)])
    assert abs(drawn.mean() - expected) < 4 * drawn.std(ddof=1) / np.sqrt(len(drawn))


def test_the_same_seed_gives_the_same_day_and_another_seed_another(receipts):
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=0.2)
    reviewer = Reviewer(miss_rate=0.2, false_correction_rate=0.1)
    one, again, other = (replayer.day(seed=seed, reviewer=reviewer).log for seed in (8, 8, 9))
    assert np.array_equal(one.route, again.route) and np.array_equal(one.correct, again.correct)
    assert one.corrected_value.tolist() == again.corrected_value.tolist()
    assert not np.array_equal(one.route, other.route)


def test_the_policys_own_audit_share_is_the_default_rate(receipts):
    audited = load_policy("audited-budget")
    replayer = Replayer(receipts, audited, threshold=0.9)
    accepted = ~replayer.reviewed
    assert np.all(replayer.inclusion_probability[accepted] == audited.audit)
    assert np.all(Replayer(receipts, audited, threshold=0.9, audit=0.0).inclusion_probability[accepted] == 0.0)


def test_a_budget_caps_the_reviews_least_confident_first(receipts):
    policy = load_policy("audited-budget")  # at most 25% of the items
    reviewed = reviewed_items(receipts, policy, threshold=0.99)
    limit = int(np.floor(0.25 * len(receipts) + 1e-9))
    assert (receipts.confidence < 0.99).sum() > limit
    assert reviewed.sum() == limit
    assert receipts.confidence[reviewed].max() <= receipts.confidence[~reviewed].min()


def test_document_escalation_reviews_whole_documents(receipts):
    reviewed = reviewed_items(receipts, load_policy("document-escalation"), threshold=0.8)
    touched = np.unique(receipts.document[receipts.confidence < 0.8])
    assert np.array_equal(reviewed, np.isin(receipts.document, touched))


def test_vqa_reviews_write_the_answer_and_count_near_misses_right(questions):
    day = Replayer(questions, CONFIDENCE, threshold=1.5).day(seed=1)  # above every confidence: all reviewed
    reviewed = day.log.route == REVIEW
    assert reviewed.all()
    near = reviewed & (questions.anls >= 0.5) & (questions.anls < 1)
    assert near.any()
    assert np.all(day.log.correct[near] == 1)  # right by the error definition, yet polished to the answer
    changed = reviewed & (questions.anls < 1)
    assert day.log.corrected_value[changed].tolist() == questions.answer[changed].tolist()
    assert day.log.id.tolist() == questions.question_ids.tolist()
    assert np.array_equal(day.log.correct[reviewed], (questions.anls[reviewed] >= 0.5).astype(np.int8))


def test_an_audit_plan_gives_each_accepted_row_its_strata_rate(receipts):
    plan = AuditPlan.model_validate({"strata": [
        {"name": "unsure", "confidence": {"below": 0.97}, "rate": 0.5},
        {"fields": ["total.total_price"], "rate": 0.25}], "rest_rate": 0.05})
    replayer = Replayer(receipts, CONFIDENCE, threshold=0.9, audit=plan)
    accepted = ~replayer.reviewed
    unsure = accepted & (receipts.confidence < 0.97)
    total = accepted & ~unsure & (receipts.key == receipts.keys.index("total.total_price"))
    rest = accepted & ~unsure & ~total
    for rows, name, rate in ((unsure, "unsure", 0.5), (total, "fields total.total_price", 0.25), (rest, "rest", 0.05)):
        assert rows.any()
        assert set(replayer.stratum[rows].tolist()) == {name}
        assert np.all(replayer.inclusion_probability[rows] == rate)
    assert all(name is None for name in replayer.stratum[replayer.reviewed])


def test_a_plan_naming_an_unknown_field_is_refused(receipts):
    plan = AuditPlan.model_validate({"strata": [{"fields": ["totl"], "rate": 0.5}]})
    with pytest.raises(InputError, match=r"audit plan stratum 'fields totl' names 'totl', which no item has"):
        Replayer(receipts, CONFIDENCE, threshold=0.9, audit=plan)


def test_thresholds_must_be_finite(receipts):
    with pytest.raises(ValueError, match="threshold must be a finite number, got nan"):
        Replayer(receipts, Policy.model_validate({"name": "p", "review_if": {"confidence": "sweep"}}),
                 threshold=float("nan"))

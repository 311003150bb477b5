"""The parts of ``rpa-sim watch`` (issue 28): tallies, the calibration and its detector, proposals, staffing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta

from rpa_sim.operate.live.calibration import (
    CALIBRATION_ALTERNATIVES,
    GROUP_ERRORS,
    GROUP_ROWS,
    calibration_log_factors,
    fit_calibration,
    non_increasing,
    predicted_error,
)
from rpa_sim.operate.live.calibration import tolerance as tolerance_of
from rpa_sim.operate.live.proposals import DayVolume, audits_to_settle, propose, with_reviewers
from rpa_sim.operate.live.tally import THRESHOLDS, Tally, band_of
from rpa_sim.operate.live.watch import room
from rpa_sim.route.certify import minimum_accepted


def rows(confidence, route, correct, inclusion):
    return Tally.of(route=np.asarray(route), inclusion=np.asarray(inclusion, dtype=float),
                    correct=np.asarray(correct), confidence=np.asarray(confidence, dtype=float))


# --------------------------------------------------------------------------- tallies


def test_tallies_add_across_audit_plans_and_keep_reviewed_rows_alone():
    reviewed_only = rows([0.5, 0.6], [1, 1], [0, 1], [1, 1])
    audited = rows([0.99, 0.99], [2, 0], [0, -1], [0.2, 0.2])
    other_plan = rows([0.95], [2], [1], [0.5])
    total = reviewed_only + audited + other_plan
    assert total.reviewed_rows == 2 and total.auto_accepted == 3 and total.audited_rows == 2
    assert total.rates.tolist() == [0.2, 0.5] and total.strata()[1].tolist() == [2, 1]
    assert (audited + reviewed_only).reviewed_rows == 2  # a tally without auto-accepted rows is not dropped
    assert total.horvitz_thompson() == 1.0  # (1 / 0.2) / 3 rows, capped at 1
    assert (audited + rows([0.99] * 7, [0] * 7, [-1] * 7, [0.2] * 7)).horvitz_thompson() == pytest.approx(5 / 9)
    assert rows([np.nan], [0], [-1], [0.0]).never_audited == 1
    assert band_of(np.array([THRESHOLDS[-2], 1.0])).tolist() == [len(THRESHOLDS) - 2, len(THRESHOLDS) - 1]


# --------------------------------------------------------------------------- the calibration


@settings(deadline=None)  # the first example imports scikit-learn
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0.01, 100)), min_size=1, max_size=30))
def test_the_non_increasing_fit_is_scikit_learns_isotonic_regression(points):
    isotonic = pytest.importorskip("sklearn.isotonic", reason="scikit-learn is the oracle (ppi_python brings it)")
    values, weights = np.array(points).T
    expected = isotonic.IsotonicRegression(increasing=False).fit_transform(np.arange(len(values)), values,
                                                                          sample_weight=weights)
    assert np.allclose(non_increasing(values, weights), expected, atol=1e-9)


def test_the_calibration_groups_bands_weighs_audits_by_their_rate_and_never_promises_zero():
    # 100 reviewed rows at 0.8 (20 wrong); 60 audits at 0.95 drawn at 0.5 (3 wrong); 60 at 0.999 drawn at 0.1
    reference = (rows([0.8] * 100, [1] * 100, [0] * 20 + [1] * 80, [1] * 100)
                 + rows([0.95] * 60, [2] * 60, [0] * 3 + [1] * 57, [0.5] * 60)
                 + rows([0.999] * 60, [2] * 60, [1] * 60, [0.1] * 60))
    f = fit_calibration(reference)
    at = {c: float(f[band_of(np.array([c]))[0]]) for c in (0.5, 0.8, 0.95, 0.999, 1.0)}
    assert at[0.8] == pytest.approx(0.2) and at[0.5] == at[0.8]  # a band below takes the nearest checked group
    # 0.999 found no error: it joins 0.95 until the group holds two errors, (3 x 2) / (60 x 10 + 60 x 2)
    assert at[0.95] == at[0.999] == at[1.0] == pytest.approx(6 / 720)
    assert np.isnan(f[-1]) and (GROUP_ROWS, GROUP_ERRORS) == (50, 2)
    # a reference without an error is not promised perfect: half an error in one more row of its weight
    flawless = fit_calibration(rows([0.99] * 60, [2] * 60, [1] * 60, [0.1] * 60))
    assert flawless[band_of(np.array([0.99]))[0]] == pytest.approx(0.5 * 10 / (600 + 10))
    day = rows([0.999, 0.95, 0.95, 0.5], [0, 0, 2, 1], [-1, -1, 1, 0], [0.1, 0.5, 0.5, 1])
    assert predicted_error(day, f) == pytest.approx((at[0.999] + 2 * at[0.95]) / 3)
    assert predicted_error(rows([np.nan], [0], [-1], [0.1]), f) is None


def test_the_calibration_detector_is_the_likelihood_ratio_of_each_audited_row():
    f = fit_calibration(rows([0.97] * 50 + [0.8] * 50, [2] * 50 + [1] * 50, [0] * 5 + [1] * 45 + [0] * 25 + [1] * 25,
                             [0.25] * 50 + [1] * 50))
    day = rows([0.97, 0.97, 0.97, 0.8], [2, 2, 0, 1], [0, 1, -1, 0], [0.25, 0.25, 0.25, 1])
    p = float(f[band_of(np.array([0.97]))[0]])
    for tolerance in (0.0, 0.5):
        # more errors than predicted is tested against f (1 + t), fewer against f (1 - t)
        null = p * np.where(CALIBRATION_ALTERNATIVES > 1, 1 + tolerance, 1 - tolerance)
        q = 1 - (1 - null) ** CALIBRATION_ALTERNATIVES
        assert np.allclose(np.exp(calibration_log_factors(day, f, tolerance=tolerance)),
                           (q / null) * ((1 - q) / (1 - null)))
    assert tolerance_of(rows([0.97] * 100, [2] * 100, [0] * 16 + [1] * 84, [0.25] * 100)) == 0.5  # 2 / sqrt(16)
    assert tolerance_of(rows([0.97], [2], [1], [0.25])) == 0.9  # no error: at most 0.9


# --------------------------------------------------------------------------- proposals


def test_a_proposal_walks_from_the_strictest_threshold_and_stops_at_the_first_failure():
    # fully reviewed rows: the bound at a candidate is the exact error rate above it
    confidence = [0.999] * 300 + [0.97] * 300 + [0.93] * 300 + [0.7] * 300
    wrong = [0] * 3 + [1] * 297 + [0] * 6 + [1] * 294 + [0] * 60 + [1] * 240 + [0] * 3 + [1] * 297
    proposal = propose(rows(confidence, [1] * 1200, wrong, [1] * 1200), days=3, max_error=0.03, delta=0.05)
    # at 0.94 the 600 rows above hold 9 errors (1.5%); at 0.93 the 900 hold 69 (7.7%): the walk stops there,
    # although 0.7 would again be under 3% on its own
    assert proposal.threshold == 0.94 and proposal.upper_bound == pytest.approx(9 / 600)
    assert proposal.reviews_per_day == pytest.approx(600 / 3) and proposal.change_in_reviews_per_day == -200
    assert proposal.checked == 600


def test_a_proposal_bounds_audited_rows_by_clopper_pearson_at_delta_over_the_strata():
    # 200 rows at 0.99 auto-accepted, 100 audited at 0.5 (1 error); 100 at 0.9 audited at 0.25 (0 errors)
    top = rows([0.99] * 200, [2] * 100 + [0] * 100, [0] + [1] * 99 + [-1] * 100, [0.5] * 200)
    low = rows([0.9] * 100, [2] * 25 + [0] * 75, [1] * 25 + [-1] * 75, [0.25] * 100)
    proposal = propose(top + low, days=1, max_error=0.05, delta=0.05)
    at_99 = beta.isf(0.05, 2, 99)  # one stratum above 0.99
    assert at_99 < 0.05
    expected_90 = (200 * beta.isf(0.025, 2, 99) + 100 * beta.isf(0.025, 1, 25)) / 300  # Bonferroni over two
    assert expected_90 > 0.05
    assert proposal.threshold == 0.91 and proposal.upper_bound == pytest.approx(at_99)


def test_when_audits_are_too_few_the_proposal_is_an_audit_that_settles_it():
    window = rows([0.99] * 100, [2] * 10 + [0] * 90, [1] * 10 + [-1] * 90, [0.1] * 100)
    proposal = propose(window, days=5, max_error=0.03, delta=0.05, estimate=0.0)
    needed = minimum_accepted(0.03, 0.05)
    assert proposal.threshold is None and proposal.audit_rate == pytest.approx(needed / (14 * 20))
    assert proposal.audit_days == 14 and "too few audits" in proposal.reason
    many = propose(window, days=5, max_error=0.03, delta=0.05, estimate=0.02)
    assert many.audit_rate == 1.0 and many.audit_days == math.ceil(audits_to_settle(0.02, max_error=0.03,
                                                                                     delta=0.05) / 20)
    assert "review every row" in propose(window, days=5, max_error=0.03, delta=0.05, estimate=0.04).reason
    assert "no confidence" in propose(rows([np.nan], [1], [1], [1]), days=1, max_error=0.03, delta=0.05).reason


def test_room_to_automate_needs_reviews_saved():
    calm = rows([0.999] * 400 + [0.95] * 400, [2] * 400 + [1] * 400, [1] * 800, [1.0] * 400 + [1.0] * 400)
    proposal = room(calm, days=4, max_error=0.03, delta=0.05)
    assert proposal is not None and proposal.threshold <= 0.95 and proposal.change_in_reviews_per_day == -100
    assert room(rows([0.999] * 400, [2] * 400, [1] * 400, [1.0] * 400), days=4, max_error=0.03, delta=0.05) is None


def test_the_reviewers_a_proposal_takes_come_from_the_queue_model():
    from rpa_sim.operate.queue.spec import OperationsSpec
    from rpa_sim.operate.queue.summary import OperationModel, Workload

    spec = OperationsSpec.model_validate({"arrivals": {"per_hour": 100}, "reviewers": {"count": 3},
                                          "handling": {"per_item": {"kind": "deterministic", "mean_seconds": 30}},
                                          "service_level": {"share": 0.9, "within_hours": 1}, "days": 1})
    model = OperationModel(spec, documents=1)
    window = rows([0.999] * 300 + [0.93] * 300, [2] * 600, [1] * 300 + [0] * 30 + [1] * 270, [1.0] * 600)
    proposal = propose(window, days=1, max_error=0.03, delta=0.05)
    volume = DayVolume(units=2400, reviewed=400, documents=480, opened=200)
    staffed = with_reviewers(proposal, model, volume)
    extra = proposal.change_in_reviews_per_day
    assert extra == 300
    assert staffed.reviewers_now == max(model.scheduled_needed(Workload(opened=200, reviewed=400, documents=480)))
    assert staffed.reviewers_needed == max(model.scheduled_needed(Workload(opened=480, reviewed=700,
                                                                           documents=480)))
    assert staffed.reviewers_needed > staffed.reviewers_now


def test_a_calm_segment_gets_one_room_to_automate_notice_in_four_weeks():
    from rpa_sim.operate.live.watch import CALM_DAYS, NOTICE_EVERY, Watcher, WatchSettings

    day = rows([0.8] * 100 + [0.95] * 200, [1] * 100 + [2] * 100 + [0] * 100, [1] * 200 + [-1] * 100,
               [1.0] * 100 + [0.5] * 200)
    watcher = Watcher(WatchSettings(max_error=0.05))
    for index in range(NOTICE_EVERY + 10):
        watcher.add_day(f"2024-{1 + index // 28:02d}-{1 + index % 28:02d}", {(("document_type", "calm"),): day})
    result = watcher.result()
    notices = [alarm for alarm in result.alarms if alarm.kind == "room_to_automate"]
    days = result.segments[0].days
    first_calm = next(i for i, figures in enumerate(days) if figures.high is not None and figures.high <= 0.025)
    assert [alarm.day for alarm in notices] == [days[first_calm + CALM_DAYS - 1].day,
                                                days[first_calm + CALM_DAYS - 1 + NOTICE_EVERY].day]
    assert notices[0].proposal.threshold < 0.9 and notices[0].proposal.change_in_reviews_per_day <= -1
    assert result.segments[0].first_alarm is None and result.segments[0].proposal == notices[-1].proposal

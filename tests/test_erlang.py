"""Erlang C and Erlang A (issue 12): the published worked example, independent computations of every figure
(scipy's Poisson law, the chain solved as a linear system, the tagged task's chain through a matrix exponential,
the incomplete-gamma closed form), the truncation of the Erlang A chain, the limit of Erlang A as patience grows,
thousands of reviewers, overload, and input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.special import gammainc, gammaln
from scipy.stats import poisson

from rpa_sim.operate.queue import erlang
from rpa_sim.operate.queue.erlang import (
    TAIL_TOLERANCE,
    erlang_a,
    erlang_a_chain,
    erlang_b,
    erlang_c,
    queue_figures,
)

EXAMPLE = {"arrivals_per_hour": 200, "handle_seconds": 180, "answer_within_seconds": 20}


# --------------------------------------------------------------------------- the worked example


def test_worked_example_with_14_reviewers():
    figures = erlang_c(**EXAMPLE, reviewers=14)
    assert figures.offered_load == pytest.approx(10.0, rel=1e-15)
    assert round(figures.p_wait, 6) == 0.174132
    assert round(figures.service_level, 6) == 0.888350
    assert round(figures.mean_wait_seconds, 3) == 7.836
    assert round(figures.occupancy, 4) == 0.7143
    assert (figures.method, figures.stable, figures.p_abandon, figures.note) == ("erlang-c", True, 0.0, None)


def test_worked_example_with_13_reviewers_misses_80_percent():
    assert round(erlang_c(**EXAMPLE, reviewers=13).service_level, 4) == 0.7956


def naive_erlang_c(load, reviewers, handle, within):
    """Erlang C straight from its textbook formula, in plain floats (fine for small teams)."""
    top = load ** reviewers / math.factorial(reviewers) * reviewers / (reviewers - load)
    p_wait = top / (sum(load ** k / math.factorial(k) for k in range(reviewers)) + top)
    return p_wait, 1 - p_wait * math.exp(-(reviewers - load) * within / handle), p_wait * handle / (reviewers - load)


@pytest.mark.parametrize(("per_hour", "handle", "reviewers", "within"),
                         [(200, 180, 11, 20), (30, 600, 6, 0), (1, 3600, 2, 3600), (500, 36, 6, 5)])
def test_erlang_c_matches_the_textbook_formula(per_hour, handle, reviewers, within):
    figures = erlang_c(arrivals_per_hour=per_hour, handle_seconds=handle, reviewers=reviewers,
                       answer_within_seconds=within)
    expected = naive_erlang_c(per_hour * handle / 3600, reviewers, handle, within)
    assert (figures.p_wait, figures.service_level, figures.mean_wait_seconds) == pytest.approx(expected, rel=1e-12)
    assert figures.mean_queue_length == pytest.approx(per_hour / 3600 * figures.mean_wait_seconds, rel=1e-15)


@pytest.mark.parametrize(("load", "reviewers"), [(10.0, 14), (0.5, 1), (99.0, 80), (2950.0, 3000), (10.0, 400)])
def test_erlang_b_matches_the_poisson_ratio(load, reviewers):
    expected = math.exp(poisson.logpmf(reviewers, load) - poisson.logcdf(reviewers, load))
    assert erlang_b(load=load, reviewers=reviewers) == pytest.approx(expected, rel=1e-11)


# --------------------------------------------------------------------------- thousands of reviewers


def test_thousands_of_reviewers_match_scipy():
    load, reviewers, handle = 4900.0, 5000, 180.0
    figures = erlang_c(arrivals_per_hour=load / handle * 3600, handle_seconds=handle, reviewers=reviewers,
                       answer_within_seconds=20)
    b = math.exp(poisson.logpmf(reviewers, load) - poisson.logcdf(reviewers, load))
    rho = load / reviewers
    p_wait = b / (1 - rho + rho * b)
    assert figures.p_wait == pytest.approx(p_wait, rel=1e-9)
    assert figures.service_level == pytest.approx(1 - p_wait * math.exp(-(reviewers - load) * 20 / handle), rel=1e-12)


def test_a_huge_team_for_a_small_load_neither_overflows_nor_underflows():
    figures = erlang_c(arrivals_per_hour=200, handle_seconds=180, reviewers=20_000, answer_within_seconds=20)
    assert (figures.p_wait, figures.service_level, figures.mean_wait_seconds) == (0.0, 1.0, 0.0)
    patient = erlang_a(arrivals_per_hour=200, handle_seconds=180, reviewers=20_000, answer_within_seconds=20,
                       patience_seconds=60)
    assert (patient.p_wait, patient.service_level, patient.p_abandon) == (0.0, 1.0, 0.0)
    assert patient.occupancy == pytest.approx(10 / 20_000, rel=1e-15)


def test_erlang_a_with_thousands_of_reviewers_approaches_erlang_c():
    arguments = {"arrivals_per_hour": 4900 / 180 * 3600, "handle_seconds": 180, "reviewers": 5000,
                 "answer_within_seconds": 20}
    patient, impatient = erlang_a(**arguments, patience_seconds=1e9), erlang_c(**arguments)
    assert patient.p_wait == pytest.approx(impatient.p_wait, rel=1e-6)
    assert patient.service_level == pytest.approx(impatient.service_level, rel=1e-6)


# --------------------------------------------------------------------------- Erlang A, independently


def chain_by_linear_algebra(rate, handle, reviewers, patience, states):
    """The stationary law of the chain on 0..states-1, by solving pi Q = 0 (sum 1) as a linear system."""
    up = np.full(states - 1, rate)
    n = np.arange(1, states)
    down = np.minimum(n, reviewers) / handle + np.maximum(n - reviewers, 0) / patience
    generator = np.diag(up, 1) + np.diag(down, -1)
    generator -= np.diag(generator.sum(axis=1))
    system = generator.T.copy()
    system[-1] = 1.0
    rhs = np.zeros(states)
    rhs[-1] = 1.0
    return np.linalg.solve(system, rhs)


def tagged_task(handle, reviewers, patience, ahead, within):
    """For a task finding ``m`` queued ahead (m = 0..ahead): P(reviewed within T), P(reviewed), E[wait; reviewed],
    from its own absorbing chain: matrix exponential and fundamental matrix."""
    all_busy, theta = reviewers / handle, 1 / patience
    size = ahead + 1  # states k = tasks ahead, then "reviewed", then "abandoned"
    generator = np.zeros((size + 2, size + 2))
    for k in range(size):
        generator[k, k - 1 if k else size] = all_busy + k * theta
        generator[k, size + 1] = theta
        generator[k, k] = -(all_busy + (k + 1) * theta)
    within_t = expm(generator * within)[:size, size]
    fundamental = np.linalg.inv(-generator[:size, :size])
    reviewed = fundamental @ generator[:size, size]
    return within_t, reviewed, fundamental @ reviewed


@pytest.mark.parametrize(("per_hour", "handle", "reviewers", "patience", "within"),
                         [(200, 180, 14, 120, 20), (200, 180, 8, 60, 30), (40, 300, 3, 600, 0), (90, 60, 1, 30, 10)])
def test_erlang_a_equals_the_chain_solved_independently(per_hour, handle, reviewers, patience, within):
    rate = per_hour / 3600
    states = reviewers + 200
    pi = chain_by_linear_algebra(rate, handle, reviewers, patience, states)
    figures = erlang_a(arrivals_per_hour=per_hour, handle_seconds=handle, reviewers=reviewers,
                       answer_within_seconds=within, patience_seconds=patience)
    queued = pi[reviewers:]
    ahead = np.arange(queued.size)
    within_t, reviewed, waited = tagged_task(handle, reviewers, patience, queued.size - 1, within)
    p_abandon = queued @ (1 - reviewed)
    assert figures.p_wait == pytest.approx(queued.sum(), rel=1e-9)
    assert figures.p_abandon == pytest.approx(p_abandon, rel=1e-9)
    assert figures.mean_queue_length == pytest.approx(queued @ ahead, rel=1e-9)
    assert figures.service_level == pytest.approx(pi[:reviewers].sum() + queued @ within_t, rel=1e-9)
    assert figures.mean_wait_seconds == pytest.approx((queued @ waited) / (1 - p_abandon), rel=1e-8)
    # abandonment balances: theta * (mean queue) = lambda * P(abandon)
    assert figures.p_abandon == pytest.approx(figures.mean_queue_length / patience / rate, rel=1e-12)
    assert figures.occupancy == pytest.approx(rate * handle * (1 - p_abandon) / reviewers, rel=1e-9)


@pytest.mark.parametrize(("per_hour", "handle", "reviewers", "patience"),
                         [(200, 180, 14, 120), (200, 180, 8, 60), (3600, 180, 150, 900), (50, 3600, 40, 1800)])
def test_erlang_a_p_wait_matches_the_incomplete_gamma_closed_form(per_hour, handle, reviewers, patience):
    rate = per_hour / 3600
    x, beta = rate * patience, reviewers / handle * patience
    # sum over m >= 0 of prod_{k<=m} x / (beta + k) = beta e^x x^-beta gamma(beta, x)
    log_series = math.log(beta) + gammaln(beta) + math.log(gammainc(beta, x)) + x - beta * math.log(x)
    inverse_b = 1 / erlang_b(load=rate * handle, reviewers=reviewers)
    expected = 1 / (1 + (inverse_b - 1) * math.exp(-log_series))
    figures = erlang_a(arrivals_per_hour=per_hour, handle_seconds=handle, reviewers=reviewers,
                       answer_within_seconds=20, patience_seconds=patience)
    assert figures.p_wait == pytest.approx(expected, rel=1e-10)


def test_the_truncation_of_the_chain_is_immaterial(monkeypatch):
    arguments = {"arrivals_per_hour": 200, "handle_seconds": 180, "reviewers": 11, "patience_seconds": 3600}
    chain = erlang_a_chain(**arguments)
    assert chain.neglected_bound <= TAIL_TOLERANCE
    assert chain.free + chain.busy.sum() == pytest.approx(1.0, abs=1e-15)
    kept = erlang_a(**arguments, answer_within_seconds=20)
    monkeypatch.setattr(erlang, "TAIL_TOLERANCE", 2.0 ** -200)
    longer = erlang_a_chain(**arguments)
    assert longer.busy.size > chain.busy.size
    assert longer.busy[chain.busy.size:].sum() <= 2.0 ** -64
    again = erlang_a(**arguments, answer_within_seconds=20)
    for name in ("p_wait", "service_level", "mean_wait_seconds", "p_abandon", "mean_queue_length"):
        assert getattr(again, name) == pytest.approx(getattr(kept, name), rel=1e-14, abs=1e-300), name


def test_erlang_a_tends_to_erlang_c_as_patience_grows():
    impatient = erlang_c(**EXAMPLE, reviewers=14)
    gaps = []
    for patience in (1e3, 1e5, 1e7, 1e9):
        patient = erlang_a(**EXAMPLE, reviewers=14, patience_seconds=patience)
        gaps.append(max(abs(patient.p_wait - impatient.p_wait), abs(patient.service_level - impatient.service_level),
                        abs(patient.mean_wait_seconds - impatient.mean_wait_seconds) / impatient.mean_wait_seconds))
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] < 1e-6


def test_queue_figures_picks_the_model():
    assert queue_figures(**EXAMPLE, reviewers=14) == erlang_c(**EXAMPLE, reviewers=14)
    assert queue_figures(**EXAMPLE, reviewers=14, patience_seconds=120) == \
        erlang_a(**EXAMPLE, reviewers=14, patience_seconds=120)


# --------------------------------------------------------------------------- overload


@pytest.mark.parametrize("reviewers", [10, 9, 1])
def test_erlang_c_overload_is_flagged_not_an_error(reviewers):
    figures = erlang_c(**EXAMPLE, reviewers=reviewers)
    assert not figures.stable
    assert "overloaded" in figures.note and f"{reviewers} reviewers" in figures.note
    assert (figures.p_wait, figures.service_level, figures.occupancy) == (1.0, 0.0, 1.0)
    assert figures.mean_wait_seconds is None and figures.mean_queue_length is None


def test_erlang_a_stays_finite_under_overload():
    figures = erlang_a(**EXAMPLE, reviewers=8, patience_seconds=60)
    assert figures.stable and "run out of patience" in figures.note
    # 8 reviewers serve at most 8 of the 10 erlangs offered
    assert figures.p_abandon >= 1 - 8 / 10
    assert figures.occupancy < 1


# --------------------------------------------------------------------------- input checks


@pytest.mark.parametrize(("change", "message"), [
    ({"arrivals_per_hour": -5}, "arrivals_per_hour must be a finite number > 0, got -5"),
    ({"arrivals_per_hour": 0}, "arrivals_per_hour must be a finite number > 0, got 0"),
    ({"handle_seconds": math.inf}, "handle_seconds must be a finite number > 0, got inf"),
    ({"reviewers": 0}, "reviewers must be a whole number >= 1, got 0"),
    ({"reviewers": 2.5}, "reviewers must be a whole number >= 1, got 2.5"),
    ({"answer_within_seconds": -1}, "answer_within_seconds must be a finite number >= 0, got -1"),
    ({"patience_seconds": 0}, "patience_seconds must be a finite number > 0, got 0"),
])
def test_bad_inputs_are_quoted(change, message):
    arguments = {**EXAMPLE, "reviewers": 14, "patience_seconds": 120, **change}
    with pytest.raises(ValueError, match=f"^{message.replace('.', '[.]')}$"):
        erlang_a(**arguments)

"""The staffing solver (issue 12): the smallest team meeting service level, mean wait and abandonment targets,
checked against a brute-force count from one reviewer up; shrinkage in both directions; input checks."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.operate.queue.erlang import queue_figures
from rpa_sim.operate.queue.staffing import required_reviewers, reviewers_on_floor, scheduled_reviewers

EXAMPLE = {"arrivals_per_hour": 200, "handle_seconds": 180, "answer_within_seconds": 20}


def meets(figures, service_level, max_wait, max_abandon):
    return figures.stable and (service_level is None or figures.service_level >= service_level) \
        and (max_wait is None or figures.mean_wait_seconds <= max_wait) \
        and (max_abandon is None or figures.p_abandon <= max_abandon)


def brute_force(queue, service_level=None, max_wait=None, max_abandon=None, patience=None):
    """The first count from 1 whose figures meet the targets."""
    reviewers = 1
    while not meets(queue_figures(**queue, reviewers=reviewers, patience_seconds=patience),
                    service_level, max_wait, max_abandon):
        reviewers += 1
    return reviewers


def test_80_percent_within_20_seconds_needs_14():
    plan = required_reviewers(**EXAMPLE, service_level=0.8)
    assert plan.reviewers == 14
    assert plan.figures == queue_figures(**EXAMPLE, reviewers=14)
    assert not plan.meets(queue_figures(**EXAMPLE, reviewers=13))


def test_a_mean_wait_target():
    # 13 reviewers: 17.1 s; 14: 7.8 s
    assert required_reviewers(**EXAMPLE, max_mean_wait_seconds=10).reviewers == 14
    assert required_reviewers(**EXAMPLE, max_mean_wait_seconds=20).reviewers == 13


def test_every_target_at_once_takes_the_strictest():
    plan = required_reviewers(**EXAMPLE, service_level=0.5, max_mean_wait_seconds=1.0, max_abandon_rate=0.05,
                              patience_seconds=120)
    assert plan.reviewers == brute_force(EXAMPLE, 0.5, 1.0, 0.05, 120)
    assert plan.figures.mean_wait_seconds <= 1.0


queues = st.fixed_dictionaries({
    "arrivals_per_hour": st.floats(1, 2000),
    "handle_seconds": st.floats(10, 900),
    "answer_within_seconds": st.floats(0, 600),
})


@settings(max_examples=60, deadline=None)
@given(queue=queues, service_level=st.one_of(st.none(), st.floats(0.05, 0.99)),
       max_wait=st.one_of(st.none(), st.floats(0.5, 300)), patience=st.one_of(st.none(), st.floats(5, 3600)),
       max_abandon=st.floats(0.01, 1.0))
def test_the_solver_finds_the_smallest_team(queue, service_level, max_wait, patience, max_abandon):
    max_abandon = None if patience is None else max_abandon
    if service_level is None and max_wait is None and max_abandon is None:
        service_level = 0.8
    plan = required_reviewers(**queue, service_level=service_level, max_mean_wait_seconds=max_wait,
                              max_abandon_rate=max_abandon, patience_seconds=patience)
    assert plan.reviewers == brute_force(queue, service_level, max_wait, max_abandon, patience)


def test_thousands_of_erlangs_are_staffed_quickly():
    started = time.perf_counter()
    plan = required_reviewers(arrivals_per_hour=100_000, handle_seconds=180, answer_within_seconds=20,
                              service_level=0.8)
    assert time.perf_counter() - started < 2.0
    load = 100_000 * 180 / 3600
    assert load < plan.reviewers < load + 100
    assert plan.figures.service_level >= 0.8
    assert queue_figures(arrivals_per_hour=100_000, handle_seconds=180, answer_within_seconds=20,
                         reviewers=plan.reviewers - 1).service_level < 0.8


@pytest.mark.parametrize("shrinkage", [0.0, 0.1, 0.25, 0.3, 0.35, 0.5, 0.9])
def test_scheduled_reviewers_is_the_least_count_leaving_enough_on_the_floor(shrinkage):
    for on_floor in range(1, 200):
        scheduled = scheduled_reviewers(on_floor, shrinkage=shrinkage)
        assert reviewers_on_floor(scheduled, shrinkage=shrinkage) >= on_floor
        assert reviewers_on_floor(scheduled - 1, shrinkage=shrinkage) < on_floor
        assert scheduled == math.ceil(round(on_floor / (1 - shrinkage), 9))


@pytest.mark.parametrize(("arguments", "message"), [
    ({}, "staffing needs a target: service_level, max_mean_wait_seconds or max_abandon_rate"),
    ({"service_level": 1.0}, r"service_level must be a number in \(0, 1\), got 1.0"),
    ({"service_level": 0}, r"service_level must be a number in \(0, 1\), got 0"),
    ({"max_abandon_rate": 0.1}, "max_abandon_rate 0.1 needs patience_seconds: without patience no task abandons"),
    ({"max_abandon_rate": 1.5, "patience_seconds": 60}, r"max_abandon_rate must be a number in \(0, 1\], got 1.5"),
    ({"max_mean_wait_seconds": -2}, "max_mean_wait_seconds must be a finite number > 0, got -2"),
])
def test_bad_targets_are_quoted(arguments, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        required_reviewers(**EXAMPLE, **arguments)


def test_bad_shrinkage_is_quoted():
    with pytest.raises(ValueError, match=r"^shrinkage must be a share in \[0, 1\), got 1.0$"):
        scheduled_reviewers(5, shrinkage=1.0)

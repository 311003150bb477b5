"""The review-queue simulation (issue 12): the fast first-come-first-served path equals the SimPy path on the same
draws; replications converge to Erlang C and Erlang A; Little's law on the output; shifts, shrinkage, patience,
disciplines and overload by hand-checked cases; same seed, same bytes; input checks."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from rpa_sim.operate.queue.erlang import queue_figures
from rpa_sim.operate.queue.roster import DAY, Roster
from rpa_sim.operate.queue.settings import QueueSettings, Reviewers
from rpa_sim.operate.queue.simulation import simulate, simulate_queue
from rpa_sim.operate.queue.tasks import Tasks, arrival_times, draw_seconds, generate_tasks

EXPONENTIAL_180 = {"per_task": {"kind": "exponential", "mean_seconds": 180}}


def queue(**changes):
    base = {"arrivals": {"per_hour": 200}, "handling": EXPONENTIAL_180, "reviewers": {"count": 14},
            "answer_within_seconds": 20, "hours": 48}
    return QueueSettings(**{**base, **changes})


def both_engines(settings, seed):
    tasks = generate_tasks(settings, rng=np.random.default_rng(seed))
    roster = Roster.from_settings(settings.reviewers)
    on_expiry = "breach" if settings.patience is None else settings.patience.on_expiry
    return [simulate(tasks, roster, on_expiry=on_expiry, engine=engine) for engine in ("fast", "simpy")]


def assert_same_run(fast, general):
    np.testing.assert_array_equal(fast.start, general.start)  # NaN (released) equal to NaN
    np.testing.assert_array_equal(fast.reviewer, general.reviewer)


# --------------------------------------------------------------------------- fast path == SimPy path

SHIFTS = {"shifts": [{"start_hour": start, "end_hour": end, "reviewers": count}
                     for start, end, count in [(0, 6, 3), (8, 12, 15), (12, 20, 9), (22, 24, 4)]]}


@pytest.mark.parametrize("settings", [
    queue(),
    queue(patience={"seconds": 60, "distribution": "exponential", "on_expiry": "release"}),
    queue(reviewers={"count": 9}),
    # deterministic handling: reviewers free up at the same instants, so the tie rules decide
    queue(handling={"per_task": {"kind": "deterministic", "mean_seconds": 180}}, reviewers=SHIFTS,
          patience={"seconds": 3600, "on_expiry": "release"}),
    queue(arrivals={"hourly": [10] * 6 + [300] * 12 + [50] * 6},
          handling={"per_task": {"kind": "lognormal", "mean_seconds": 120, "cv": 2.0}},
          reviewers={"shifts": [{"start_hour": 6, "end_hour": 18, "reviewers": 12},
                                {"start_hour": 18, "end_hour": 24, "reviewers": 2}], "shrinkage": 0.2}),
    queue(arrivals={"times_seconds": [float(60 * (i // 3)) for i in range(3000)]},
          handling={"per_task": {"kind": "empirical", "samples": [60, 120, 120, 600]}}, reviewers={"count": 2}),
], ids=["erlang-c", "erlang-a", "overload", "shifts-ties-deadlines", "profile-shrinkage", "given-times-ties"])
def test_fast_path_equals_simpy_path(settings):
    for seed in range(2):
        fast, general = both_engines(settings, seed)
        assert len(fast.tasks) > 1000
        assert_same_run(fast, general)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), size=st.integers(1, 60), release=st.booleans())
def test_fast_path_equals_simpy_path_on_any_stream(data, size, release):
    # whole seconds make ties (arrivals, ends, deadlines, shift changes at the same instant) common
    arrival = data.draw(st.lists(st.integers(0, 2 * 86400), min_size=size, max_size=size))
    handle = data.draw(st.lists(st.integers(0, 7200), min_size=size, max_size=size))
    patience = data.draw(st.lists(st.one_of(st.just(math.inf), st.integers(0, 7200)), min_size=size, max_size=size))
    cuts = sorted(set(data.draw(st.lists(st.integers(0, 24), min_size=2, max_size=6))))
    counts = data.draw(st.lists(st.integers(0, 4), min_size=len(cuts) - 1, max_size=len(cuts) - 1))
    plan = [(start, end, count) for start, end, count in zip(cuts, cuts[1:], counts) if count]
    roster = Roster(plan or [(0, 24, 1)])
    tasks = Tasks.from_arrays(arrival=arrival, handle=handle, deadline=np.add(arrival, patience))
    on_expiry = "release" if release else "breach"
    assert_same_run(simulate(tasks, roster, on_expiry=on_expiry, engine="fast"),
                    simulate(tasks, roster, on_expiry=on_expiry, engine="simpy"))


# --------------------------------------------------------------------------- against the exact figures

FIGURES = ("p_wait", "service_level", "mean_wait_seconds", "mean_time_in_queue_seconds", "occupancy", "p_abandon",
           "mean_queue_length")


@pytest.mark.parametrize("patience", [None, 120.0], ids=["erlang-c", "erlang-a"])
def test_replications_converge_to_the_exact_figures(patience):
    """Under Erlang's assumptions (Poisson arrivals, exponential handling and patience), a 99% interval over 20
    replications of 200 hours covers every exact figure."""
    settings = queue(hours=200, warmup_hours=2, patience=None if patience is None else
                     {"seconds": patience, "distribution": "exponential", "on_expiry": "release"})
    result = simulate_queue(settings, seed=1, replications=20)
    exact = queue_figures(arrivals_per_hour=200, handle_seconds=180, reviewers=14, answer_within_seconds=20,
                          patience_seconds=patience)
    for name in FIGURES:
        mean, low, high = result.interval(name, level=0.99)
        assert low <= getattr(exact, name) <= high, (name, getattr(exact, name), mean, low, high)
    assert result.interval("service_level")[2] - result.interval("service_level")[1] < 0.01


def time_average_present(enter, leave, span):
    """Average number of tasks between their ``enter`` and ``leave`` over [0, span], from the sorted events."""
    times = np.concatenate([enter, leave])
    order = np.argsort(times, kind="stable")
    level = np.cumsum(np.concatenate([np.ones(enter.size), -np.ones(leave.size)])[order])
    return float(level[:-1] @ np.diff(times[order])) / span


def test_littles_law_holds_on_the_output():
    fast, _ = both_engines(queue(hours=100, patience={"seconds": 90, "distribution": "exponential",
                                                     "on_expiry": "release"}), seed=3)
    arrival, span = fast.tasks.arrival, float(fast.done.max())
    rate = len(fast.tasks) / span
    # waiting: the run's own step-function integral; in the system (waiting or in review): the helper's
    assert fast.mean_waiting(0.0, span) == pytest.approx(rate * fast.wait.mean(), rel=1e-12)
    assert time_average_present(arrival, fast.done, span) == pytest.approx(rate * (fast.done - arrival).mean(),
                                                                           rel=1e-12)
    assert fast.released.sum() > 100


# --------------------------------------------------------------------------- rules, by hand


def tasks_of(arrival, handle, **columns):
    return Tasks.from_arrays(arrival=arrival, handle=handle, **columns)


def test_release_and_breach():
    tasks = tasks_of([0, 10, 20, 30], [60, 60, 60, 60], deadline=[1e9, 1e9, 70, 65])
    released = simulate(tasks, Roster.constant(2), on_expiry="release")
    # task 2 can start at 60 (< 70); task 3 could start at 70, after its deadline 65, so it leaves at 65
    assert released.start.tolist()[:3] == [0.0, 10.0, 60.0] and math.isnan(released.start[3])
    assert released.wait.tolist() == [0.0, 0.0, 40.0, 35.0]
    breached = simulate(tasks, Roster.constant(2), on_expiry="breach", horizon_seconds=100)
    assert breached.start.tolist() == [0.0, 10.0, 60.0, 70.0]
    figures = breached.figures(answer_within_seconds=30)
    assert (figures["p_breach"], figures["p_abandon"], figures["service_level"]) == (0.25, 0.0, 0.5)


def test_a_task_whose_review_can_start_at_its_deadline_is_reviewed():
    tasks = tasks_of([0, 0], [60, 60], deadline=[math.inf, 60])
    for engine in ("fast", "simpy"):
        assert simulate(tasks, Roster.constant(1), on_expiry="release", engine=engine).start.tolist() == [0.0, 60.0]


def test_disciplines():
    # one reviewer, busy 0-100; three tasks wait: which goes first?
    arrival, handle = [0, 10, 20, 30], [100, 10, 10, 10]
    deadline, confidence = [1e9, 900, 500, 700], [0.5, 0.9, 0.6, 0.1]
    tasks = tasks_of(arrival, handle, deadline=deadline, confidence=confidence)
    starts = {discipline: simulate(tasks, Roster.constant(1), discipline=discipline).start.tolist()
              for discipline in ("fcfs", "edf", "lowest_confidence")}
    assert starts == {"fcfs": [0.0, 100.0, 110.0, 120.0], "edf": [0.0, 120.0, 100.0, 110.0],
                      "lowest_confidence": [0.0, 120.0, 110.0, 100.0]}


def test_lowest_confidence_needs_confidences():
    with pytest.raises(ValueError, match=r"^discipline lowest_confidence needs every task's confidence; task 0 "
                                         r"\(document 0\) has none$"):
        simulate(tasks_of([0], [1]), Roster.constant(1), discipline="lowest_confidence")


def test_shifts_reviewers_finish_their_task_and_leave():
    # two reviewers 08:00-12:00, one 12:00-16:00; nobody otherwise
    roster = Roster([(8, 12, 2), (12, 16, 1)])
    hour = 3600.0
    tasks = tasks_of([7 * hour, 7 * hour, 11.9 * hour, 11.95 * hour, 11.99 * hour],
                     [600, 600, 1200, 1200, 60])
    run = simulate(tasks, roster)
    # the early tasks wait for 08:00; reviewer 1 starts the 11:57 task and works until 12:17 (then leaves);
    # reviewer 0 takes the 11:54 task, and the 11:59:24 one waits for it at 12:14
    assert (run.start / hour).round(4).tolist() == [8.0, 8.0, 11.9, 11.95, round(11.9 + 1200 / hour, 4)]
    assert run.reviewer.tolist() == [0, 1, 0, 1, 0]
    np.testing.assert_array_equal(run.start, simulate(tasks, roster, engine="simpy").start)


def test_no_task_starts_off_duty_and_never_more_than_on_the_floor():
    settings = queue(hours=72, reviewers={"shifts": [{"start_hour": 6, "end_hour": 14, "reviewers": 16},
                                                     {"start_hour": 14, "end_hour": 22, "reviewers": 10}]})
    fast, _ = both_engines(settings, seed=5)
    roster = Roster.from_settings(settings.reviewers)
    reviewed = ~fast.released
    for start, reviewer in zip(fast.start[reviewed], fast.reviewer[reviewed]):
        on, off = roster.stretch(int(reviewer), float(start))
        assert on <= start < off
    busy_at_starts = [int(((fast.start <= s) & (fast.end > s)).sum()) for s in fast.start[reviewed][::50]]
    assert max(busy_at_starts) <= 16


def test_shrinkage_rounds_the_floor_down():
    roster = Roster.from_settings(Reviewers(shifts=[{"start_hour": 0, "end_hour": 12, "reviewers": 10},
                                                    {"start_hour": 12, "end_hour": 24, "reviewers": 3}],
                                            shrinkage=0.3))
    assert (roster.on_floor_at(3600.0), roster.on_floor_at(13 * 3600.0), roster.size) == (7, 2, 7)
    assert roster.reviewer_seconds(0.0, 2 * DAY) == pytest.approx(2 * (7 * 12 + 2 * 12) * 3600.0)


def test_a_night_shift_through_midnight_is_one_stretch():
    roster = Roster([(0, 6, 1), (22, 24, 1)])
    assert roster.stretch(0, 23 * 3600.0) == (22 * 3600.0, 30 * 3600.0)
    assert roster.stretch(0, DAY + 3600.0) == (22 * 3600.0, 30 * 3600.0)
    assert roster.stretch(0, DAY + 7 * 3600.0) == (DAY + 22 * 3600.0, DAY + 30 * 3600.0)
    assert Roster.constant(3).always_on and not roster.always_on


def test_arrivals_in_a_gap_warn_and_wait_for_the_next_shift():
    office = {"shifts": [{"start_hour": 8, "end_hour": 18, "reviewers": 20}]}
    result = simulate_queue(queue(reviewers=office, hours=24), seed=0)
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    count = int(warning.split()[0])
    assert 200 * 14 * 0.9 < count < 200 * 14 * 1.1
    assert warning.endswith("tasks arrived when no reviewer was on duty (0-8 h, 18-24 h) and waited for the "
                            "next shift")
    quiet = simulate_queue(queue(reviewers=office, hours=24, arrivals={"hourly": [0] * 8 + [100] * 10 + [0] * 6}),
                           seed=0)
    assert quiet.warnings == ()


def test_overload_reports_a_growing_backlog():
    settings = queue(reviewers={"count": 8}, hours=96)
    figures = simulate_queue(settings, seed=2).runs[0]
    backlog = figures["backlog_at_day_end"]
    assert len(backlog) == 4 and backlog == sorted(backlog)
    # 10 erlangs on 8 reviewers: the queue grows by about 2 / 180 s * 86400 s = 960 tasks a day
    growth = np.diff([0, *backlog]) / 960
    assert ((growth > 0.8) & (growth < 1.2)).all(), backlog
    assert figures["backlog_at_end"] == backlog[-1]


# --------------------------------------------------------------------------- inputs


def test_hourly_profile_drives_the_arrivals():
    profile = [float(10 * h) for h in range(24)]
    times = arrival_times(QueueSettings.model_validate(
        {"arrivals": {"hourly": profile}, "handling": EXPONENTIAL_180, "reviewers": {"count": 1},
         "answer_within_seconds": 0, "hours": 1}).arrivals, hours=24 * 200, rng=np.random.default_rng(0))
    per_hour = np.bincount((times // 3600 % 24).astype(int), minlength=24) / 200
    expected = np.array(profile)
    # Poisson counts over 200 days: within 4 standard deviations
    assert (np.abs(per_hour - expected) <= 4 * np.sqrt(expected / 200) + 1e-12).all()
    assert per_hour[0] == 0


def test_weekly_profile_starts_on_monday():
    week = [[0.0] * 24 for _ in range(7)]
    week[2][10] = 500.0  # Wednesday 10:00-11:00
    settings = queue(arrivals={"weekly": week}, hours=24 * 14)
    times = generate_tasks(settings, rng=np.random.default_rng(0)).arrival
    assert set((times // 3600).astype(int).tolist()) == {2 * 24 + 10, 9 * 24 + 10}


def test_empirical_handling_draws_only_the_samples():
    draws = draw_seconds(queue(handling={"per_task": {"kind": "empirical", "samples": [30, 90]}}).handling.per_task,
                         size=1000, rng=np.random.default_rng(0))
    assert set(draws.tolist()) == {30.0, 90.0}


def test_same_seed_same_bytes():
    settings = queue(patience={"seconds": 60, "distribution": "exponential", "on_expiry": "release"},
                     discipline="edf", hours=24)
    first = json.dumps(simulate_queue(settings, seed=11, replications=3).runs)
    assert first == json.dumps(simulate_queue(settings, seed=11, replications=3).runs)
    assert first != json.dumps(simulate_queue(settings, seed=12, replications=3).runs)


@pytest.mark.parametrize(("settings", "message"), [
    ({"arrivals": {"per_hour": -3}}, "Input should be greater than or equal to 0"),
    ({"arrivals": {"hourly": [5] * 23}}, "an hourly profile needs 24 values (arrivals in each hour from 00:00), "
                                         "got 23"),
    ({"arrivals": {"per_hour": 5, "hourly": [5] * 24}}, "arrivals needs exactly one of per_hour, hourly, weekly or "
                                                        "times_seconds, got per_hour and hourly"),
    ({"arrivals": {"times_seconds": [10, 200000]}, "hours": 24}, "arrival time 200000.0 s is at or after the end of "
                                                                 "the 24 hours simulated (86400 s)"),
    ({"reviewers": {"count": 0}}, "Input should be greater than or equal to 1"),
    ({"reviewers": {"count": 1, "shrinkage": 0.5}}, "1 scheduled reviewer with shrinkage 0.5 leave nobody on the "
                                                    "floor"),
    ({"reviewers": {"shifts": [{"start_hour": 8, "end_hour": 16, "reviewers": 4},
                               {"start_hour": 12, "end_hour": 20, "reviewers": 2}]}},
     "shifts 08:00-16:00 and 12:00-20:00 overlap"),
    ({"reviewers": {"shifts": [{"start_hour": 22, "end_hour": 6, "reviewers": 4}]}},
     "a shift ends after it starts, got start_hour 22 and end_hour 6 (split a night shift at midnight"),
    ({"handling": {"per_task": {"kind": "lognormal", "mean_seconds": 60, "cv": 0}}},
     "Input should be greater than 0"),
    ({"handling": {"per_task": {"kind": "lognormal", "mean_seconds": 60}}},
     "a lognormal distribution needs cv (standard deviation / mean)"),
    ({"handling": {"per_task": {"kind": "exponential", "mean_seconds": 60, "cv": 2}}},
     "cv 2.0 applies to kind lognormal only, not exponential"),
    ({"discipline": "edf"}, "discipline edf orders tasks by deadline: it needs patience (the deadlines)"),
    ({"warmup_hours": 48}, "warmup_hours 48 leaves nothing of hours 48 to measure"),
])
def test_bad_settings_are_explained(settings, message):
    with pytest.raises(ValidationError) as raised:
        queue(**settings)
    assert message in str(raised.value)


def test_the_settings_read_as_yaml_quote_the_bad_value(tmp_path):
    from rpa_sim.common.errors import InputError
    from rpa_sim.common.yamlfile import read_yaml, validated

    path = tmp_path / "operations.yaml"
    path.write_text("arrivals: {per_hour: 100}\nhandling:\n  per_task: {kind: lognormal, mean_seconds: 60, cv: -0.5}\n"
                    "reviewers: {count: 3}\nanswer_within_seconds: 60\nhours: 8\n")
    with pytest.raises(InputError) as raised:
        validated(QueueSettings, read_yaml(path), source=str(path))
    assert str(raised.value) == f"{path}: line 3: handling.per_task.cv: expected a number greater than 0, got -0.5"


@pytest.mark.parametrize(("columns", "message"), [
    ({"arrival": [0, -1], "handle": [1, 1]}, "arrival[1] must be a finite number of seconds >= 0, got -1.0"),
    ({"arrival": [0, 1], "handle": [1, math.nan]}, "handle[1] must be a finite number of seconds >= 0, got nan"),
    ({"arrival": [5], "handle": [1], "deadline": [4]}, "deadline[0] must be at or after its arrival, got 4.0"),
    ({"arrival": [5], "handle": [1], "confidence": [1.5]}, r"confidence[0] must be in [0, 1] (or NaN: unknown), "
                                                           r"got 1.5"),
    ({"arrival": [5, 6], "handle": [1]}, "handle must be a list of 2 numbers (one per task), got shape (1,)"),
])
def test_bad_tasks_are_quoted(columns, message):
    with pytest.raises(ValueError) as raised:
        Tasks.from_arrays(**columns)
    assert str(raised.value) == message


def test_bad_simulation_options_are_quoted():
    tasks = tasks_of([0], [1])
    with pytest.raises(ValueError, match=r"^the fast engine serves first come first served only, not 'edf'$"):
        simulate(tasks, Roster.constant(1), discipline="edf", engine="fast")
    with pytest.raises(ValueError, match=r"^on_expiry must be breach or release, got 'drop'$"):
        simulate(tasks, Roster.constant(1), on_expiry="drop")
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        simulate_queue(queue(), seed=-1)


def test_occupancy_counts_only_the_hours_on_duty():
    # one reviewer 08-09 h, six 11-minute reviews from 08:00: the last starts at 08:55 and ends at 09:06, six
    # minutes after the shift. Busy time over the hour on duty would be 66/60 = 1.1; only the staffed time counts
    hour = 3600.0
    tasks = Tasks.from_arrays(arrival=[8 * hour] * 6, handle=[11 * 60.0] * 6)
    run = simulate(tasks, Roster([(8, 9, 1)]), horizon_seconds=10 * hour)
    assert run.end.max() == pytest.approx(9 * hour + 6 * 60)
    assert run.figures(answer_within_seconds=hour)["occupancy"] == pytest.approx(1.0, rel=1e-12)
    # two reviewers, one leaving at 09:00 mid-review: its overtime is not counted either
    tasks = Tasks.from_arrays(arrival=[8.5 * hour, 8.5 * hour], handle=[hour, hour])
    run = simulate(tasks, Roster([(8, 9, 2), (9, 12, 1)]), horizon_seconds=12 * hour)
    # reviewer 0 (08-12 h) busy 08:30-09:30, reviewer 1 (08-09 h) 08:30-09:00 on duty: 1.5 h of 5 h on duty
    assert run.figures(answer_within_seconds=hour)["occupancy"] == pytest.approx(1.5 / 5.0, rel=1e-12)

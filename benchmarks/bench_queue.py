"""Review-queue simulation speed (issue 12 target), all measured in this run:

- the first-come-first-served fast path simulates at least 200,000 review tasks a second;
- it is reported as a ratio against the general SimPy path on the same task stream (and both give the same
  starts and reviewers, checked here too);
- for scale, the exact figures: Erlang C and Erlang A for thousands of reviewers, and a staffing search.

Usage: ``python benchmarks/bench_queue.py [TASKS]`` (default 1,000,000 tasks for the fast path; the SimPy path runs
on the first 200,000 of them, for the ratio of rates).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from rpa_sim.operate.queue.erlang import erlang_a, erlang_c
from rpa_sim.operate.queue.roster import Roster
from rpa_sim.operate.queue.settings import QueueSettings
from rpa_sim.operate.queue.simulation import simulate
from rpa_sim.operate.queue.staffing import required_reviewers
from rpa_sim.operate.queue.tasks import Tasks, generate_tasks

TARGET_PER_SECOND = 200_000
SIMPY_TASKS = 200_000


def timed(work):
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def first(tasks: Tasks, count: int) -> Tasks:
    return Tasks.from_arrays(arrival=tasks.arrival[:count], handle=tasks.handle[:count],
                             deadline=tasks.deadline[:count], confidence=tasks.confidence[:count])


def case(name: str, settings: QueueSettings, size: int) -> bool:
    # a stream of about `size` tasks: the settings' arrivals per hour over enough hours
    per_hour = settings.arrivals.per_hour
    settings = settings.model_copy(update={"hours": size / per_hour})
    tasks = generate_tasks(settings, rng=np.random.default_rng(0))
    roster = Roster.from_settings(settings.reviewers)
    on_expiry = "breach" if settings.patience is None else settings.patience.on_expiry
    fast, fast_s = timed(lambda: simulate(tasks, roster, on_expiry=on_expiry, engine="fast"))
    sample = first(tasks, min(SIMPY_TASKS, len(tasks)))
    fast_sample = simulate(sample, roster, on_expiry=on_expiry, engine="fast")
    general, general_s = timed(lambda: simulate(sample, roster, on_expiry=on_expiry, engine="simpy"))
    same = bool(np.array_equal(fast_sample.start, general.start, equal_nan=True)
                and np.array_equal(fast_sample.reviewer, general.reviewer))
    fast_rate, general_rate = len(tasks) / fast_s, len(sample) / general_s
    print(f"{name}: {len(tasks):,} tasks")
    print(f"  fast path (FCFS)     {fast_s:7.3f} s  {fast_rate:12,.0f} tasks/s  "
          f"({'meets' if fast_rate >= TARGET_PER_SECOND else 'MISSES'} {TARGET_PER_SECOND:,}/s)")
    print(f"  SimPy path           {general_s:7.3f} s  {general_rate:12,.0f} tasks/s  ({len(sample):,} tasks)")
    print(f"  fast / SimPy         {fast_rate / general_rate:7.1f}x   same starts and reviewers: {same}")
    print(f"  released {int(fast.released.sum()):,}; service level "
          f"{fast.figures(answer_within_seconds=20)['service_level']:.4f}")
    return fast_rate >= TARGET_PER_SECOND and same


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    handling = {"per_task": {"kind": "exponential", "mean_seconds": 180}}
    ok = case("Erlang C queue, 14 reviewers around the clock",
              QueueSettings(arrivals={"per_hour": 200}, handling=handling, reviewers={"count": 14},
                            answer_within_seconds=20, hours=1), size)
    ok &= case("Erlang A queue, 14 reviewers, patience 120 s (released)",
               QueueSettings(arrivals={"per_hour": 200}, handling=handling, reviewers={"count": 14},
                             patience={"seconds": 120, "distribution": "exponential", "on_expiry": "release"},
                             answer_within_seconds=20, hours=1), size)
    ok &= case("shifts of 5 / 22 / 14 scheduled reviewers, shrinkage 0.2, lognormal handling, 1 h deadlines "
                "(released)",
               QueueSettings(arrivals={"per_hour": 200},
                             handling={"per_task": {"kind": "lognormal", "mean_seconds": 180, "cv": 1.5}},
                             reviewers={"shifts": [{"start_hour": 0, "end_hour": 8, "reviewers": 5},
                                                   {"start_hour": 8, "end_hour": 16, "reviewers": 22},
                                                   {"start_hour": 16, "end_hour": 24, "reviewers": 14}],
                                        "shrinkage": 0.2},
                             patience={"seconds": 3600, "on_expiry": "release"}, answer_within_seconds=20, hours=1),
               size)

    print("exact figures")
    queue = {"arrivals_per_hour": 4900 / 180 * 3600, "handle_seconds": 180, "answer_within_seconds": 20}
    _, c_s = timed(lambda: erlang_c(**queue, reviewers=5000))
    _, a_s = timed(lambda: erlang_a(**queue, reviewers=5000, patience_seconds=600))
    plan, plan_s = timed(lambda: required_reviewers(**queue, service_level=0.8, patience_seconds=600))
    print(f"  Erlang C, 5,000 reviewers     {c_s * 1000:8.2f} ms")
    print(f"  Erlang A, 5,000 reviewers     {a_s * 1000:8.2f} ms")
    print(f"  staffing 4,900 erlangs (A)    {plan_s * 1000:8.2f} ms  -> {plan.reviewers:,} reviewers")
    print("all targets met" if ok else "TARGET MISSED")


if __name__ == "__main__":
    main()

"""Discrete-event simulation of a review queue over days and weeks.

Tasks (:class:`~rpa_sim.operate.queue.tasks.Tasks`) arrive, wait, are reviewed
by the reviewers on duty (:class:`~rpa_sim.operate.queue.roster.Roster`) in the
order of a discipline, or leave unreviewed when their patience ends. The
rules, shared by both engines:

1. A waiting task is taken as soon as a reviewer on duty is free; among
   waiting tasks the discipline chooses: ``fcfs`` (first come first served),
   ``edf`` (earliest deadline first) or ``lowest_confidence`` (first), ties
   going to the earlier arrival. Reviews are never interrupted.
2. Among free reviewers on duty, the one free for the longest takes it (free
   since the end of its last task, or since it came on duty), ties going to
   the lower index.
3. A reviewer whose hours end mid-task finishes it; it takes no task at or
   after the end of its hours.
4. With ``on_expiry="release"``, a task not started by its deadline leaves
   the queue then, unreviewed (a task whose review could start exactly at
   its deadline is reviewed). With ``"breach"`` it stays and is reviewed late.

Two engines follow these rules. ``simpy`` is the general one: a SimPy
environment whose events are arrivals, deadlines and reviewers becoming
free, each instant ending with one dispatch step (tasks to free reviewers,
then releases). ``fast`` serves first come first served only: tasks in
order of arrival, each starting at ``max(arrival, the earliest time a
reviewer can take it)`` from a heap of reviewers (the Kiefer-Wolfowitz
recursion); it gives the same numbers, several times faster. After the
horizon the reviewers work on, by their hours, until the queue is empty, so
every task's wait is known.

Examples
--------
>>> from rpa_sim.operate.queue.roster import Roster
>>> tasks = Tasks.from_arrays(arrival=[0, 10, 20, 30], handle=[60, 60, 60, 60], deadline=[1e9, 1e9, 1e9, 65])
>>> run = simulate(tasks, Roster.constant(2), on_expiry="release")
>>> run.start.tolist(), run.reviewer.tolist()  # the last task could start at 70, after its deadline
([0.0, 10.0, 60.0, nan], [0, 1, 0, -1])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappop, heappush, heapreplace
from typing import Any, Literal

import numpy as np

from rpa_sim.operate.queue.roster import DAY, Roster
from rpa_sim.operate.queue.settings import DISCIPLINES, QueueSettings
from rpa_sim.operate.queue.tasks import Tasks, generate_tasks

__all__ = ["QueueRun", "QueueSimulation", "simulate", "simulate_queue", "ENGINES"]

ENGINES = ("auto", "fast", "simpy")
"""``auto`` is ``fast`` for first come first served, else ``simpy``."""

_WAITING, _STARTED, _RELEASED = 0, 1, 2


class _ReviewerPool:
    """Reviewers ordered by when each can next take a task, then by index (rule 2): a heap of
    ``(available from, reviewer)`` kept true lazily.

    An entry at or after the time asked about is exact (it was an on-duty
    moment when pushed); one before it is still right if the reviewer's hours
    have not ended since, else it is moved to the reviewer's current
    stretch of hours (idle since that stretch began) or the next.
    """

    def __init__(self, roster: Roster) -> None:
        self._roster = roster
        self._heap: list[tuple[float, int]] = []
        self._ends: list[float] = []
        for reviewer in range(roster.size):
            start, end = roster.stretch(reviewer, 0.0)
            self._heap.append((max(start, 0.0), reviewer))
            self._ends.append(end)
        self._heap.sort()

    def first(self, time: float) -> tuple[float, int]:
        """The reviewer to take a task that can start at ``time``, and the moment it can: ``time`` or later."""
        heap = self._heap
        while True:
            available, reviewer = heap[0]
            if available >= time or time < self._ends[reviewer]:
                return available, reviewer
            start, self._ends[reviewer] = self._roster.stretch(reviewer, time)
            heapreplace(heap, (start, reviewer))

    def assign(self, reviewer: int, finish: float) -> None:
        """The reviewer :meth:`first` returned is busy until ``finish``."""
        start, self._ends[reviewer] = self._roster.stretch(reviewer, finish)
        heapreplace(self._heap, (max(start, finish), reviewer))


def _first_come_first_served(tasks: Tasks, roster: Roster, release: bool) -> tuple[list[float], list[int]]:
    """The Kiefer-Wolfowitz recursion: each task in order of arrival takes the reviewer that can start it
    first (rule 2 among those free already)."""
    size = len(tasks)
    arrival, handle, deadline = tasks.arrival.tolist(), tasks.handle.tolist(), tasks.deadline.tolist()
    start, reviewer = [math.nan] * size, [-1] * size
    if roster.always_on:
        heap = [(0.0, j) for j in range(roster.size)]
        for i in range(size):
            arrived = arrival[i]
            available, j = heap[0]
            begins = available if available > arrived else arrived
            if release and begins > deadline[i]:
                continue
            start[i], reviewer[i] = begins, j
            heapreplace(heap, (begins + handle[i], j))
        return start, reviewer
    pool = _ReviewerPool(roster)
    for i in range(size):
        arrived = arrival[i]
        available, j = pool.first(arrived)
        begins = available if available > arrived else arrived
        if release and begins > deadline[i]:
            continue
        start[i], reviewer[i] = begins, j
        pool.assign(j, begins + handle[i])
    return start, reviewer


def _delay_until(now: float, time: float) -> float:
    """The delay that makes SimPy's ``now + delay`` exactly ``time``, so that events fall on the data's
    instants (``time - now`` rounded back can miss by one unit in the last place)."""
    delay = time - now
    while now + delay < time:
        delay = math.nextafter(delay, math.inf)
    while now + delay > time:
        delay = math.nextafter(delay, -math.inf)
    return delay


def _by_events(tasks: Tasks, roster: Roster, keys: list[float], release: bool) -> tuple[list[float], list[int]]:
    """The general engine, on SimPy's event calendar; every instant ends with one dispatch step."""
    import simpy  # noqa: PLC0415

    env = simpy.Environment()
    size = len(tasks)
    arrival, handle, deadline = tasks.arrival.tolist(), tasks.handle.tolist(), tasks.deadline.tolist()
    start, reviewer = [math.nan] * size, [-1] * size
    state = bytearray(size)
    pool = _ReviewerPool(roster)
    waiting: list[tuple[float, int]] = []
    expiring: list[tuple[float, int]] = []
    wakes: set[float] = set()
    dispatch_due = False

    def at(time: float, callback: Callable[[Any], None]) -> None:
        env.timeout(_delay_until(env.now, time)).callbacks.append(callback)

    def dispatch(_: Any) -> None:
        # runs after every other event of its instant: those were scheduled before it
        nonlocal dispatch_due
        dispatch_due = False
        now = env.now
        while waiting:
            i = waiting[0][1]
            if state[i] != _WAITING:
                heappop(waiting)
                continue
            available, j = pool.first(now)
            if available > now:
                if available not in wakes:
                    wakes.add(available)
                    at(available, settle)
                break
            heappop(waiting)
            state[i], start[i], reviewer[i] = _STARTED, now, j
            pool.assign(j, now + handle[i])
        while expiring and expiring[0][0] <= now:
            i = heappop(expiring)[1]
            if state[i] == _WAITING:
                state[i] = _RELEASED

    def settle(_: Any) -> None:
        nonlocal dispatch_due
        wakes.discard(env.now)
        if not dispatch_due:
            dispatch_due = True
            env.timeout(0).callbacks.append(dispatch)

    def arrivals():
        i = 0
        while i < size:
            yield env.timeout(_delay_until(env.now, arrival[i]))
            now = env.now
            while i < size and arrival[i] == now:  # tasks arriving together wait together
                heappush(waiting, (keys[i], i))
                if release and deadline[i] != math.inf:
                    heappush(expiring, (deadline[i], i))
                    at(deadline[i], settle)
                i += 1
            settle(None)

    env.process(arrivals())
    env.run()
    return start, reviewer


def _keys(tasks: Tasks, discipline: str) -> list[float]:
    if discipline == "fcfs":
        return list(range(len(tasks)))
    if discipline == "edf":
        return tasks.deadline.tolist()
    unknown = np.isnan(tasks.confidence)
    if unknown.any():
        raise ValueError(f"discipline lowest_confidence needs every task's confidence; task "
                         f"{int(np.flatnonzero(unknown)[0])} (document {int(tasks.document[unknown][0])}) has none")
    return tasks.confidence.tolist()


def simulate(tasks: Tasks, roster: Roster, *, discipline: Literal["fcfs", "edf", "lowest_confidence"] = "fcfs",
             on_expiry: Literal["breach", "release"] = "breach", horizon_seconds: float | None = None,
             engine: Literal["auto", "fast", "simpy"] = "auto") -> QueueRun:
    """Run ``tasks`` through the reviewers of ``roster``.

    Parameters
    ----------
    tasks : Tasks
    roster : Roster
    discipline : {"fcfs", "edf", "lowest_confidence"}
        The order waiting tasks are taken in.
    on_expiry : {"breach", "release"}
        What a task still waiting at its deadline does: stays (and breaches)
        or leaves unreviewed.
    horizon_seconds : float, optional
        The end of the period measured (default: the last arrival); the
        reviewers work on until the queue is empty in any case.
    engine : {"auto", "fast", "simpy"}
        ``fast`` serves ``fcfs`` only; ``auto`` picks it whenever it can.

    Returns
    -------
    QueueRun
    """
    if discipline not in DISCIPLINES:
        raise ValueError(f"discipline must be one of {', '.join(DISCIPLINES)}, got {discipline!r}")
    if on_expiry not in ("breach", "release"):
        raise ValueError(f"on_expiry must be breach or release, got {on_expiry!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "fast" and discipline != "fcfs":
        raise ValueError(f"the fast engine serves first come first served only, not {discipline!r}")
    release = on_expiry == "release"
    if engine == "simpy" or discipline != "fcfs":
        start, reviewer = _by_events(tasks, roster, _keys(tasks, discipline), release)
    else:
        start, reviewer = _first_come_first_served(tasks, roster, release)
    last = float(tasks.arrival[-1]) if len(tasks) else 0.0
    horizon = last if horizon_seconds is None else float(horizon_seconds)
    if not math.isfinite(horizon) or horizon < 0:
        raise ValueError(f"horizon_seconds must be a finite number >= 0, got {horizon_seconds!r}")
    starts, reviewers = np.array(start, dtype=np.float64), np.array(reviewer, dtype=np.int64)
    starts.flags.writeable = reviewers.flags.writeable = False
    return QueueRun(tasks=tasks, roster=roster, horizon=horizon, start=starts, reviewer=reviewers)


@dataclass(frozen=True)
class QueueRun:
    """What happened to each task, and the figures of a period.

    Attributes
    ----------
    tasks : Tasks
    roster : Roster
    horizon : float
        End of the measured period, seconds.
    start : numpy.ndarray
        When each task's review started; NaN when it was released.
    reviewer : numpy.ndarray
        Who reviewed it; -1 when released.
    """

    tasks: Tasks
    roster: Roster
    horizon: float
    start: np.ndarray
    reviewer: np.ndarray

    @property
    def released(self) -> np.ndarray:
        """Whether each task left unreviewed."""
        return np.isnan(self.start)

    @property
    def end(self) -> np.ndarray:
        """When each review ended; NaN when released."""
        return self.start + self.tasks.handle

    @property
    def left_queue(self) -> np.ndarray:
        """When each task stopped waiting: its review's start, or its release at the deadline."""
        return np.where(self.released, self.tasks.deadline, self.start)

    @property
    def wait(self) -> np.ndarray:
        """Seconds each task waited (released ones: until they left)."""
        return self.left_queue - self.tasks.arrival

    @property
    def done(self) -> np.ndarray:
        """When each task left the system: the end of its review, or its release."""
        return np.where(self.released, self.tasks.deadline, self.end)

    def mean_waiting(self, start: float, end: float) -> float:
        """Time-average number of tasks waiting between ``start`` and ``end`` (> ``start``), integrated over
        the step function of arrivals (+1) and departures from the queue (-1)."""
        times = np.concatenate([self.tasks.arrival, self.left_queue])
        steps = np.concatenate([np.ones(len(self.tasks)), -np.ones(len(self.tasks))])
        order = np.argsort(times, kind="stable")
        times, level = times[order], np.cumsum(steps[order])
        lower = np.clip(times, start, end)
        upper = np.clip(np.append(times[1:], end), start, end)
        return float(level @ (upper - lower)) / (end - start)

    def backlog_at(self, times: np.ndarray) -> np.ndarray:
        """Tasks arrived and not yet done (waiting or under review) at each of ``times``."""
        arrived = np.searchsorted(self.tasks.arrival, times, side="right")
        finished = np.searchsorted(np.sort(self.done), times, side="right")
        return arrived - finished

    def unstaffed_arrivals(self) -> int:
        """Tasks that arrived when no reviewer was on duty."""
        moment = self.tasks.arrival % DAY / 3600.0
        return int(sum(((moment >= low) & (moment < high)).sum() for low, high in self.roster.off_duty_hours()))

    def figures(self, *, answer_within_seconds: float, complete_within_seconds: float | None = None,
                warmup_seconds: float = 0.0) -> dict[str, Any]:
        """The figures of the tasks arriving from ``warmup_seconds`` to the horizon.

        Shares are of all those tasks (None when there are none):
        ``service_level`` counts the reviews started within
        ``answer_within_seconds`` of arrival; ``completed_within`` the reviews
        ended within ``complete_within_seconds``; ``p_wait`` the tasks that
        waited at all; ``p_abandon`` those released; ``p_breach`` those
        reviewed after their deadline. ``mean_wait_seconds`` and the
        turnaround percentiles are of the reviewed tasks. ``occupancy`` and
        ``mean_queue_length`` are time averages over the period;
        ``backlog_at_day_end`` counts the tasks arrived and not done at each
        midnight within it, ``backlog_at_end`` at the horizon.
        """
        tasks, horizon = self.tasks, self.horizon
        if not 0.0 <= warmup_seconds < horizon:
            raise ValueError(f"warmup_seconds must be in [0, {horizon:g}) (the horizon), got {warmup_seconds!r}")
        measured = (tasks.arrival >= warmup_seconds) & (tasks.arrival < horizon)
        count = int(measured.sum())
        released = self.released[measured]
        reviewed = ~released
        wait = self.wait[measured]
        turnaround = (self.end - tasks.arrival)[measured][reviewed]

        def share(mask: np.ndarray) -> float | None:
            return float(mask.sum()) / count if count else None

        reviewed_all = ~self.released
        # only the staffed time counts: a review running past its reviewer's shift is overtime, so occupancy
        # is the share of the hours on duty spent reviewing, never above 1
        busy = self.roster.on_duty_seconds(self.reviewer[reviewed_all],
                                           np.clip(self.start[reviewed_all], warmup_seconds, horizon),
                                           np.clip(self.end[reviewed_all], warmup_seconds, horizon))
        percentiles = np.percentile(turnaround, [50, 90, 99]).tolist() if turnaround.size else [None] * 3
        midnights = np.arange(math.floor(warmup_seconds / DAY) + 1, math.floor(horizon / DAY) + 1) * DAY
        return {
            "tasks": count,
            "reviewed": int(reviewed.sum()),
            "released": int(released.sum()),
            "p_wait": share(wait > 0),
            "service_level": share(reviewed & (wait <= answer_within_seconds)),
            "completed_within": None if complete_within_seconds is None
            else share(reviewed & ((self.end - tasks.arrival)[measured] <= complete_within_seconds)),
            "mean_wait_seconds": float(wait[reviewed].mean()) if reviewed.any() else None,
            "mean_time_in_queue_seconds": float(wait.mean()) if count else None,
            "p_abandon": share(released),
            "p_breach": share(reviewed & (self.start[measured] > tasks.deadline[measured])),
            "occupancy": busy / self.roster.reviewer_seconds(warmup_seconds, horizon),
            "mean_queue_length": self.mean_waiting(warmup_seconds, horizon),
            "turnaround_p50_seconds": percentiles[0],
            "turnaround_p90_seconds": percentiles[1],
            "turnaround_p99_seconds": percentiles[2],
            "backlog_at_day_end": self.backlog_at(midnights).tolist(),
            "backlog_at_end": int(self.backlog_at(np.array([horizon]))[0]),
        }


@dataclass(frozen=True)
class QueueSimulation:
    """Independent replications of one setting.

    Attributes
    ----------
    runs : tuple of dict
        Each replication's :meth:`QueueRun.figures`.
    warnings : tuple of str
        What the user should know (tasks arriving with nobody on duty).
    """

    runs: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]

    def values(self, name: str) -> np.ndarray:
        """One figure over the replications; a ValueError when a replication has none."""
        values = [run[name] for run in self.runs]
        if any(value is None or isinstance(value, list) for value in values):
            raise ValueError(f"figure {name!r} is not a number in every replication: {values[:5]}")
        return np.array(values, dtype=np.float64)

    def interval(self, name: str, *, level: float = 0.95) -> tuple[float, float, float]:
        """``(mean, low, high)``: Student's t confidence interval of a figure's mean over the replications.

        Raises
        ------
        ValueError
            With fewer than two replications, or ``level`` outside (0, 1).
        """
        from scipy.stats import t as student  # noqa: PLC0415

        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level!r}")
        values = self.values(name)
        if values.size < 2:
            raise ValueError(f"a confidence interval needs at least 2 replications, got {values.size}")
        mean = float(values.mean())
        half = float(student.ppf((1.0 + level) / 2.0, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size))
        return mean, mean - half, mean + half


def simulate_queue(settings: QueueSettings, *, seed: int, replications: int = 1,
                   engine: Literal["auto", "fast", "simpy"] = "auto") -> QueueSimulation:
    """Simulate ``settings`` ``replications`` times, each on its own task stream.

    Streams come from ``numpy.random.SeedSequence(seed).spawn(replications)``:
    the same seed gives the same figures, to the byte.

    Examples
    --------
    >>> settings = QueueSettings(arrivals={"per_hour": 200}, handling={"per_task": {"kind": "exponential",
    ...                          "mean_seconds": 180}}, reviewers={"count": 14}, answer_within_seconds=20, hours=24)
    >>> result = simulate_queue(settings, seed=7)
    >>> result.runs == simulate_queue(settings, seed=7).runs, result.runs[0]["tasks"] > 4000
    (True, True)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(replications, bool) or not isinstance(replications, (int, np.integer)) or replications < 1:
        raise ValueError(f"replications must be an integer >= 1, got {replications!r}")
    roster = Roster.from_settings(settings.reviewers)
    on_expiry = "breach" if settings.patience is None else settings.patience.on_expiry
    runs, unstaffed = [], 0
    for stream in np.random.SeedSequence(int(seed)).spawn(int(replications)):
        tasks = generate_tasks(settings, rng=np.random.default_rng(stream))
        run = simulate(tasks, roster, discipline=settings.discipline, on_expiry=on_expiry,
                       horizon_seconds=settings.hours * 3600.0, engine=engine)
        runs.append(run.figures(answer_within_seconds=settings.answer_within_seconds,
                                complete_within_seconds=settings.complete_within_seconds,
                                warmup_seconds=settings.warmup_hours * 3600.0))
        unstaffed += run.unstaffed_arrivals()
    warnings: tuple[str, ...] = ()
    if unstaffed:
        hours = ", ".join(f"{low:g}-{high:g} h" for low, high in roster.off_duty_hours())
        warnings = (f"{unstaffed} task{'s' if unstaffed > 1 else ''} arrived when no reviewer was on duty ({hours}) "
                    f"and waited for the next shift",)
    return QueueSimulation(runs=tuple(runs), warnings=warnings)

"""Stage 3: the review operation a policy's threshold feeds, from stage 2's curves.

A policy at τ opens a share ``p = O / D`` of the documents (VQA: questions)
for review, ``O`` the documents opened and ``D`` the documents of the data,
and reviews ``k = R / O`` items in each, ``R`` the items reviewed: both read
from the policy's curve at τ, never from the records. With the scenario's
``operations:`` section (:class:`~rpa_sim.operate.queue.spec.OperationsSpec`)
that gives, per threshold:

- the offered load of each hour: documents arriving that hour times ``p``
  times the mean handling time ``S = per_document + k per_item``;
- the reviewers needed in each hour for the service level (Erlang C, or
  Erlang A for exponential patience with release), the fewest to schedule
  after shrinkage, and what rostering them costs a day;
- with the scenario's own team, one simulation of ``days`` days
  (:func:`~rpa_sim.operate.queue.simulation.simulate`): the service level
  reached, turnaround p50/p90/p99, the backlog at each day's end and over
  the day, and the reviewers' utilisation.

``docs/operations.md`` ("Operations in a scenario") gives the decisions.

Examples
--------
>>> from rpa_sim.operate.queue.spec import OperationsSpec
>>> spec = OperationsSpec.model_validate({"arrivals": {"per_hour": 100}, "reviewers": {"count": 3},
...     "handling": {"per_document": {"kind": "deterministic", "mean_seconds": 60}},
...     "service_level": {"share": 0.9, "within_hours": 1}, "days": 1})
>>> model = OperationModel(spec, documents=1000)
>>> work = Workload(opened=500.0, reviewed=800.0, documents=1000)
>>> round(model.load(work)[0], 6)  # 100 an hour x 0.5 opened x 60 s / 3600
0.833333
>>> model.reviewers_needed(work)[0]  # one keeps up (0.83 erlangs), and nearly no document waits an hour
1
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rpa_sim.common.jsontext import finite
from rpa_sim.common.limits import MOST_OPERATIONS_DAYS, MOST_REVIEW_SECONDS
from rpa_sim.operate.queue.erlang import queue_figures
from rpa_sim.operate.queue.results import OperationAt, Operations, PolicyOperations, Simulation, Team
from rpa_sim.operate.queue.roster import DAY, Roster
from rpa_sim.operate.queue.settings import Arrivals, Distribution, Handling
from rpa_sim.operate.queue.simulation import simulate
from rpa_sim.operate.queue.spec import GRID_POINTS, ArrivalProfile, OperationsSpec
from rpa_sim.operate.queue.staffing import required_reviewers, reviewers_on_floor, scheduled_reviewers
from rpa_sim.operate.queue.tasks import Tasks, arrival_times, handle_seconds

if TYPE_CHECKING:
    from rpa_sim.route.costs import CostModel
    from rpa_sim.route.reviewer import Reviewer
    from rpa_sim.route.sweep import Curve, Sweeper

__all__ = ["Workload", "OperationModel", "operation_model", "staffed_curve", "priced", "released_quality",
           "operations", "operations_table", "staffing_rows", "staffing_table"]

_HOUR = 3600.0
_HOURS_IN_DAY = 24


@dataclass(frozen=True)
class Workload:
    """What a policy at one threshold sends to review, for the data's ``documents`` (VQA: questions).

    ``opened`` documents are opened for review and ``reviewed`` items
    reviewed in them (expectations, from the curve).
    """

    opened: float
    reviewed: float
    documents: int

    @classmethod
    def from_point(cls, point: dict[str, float], *, documents: int) -> Workload:
        """From a curve's figures at τ (:meth:`Sweeper.at`): ``reviewed`` and ``documents_straight_through``."""
        return cls(opened=documents - point["documents_straight_through"], reviewed=point["reviewed"],
                   documents=documents)

    @property
    def opened_share(self) -> float:
        """``p``: the share of arriving documents opened for review."""
        return self.opened / self.documents if self.documents else 0.0

    @property
    def items_per_document(self) -> float:
        """``k``: the items reviewed in an opened document."""
        return self.reviewed / self.opened if self.opened > 0 else 0.0


class OperationModel:
    """The review operation of a scenario: arrivals, handling, team, service level and price.

    Parameters
    ----------
    spec : OperationsSpec
    documents : int
        Documents (VQA: questions) in the data: the curves' ``D``.
    reviewer : Reviewer, optional
        Default handling times (``seconds_per_document``, ``seconds_per_item``).
    costs : CostModel, optional
        ``hourly_rate`` prices a reviewer-hour when ``spec.hourly_cost`` is not given.
    received_at : numpy.ndarray, optional
        Seconds since 1970-01-01 UTC per document (NaN: unknown), for ``from_records`` arrivals.
    review_seconds : numpy.ndarray, optional
        Per document (NaN: unknown), for ``from_records`` handling.
    ids : sequence of str, optional
        The documents' ids, for messages.

    Raises
    ------
    ValueError
        When arrivals or handling come ``from_records`` and the records lack
        the field, or no handling time is known.
    """

    def __init__(self, spec: OperationsSpec, *, documents: int, reviewer: Reviewer | None = None,
                 costs: CostModel | None = None, received_at: np.ndarray | None = None,
                 review_seconds: np.ndarray | None = None, ids: Sequence[str] = ()) -> None:
        self.spec = spec
        self.documents = documents
        self.hourly_cost = spec.hourly_cost if spec.hourly_cost is not None else (
            None if costs is None else costs.hourly_rate)
        self.arrival_offsets: np.ndarray | None = None
        if spec.arrivals.from_records:
            self.arrival_offsets, self.days, self.profile = _record_arrivals(received_at, documents, ids,
                                                                            spec.arrivals.utc_offset_hours)
        else:
            self.days, self.profile = spec.days, spec.arrivals.profile()
        self.samples: np.ndarray | None = None
        self.per_document = self.per_item = None
        if spec.handling.from_records:
            self.samples = _review_samples(review_seconds, documents, ids)
        else:
            seconds_per_document = 0.0 if reviewer is None else reviewer.seconds_per_document
            seconds_per_item = 0.0 if reviewer is None else reviewer.seconds_per_item
            self.per_document = spec.handling.per_document or _fixed(seconds_per_document)
            self.per_item = spec.handling.per_item or _fixed(seconds_per_item)
            if self.per_document is None and self.per_item is None:
                raise ValueError("operations needs handling times: give operations.handling (per_document, "
                                 "per_item or from_records) or the reviewer's seconds_per_item / seconds_per_document")
        self.shrinkage = spec.reviewers.shrinkage
        self.within = spec.service_level.within_hours * _HOUR
        patience = spec.patience
        self.patience_seconds = (patience.seconds if patience is not None and patience.distribution == "exponential"
                                 and patience.on_expiry == "release" else None)
        self._needed: dict[tuple[float, float, float], int] = {}

    # -- the analytic side ------------------------------------------------------------------------

    def handle_seconds(self, work: Workload) -> float:
        """``S``: the mean handling time of an opened document."""
        if self.samples is not None:
            return float(self.samples.mean())
        per_document = 0.0 if self.per_document is None else self.per_document.mean
        per_item = 0.0 if self.per_item is None else self.per_item.mean
        return per_document + work.items_per_document * per_item

    def opened_per_hour(self, work: Workload) -> list[float]:
        """Documents opened for review in each hour of the profile: arrivals times ``p``."""
        return [rate * work.opened_share for rate in self.profile.per_hour]

    def load(self, work: Workload) -> list[float]:
        """The offered load of each hour of the profile, in erlangs (reviewers kept busy)."""
        handle = self.handle_seconds(work)
        return [rate * handle / _HOUR for rate in self.opened_per_hour(work)]

    def target_share(self, work: Workload) -> float:
        """The share of OPENED documents that must complete in time so that ``share`` of all do:
        ``1 - (1 - share) / p`` (documents not opened complete at once); <= 0 when any team will do."""
        share = self.spec.service_level.share
        return 1.0 - (1.0 - share) / work.opened_share if work.opened_share > 0 else 0.0

    def reviewers_needed(self, work: Workload) -> list[int]:
        """Reviewers needed on the floor in each hour of the profile for the service level.

        Each hour is a queue in steady state with that hour's load: the fewest
        reviewers whose share of opened documents starting review within
        ``within - S`` (so completing within ``within``) reaches
        :meth:`target_share` (Erlang C; Erlang A with exponential patience and
        release); never fewer than keep the queue stable (load + 1 under
        Erlang C). 0 in hours without arrivals.
        """
        handle = self.handle_seconds(work)
        target = self.target_share(work)
        wait = max(self.within - handle, 0.0)
        needed = []
        for rate in self.opened_per_hour(work):
            key = (rate, handle, target)
            if key not in self._needed:
                self._needed[key] = self._solve(rate, handle, target, wait)
            needed.append(self._needed[key])
        return needed

    def _solve(self, rate: float, handle: float, target: float, wait: float) -> int:
        if rate <= 0 or handle <= 0:
            return 0
        load = rate * handle / _HOUR
        if target <= 0:
            # every opened document may be late and the level still met: a team that keeps up
            return math.floor(load) + 1 if self.patience_seconds is None else max(1, math.ceil(load))
        return required_reviewers(arrivals_per_hour=rate, handle_seconds=handle, answer_within_seconds=wait,
                                  service_level=target,
                                  patience_seconds=self.patience_seconds).reviewers

    def scheduled_needed(self, work: Workload) -> list[int]:
        """Reviewers to schedule in each hour so that :meth:`reviewers_needed` are on the floor after shrinkage."""
        return [scheduled_reviewers(count, shrinkage=self.shrinkage) if count else 0
                for count in self.reviewers_needed(work)]

    def staffing_cost_per_day(self, work: Workload) -> float | None:
        """What rostering :meth:`scheduled_needed` costs a day: reviewer-hours times the hourly cost
        (a week's profile: its mean day); None without an hourly cost."""
        if self.hourly_cost is None:
            return None
        return sum(self.scheduled_needed(work)) * self.hourly_cost / self.profile.days

    def staffing_cost_for_data(self, work: Workload) -> float | None:
        """:meth:`staffing_cost_per_day` for the data's volume: times ``D`` over the documents a day."""
        daily = self.staffing_cost_per_day(work)
        per_day = self.profile.documents_per_day
        if daily is None:
            return None
        return daily * self.documents / per_day if per_day > 0 else 0.0

    # -- the team as given ------------------------------------------------------------------------

    def plan(self, extra: int = 0) -> list[tuple[float, float, int]]:
        """The team's shifts ``(start_hour, end_hour, scheduled)``, each with ``extra`` more (at least 1)."""
        reviewers = self.spec.reviewers
        if reviewers.shifts is None:
            assert reviewers.count is not None, "reviewers have a count or shifts (validated)"
            shifts = [(0.0, 24.0, reviewers.count)]
        else:
            shifts = sorted((shift.start_hour, shift.end_hour, shift.reviewers) for shift in reviewers.shifts)
        return [(start, end, max(1, count + extra)) for start, end, count in shifts]

    def roster(self, extra: int = 0) -> Roster:
        """Who is on the floor when: :meth:`plan` after shrinkage (at least one per shift)."""
        return Roster([(start, end, max(1, reviewers_on_floor(count, shrinkage=self.shrinkage)))
                       for start, end, count in self.plan(extra)])

    def team_cost_per_day(self, extra: int = 0) -> float | None:
        """What the team as given costs a day (scheduled reviewer-hours times the hourly cost)."""
        if self.hourly_cost is None:
            return None
        return sum((end - start) * count for start, end, count in self.plan(extra)) * self.hourly_cost

    def scheduled_per_hour(self, extra: int = 0) -> list[int]:
        """Reviewers of the team scheduled at the middle of each hour of a day."""
        plan = self.plan(extra)
        return [next((count for start, end, count in plan if start <= hour + 0.5 < end), 0)
                for hour in range(_HOURS_IN_DAY)]

    def on_floor_per_hour(self, extra: int = 0) -> list[int]:
        """Reviewers of the team on the floor at the middle of each hour of a day."""
        roster = self.roster(extra)
        return [roster.on_floor_at((hour + 0.5) * _HOUR) for hour in range(_HOURS_IN_DAY)]

    def erlang_service_level(self, work: Workload, extra: int = 0) -> list[float | None]:
        """Per hour of the profile, the share of ALL documents completing in time with the team on the
        floor then, by the exact model; None where it is undefined (overloaded, or nobody on duty)."""
        handle = self.handle_seconds(work)
        wait = max(self.within - handle, 0.0)
        floor = self.on_floor_per_hour(extra)
        levels: list[float | None] = []
        for hour, rate in enumerate(self.opened_per_hour(work)):
            if rate <= 0 or handle <= 0:
                levels.append(1.0)
                continue
            reviewers = floor[hour % _HOURS_IN_DAY]
            if reviewers == 0:
                levels.append(None)
                continue
            figures = queue_figures(arrivals_per_hour=rate, handle_seconds=handle, reviewers=reviewers,
                                    answer_within_seconds=wait, patience_seconds=self.patience_seconds)
            levels.append(1.0 - work.opened_share * (1.0 - figures.service_level) if figures.stable else None)
        return levels

    def tasks(self, work: Workload, rng: np.random.Generator) -> Tasks:
        """The opened documents of one simulated period: arrivals, handling times, deadlines, confidences."""
        share = work.opened_share
        if self.arrival_offsets is not None:
            arrival = self.arrival_offsets[rng.random(self.arrival_offsets.size) < share]
        else:
            rates = [rate * share for rate in self.profile.per_hour]
            arrivals = Arrivals(weekly=[rates[day * 24:(day + 1) * 24] for day in range(7)]) \
                if self.profile.days == 7 else Arrivals(hourly=rates)
            arrival = arrival_times(arrivals, hours=self.days * 24.0, rng=rng)
        size = arrival.size
        if self.samples is not None:
            handle = rng.choice(self.samples, size)
        else:
            # items per document: floor(k) or ceil(k), so that their mean is k exactly
            k = work.items_per_document
            items = math.floor(k) + (rng.random(size) < k - math.floor(k))
            handling = Handling(per_task=self.per_document, per_item=self.per_item)
            handle = handle_seconds(handling, size=size, rng=rng, items=items)
        patience = self.spec.patience
        if patience is None:
            deadline = None
        elif patience.distribution == "fixed":
            deadline = arrival + patience.seconds
        else:
            deadline = arrival + rng.exponential(patience.seconds, size)
        return Tasks.from_arrays(arrival=arrival, handle=handle, deadline=deadline, confidence=rng.random(size))

    def simulated(self, work: Workload, *, extra: int = 0, seed: int | None = None) -> Simulation:
        """One simulation of the team (``extra`` more per shift) over the period, at this workload.

        ``service_level`` is the share of ALL documents completed in time
        (``1 - p (1 - completed_within)``, the documents not opened completing
        at once); ``service_level_reviewed`` that of the opened ones.
        Turnarounds are of the reviewed documents, in seconds.
        ``backlog_by_hour`` is the mean, over the days, of the documents
        waiting or in review at the end of each hour of the day.
        """
        seed = self.spec.seed if seed is None else seed
        horizon = self.days * DAY
        share = work.opened_share
        hours = np.arange(1, self.days * _HOURS_IN_DAY + 1) * _HOUR
        if share <= 0:
            return Simulation(tasks=0, service_level=1.0, service_level_reviewed=None, utilisation=0.0, released=0,
                              p_breach=None, turnaround_p50_seconds=None, turnaround_p90_seconds=None,
                              turnaround_p99_seconds=None, backlog_at_day_end=(0,) * self.days,
                              backlog_by_hour=(0.0,) * _HOURS_IN_DAY)
        tasks = self.tasks(work, np.random.default_rng(seed))
        patience = self.spec.patience
        run = simulate(tasks, self.roster(extra), discipline=self.spec.discipline,
                       on_expiry="breach" if patience is None else patience.on_expiry, horizon_seconds=horizon)
        figures = run.figures(answer_within_seconds=max(self.within - self.handle_seconds(work), 0.0),
                              complete_within_seconds=self.within)
        completed = figures["completed_within"]
        by_hour = run.backlog_at(hours).reshape(self.days, _HOURS_IN_DAY).mean(axis=0)
        return Simulation(
            tasks=figures["tasks"],
            service_level=None if completed is None else 1.0 - share * (1.0 - completed),
            service_level_reviewed=completed,
            utilisation=figures["occupancy"],
            released=figures["released"],
            p_breach=figures["p_breach"],
            turnaround_p50_seconds=figures["turnaround_p50_seconds"],
            turnaround_p90_seconds=figures["turnaround_p90_seconds"],
            turnaround_p99_seconds=figures["turnaround_p99_seconds"],
            backlog_at_day_end=tuple(figures["backlog_at_day_end"]),
            backlog_by_hour=tuple(by_hour.tolist()),
        )

    def at(self, work: Workload, *, threshold: float, quality: float | None, unreviewed: float | None,
           extra: int = 0, hourly: bool = True, point: str | None = None) -> OperationAt:
        """Every figure of the operation at one threshold's workload; ``hourly`` adds the per-hour lists (and the
        simulation's backlog by hour), ``point`` names an operating point.

        ``quality`` is the policy's quality after review at the threshold and ``unreviewed`` with nothing
        reviewed: documents the team releases unreviewed count as they came (:func:`released_quality`).
        """
        needed = self.reviewers_needed(work)
        hours: dict[str, Any] = {}
        if hourly:
            levels = self.erlang_service_level(work, extra)
            floor = self.on_floor_per_hour(extra)
            arriving = [rate > 0 for rate in self.opened_per_hour(work)]
            hours = {"load_per_hour": tuple(self.load(work)), "reviewers_needed_per_hour": tuple(needed),
                     "scheduled_needed_per_hour": tuple(self.scheduled_needed(work)),
                     "erlang_service_level_per_hour": tuple(levels),
                     "unstaffed_hours": tuple(hour for hour, level in enumerate(levels)
                                              if level is None and floor[hour % _HOURS_IN_DAY] == 0),
                     "overloaded_hours": tuple(hour for hour, level in enumerate(levels)
                                               if level is None and floor[hour % _HOURS_IN_DAY] > 0
                                               and arriving[hour])}
        simulated = self.simulated(work, extra=extra)
        if not hourly:
            simulated = replace(simulated, backlog_by_hour=())
        released, with_releases = released_quality(simulated, quality=quality, unreviewed=unreviewed)
        return OperationAt(
            point=point, threshold=threshold, opened_share=work.opened_share,
            items_per_document=work.items_per_document, handle_seconds=self.handle_seconds(work),
            documents_opened_per_day=work.opened_share * self.profile.documents_per_day,
            peak_load=max(self.load(work)), peak_reviewers_needed=max(needed),
            peak_scheduled_needed=max(self.scheduled_needed(work)),
            staffing_cost_per_day=self.staffing_cost_per_day(work), **hours, simulated=simulated, quality=quality,
            released_share=released, quality_with_releases=with_releases)

    def team(self, extra: int = 0) -> Team:
        """The team with ``extra`` more reviewers on every shift, as a decision weighs it."""
        plan = self.plan(extra)
        if self.spec.reviewers.shifts is None:
            return Team(extra_per_shift=extra, shifts=None, count=plan[0][2])
        return Team(extra_per_shift=extra, shifts=tuple(plan), count=None)

    def operated_team(self) -> Team:
        """The scenario's team as the operation runs it: its shifts, per hour those scheduled and on the
        floor, and its cost a day."""
        return Team(shifts=tuple(self.plan()), scheduled_per_hour=tuple(self.scheduled_per_hour()),
                    on_floor_per_hour=tuple(self.on_floor_per_hour()), cost_per_day=self.team_cost_per_day())


def _fixed(seconds: float) -> Distribution | None:
    """A deterministic time of ``seconds``; None for none."""
    return Distribution(kind="deterministic", mean_seconds=seconds) if seconds > 0 else None


def _first_missing(values: np.ndarray | None, ids: Sequence[str]) -> tuple[int, str]:
    missing = np.ones(len(ids), dtype=bool) if values is None else np.isnan(values)
    index = int(np.flatnonzero(missing)[0]) if missing.any() else -1
    return int(missing.sum()), (ids[index] if 0 <= index < len(ids) else "")


def _record_arrivals(received_at: np.ndarray | None, documents: int, ids: Sequence[str],
                     offset_hours: float) -> tuple[np.ndarray, int, ArrivalProfile]:
    """Arrival times from the records: seconds from the first day's midnight (local clock), the days
    they span, and their mean hourly profile."""
    if documents == 0:
        raise ValueError("arrivals from_records needs records with received_at, and the data has none")
    missing, first = _first_missing(received_at, ids)
    if missing:
        raise ValueError(f"arrivals from_records needs received_at on every record; {missing} of {documents} "
                         f"have none (first: {first!r})")
    local = np.asarray(received_at, dtype=np.float64) + offset_hours * _HOUR
    start = math.floor(local.min() / DAY) * DAY
    offsets = np.sort(local - start)
    days = math.floor(offsets[-1] / DAY) + 1
    if days > MOST_OPERATIONS_DAYS:
        # the simulation walks every day of the span: bounded as operations: days is
        first, last = (ids[int(i)] if int(i) < len(ids) else "" for i in (np.argmin(local), np.argmax(local)))
        raise ValueError(f"arrivals from_records: the records' received_at span {days:,} days (first {first!r}, "
                         f"last {last!r}), more than the {MOST_OPERATIONS_DAYS} an operations simulation covers: "
                         f"give the records of one year at most")
    counts = np.bincount((offsets // _HOUR).astype(np.int64) % _HOURS_IN_DAY, minlength=_HOURS_IN_DAY)
    return offsets, days, ArrivalProfile(tuple((counts / days).tolist()))


def _review_samples(review_seconds: np.ndarray | None, documents: int, ids: Sequence[str]) -> np.ndarray:
    known = np.zeros(0) if review_seconds is None else review_seconds[~np.isnan(review_seconds)]
    if known.size == 0:
        raise ValueError(f"handling from_records needs review_seconds in the records; none of the {documents} has "
                         f"one")
    longest = float(known.max())
    if longest > MOST_REVIEW_SECONDS:
        record = ids[int(np.nanargmax(review_seconds))] if review_seconds is not None and len(ids) else ""
        raise ValueError(f"handling from_records: review_seconds {longest:g} (record {record!r}) is more than the "
                         f"{MOST_REVIEW_SECONDS:,} of a day: a timer left running, not a review")
    return known


def operation_model(scenario: Any, table: Any) -> OperationModel:
    """The operation of ``scenario`` (its ``operations:`` section) on an outcome table.

    Raises
    ------
    InputError
        When the section asks the records for what they do not hold (``received_at``, ``review_seconds``)
        or no handling time is known.
    """
    from rpa_sim.common.errors import InputError  # noqa: PLC0415

    try:
        return OperationModel(scenario.operations, documents=table.unit_count, reviewer=scenario.reviewer,
                              costs=scenario.costs, received_at=getattr(table, "received_at", None),
                              review_seconds=getattr(table, "review_seconds", None), ids=table.unit_ids().tolist())
    except ValueError as problem:
        raise InputError(f"scenario {scenario.name!r}: operations: {problem}") from None


def staffed_curve(curve: Curve, model: OperationModel, costs: CostModel, reviewer: Reviewer) -> Curve:
    """The curve with ``staffing_cost`` (rostering the reviewers each threshold needs, for the data's
    volume) and its ``cost`` re-priced by :meth:`CostModel.breakdown`: review time priced from
    ``hourly_rate`` is replaced by the staffing cost, since rostered reviewers are paid by the hour, busy
    or not; fixed prices (``per_review``, ``per_document``) and residual errors stay."""
    from rpa_sim.route.sweep import Curve  # noqa: PLC0415

    documents = model.documents
    opened = documents - curve.columns["documents_straight_through"]
    reviewed = curve.columns["reviewed"]
    staffing = np.array([model.staffing_cost_for_data(Workload(opened=o, reviewed=r, documents=documents))
                         for o, r in zip(opened.tolist(), reviewed.tolist())], dtype=np.float64)
    assert curve.basis is not None, "a sweep's curve has its cost basis"
    breakdown = costs.breakdown(reviewer, curve.basis, staffing=staffing)
    return Curve(curve.policy, curve.task, {**curve.columns, "cost": breakdown.total, "staffing_cost": staffing},
                 curve.basis, breakdown)


def priced(model: OperationModel | None, scenario: Any, curves: list[Curve]) -> list[Curve]:
    """Curves with staffing in their costs (:func:`staffed_curve`); as they are without an operation, a
    cost model or an hourly cost."""
    if model is None or scenario.costs is None or model.hourly_cost is None:
        return curves
    return [staffed_curve(curve, model, scenario.costs, scenario.reviewer) for curve in curves]


def released_quality(simulated: Simulation, *, quality: float | None,
                     unreviewed: float | None) -> tuple[float, float | None]:
    """The share of opened documents released unreviewed (patience ``release``), and the post-correction
    quality once they are counted as they came (None when a quality is undefined).

    The simulation releases documents whatever they hold (its confidences are
    drawn apart from the records'), so the released ones are a random share
    ``r`` of the opened ones, and in expectation the review at τ fixes ``1 - r``
    of what it fixes when every opened document is reviewed:
    ``quality - r (quality - unreviewed)``, where ``unreviewed`` is the quality
    with nothing reviewed. (For ANLS, a mean over questions, this is exact in
    expectation; for KIEval_Aligned, a ratio of counts, it is to first order.)

    >>> run = Simulation(tasks=200, service_level=0.9, service_level_reviewed=0.8, utilisation=0.7, released=50,
    ...                  p_breach=None, turnaround_p50_seconds=None, turnaround_p90_seconds=None,
    ...                  turnaround_p99_seconds=None, backlog_at_day_end=(0,))
    >>> released_quality(run, quality=0.75, unreviewed=0.5)
    (0.25, 0.6875)
    """
    share = simulated.released / simulated.tasks if simulated.tasks else 0.0
    if quality is None or unreviewed is None:
        return share, None
    return share, quality - share * (quality - unreviewed)


def operations(model: OperationModel, sweepers: Sequence[Sweeper],
               points: Sequence[Sequence[tuple[str, float]]]) -> Operations:
    """The operation of every policy: at its operating points (``points``, per sweeper its labelled
    thresholds) and along a τ grid of :data:`~rpa_sim.operate.queue.spec.GRID_POINTS`, with the team."""
    grid = np.linspace(0.0, 1.0, GRID_POINTS)
    entries = []
    for sweeper, labelled in zip(sweepers, points):
        metric = sweeper.table.metric_name
        unreviewed = finite(sweeper.table.summary()[metric])
        found = []
        for label, threshold in labelled:
            at = sweeper.at(threshold)
            found.append(model.at(Workload.from_point(at, documents=model.documents), threshold=threshold,
                                  quality=finite(at[metric]), unreviewed=unreviewed, point=label))
        curve = sweeper.curve(grid)
        rows = []
        for index, threshold in enumerate(grid.tolist()):
            point = {name: float(values[index]) for name, values in curve.columns.items()}
            rows.append(model.at(Workload.from_point(point, documents=model.documents), threshold=threshold,
                                 quality=finite(point[metric]), unreviewed=unreviewed, hourly=False))
        entries.append(PolicyOperations(policy=sweeper.policy.name, points=tuple(found), grid=tuple(rows)))
    return Operations(settings=model.spec, hourly_cost=model.hourly_cost, days=model.days,
                      documents_per_day=model.profile.documents_per_day,
                      arrivals_per_hour=tuple(model.profile.per_hour), team=model.operated_team(),
                      policies=tuple(entries))


def operations_table(operations: Operations, *, currency: str | None = None) -> str:
    """The operating points of every policy as text: work, reviewers needed, cost, and the team's figures."""
    header = ["policy", "point", "τ", "opened/day", "peak need", "staff cost/day", "SL (team)", "p90 h",
              "backlog end", "util", "quality"]
    from rpa_sim.common.formatting import count, hours, money, number, share  # noqa: PLC0415

    rows = []
    for policy in operations.policies:
        for point in policy.points:
            simulated = point.simulated
            rows.append([policy.policy, point.point or "", number(point.threshold, 3),
                         count(point.documents_opened_per_day), count(point.peak_scheduled_needed),
                         money(point.staffing_cost_per_day), share(simulated.service_level),
                         hours(simulated.turnaround_p90_seconds, unit=False),
                         count(simulated.backlog_at_day_end[-1]), number(simulated.utilisation, 3),
                         number(point.quality_with_releases, 3)])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) if i < 2 else cell.rjust(width)
                       for i, (cell, width) in enumerate(zip(row, widths))) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    level = operations.settings.service_level
    notes = [f"operations: {count(operations.documents_per_day)} arrivals a day over {operations.days} "
             f"simulated day(s); service level {share(level.share)} within {level.within_hours:g} h (all "
             f"documents); team costs {money(operations.team.cost_per_day, currency)} a day",
             "peak need = most reviewers to schedule in an hour for the service level (Erlang); SL (team), p90 h, "
             "backlog end and util are simulated with the scenario's team; quality = the metric after review, "
             "documents the team released unreviewed counted as they came"]
    return "\n".join(["Operations", *lines, "", *notes])


def staffing_rows(operations: Operations) -> list[dict[str, Any]]:
    """One row per policy, operating point and hour: the reviewers needed then (``staff SCENARIO --format csv``)."""
    rows = []
    for policy in operations.policies:
        for point in policy.points:
            for hour, needed in enumerate(point.reviewers_needed_per_hour):
                rows.append({"policy": policy.policy, "point": point.point, "threshold": point.threshold,
                             "hour": hour, "arrivals_per_hour": operations.arrivals_per_hour[hour],
                             "load": point.load_per_hour[hour], "reviewers_needed": needed,
                             "scheduled_needed": point.scheduled_needed_per_hour[hour],
                             "on_floor": operations.team.on_floor_per_hour[hour % _HOURS_IN_DAY],
                             "erlang_service_level": point.erlang_service_level_per_hour[hour]})
    return rows


def staffing_table(operations: Operations) -> str:
    """Reviewers to schedule in each hour with arrivals, per policy and operating point, beside the team."""
    arrivals = operations.arrivals_per_hour
    team = operations.team.scheduled_per_hour
    shown = [hour for hour, rate in enumerate(arrivals) if rate > 0 or team[hour % _HOURS_IN_DAY] > 0]
    header = ["policy", "point", "τ", *(f"{hour % 24:02d}" for hour in shown), "cost/day"]
    from rpa_sim.common.formatting import count, money, number  # noqa: PLC0415

    rows = [["team (scheduled)", "", "", *(count(team[hour % _HOURS_IN_DAY]) for hour in shown),
             money(operations.team.cost_per_day)]]
    for policy in operations.policies:
        for point in policy.points:
            scheduled = point.scheduled_needed_per_hour
            rows.append([policy.policy, point.point or "", number(point.threshold, 3),
                         *(count(scheduled[hour]) for hour in shown), money(point.staffing_cost_per_day)])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) if i < 2 else cell.rjust(width)
                       for i, (cell, width) in enumerate(zip(row, widths))) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    level = operations.settings.service_level
    shrinkage = operations.settings.reviewers.shrinkage
    return "\n".join([f"Reviewers to schedule per hour for {level.share:g} of documents done within "
                      f"{level.within_hours:g} h (shrinkage {shrinkage:g}; Erlang per hour)", *lines])

"""``watch``'s engine: day after day, per segment, the detector, the interval, the label-free tier and the alarms.

A :class:`Watcher` is fed one run day at a time (:meth:`Watcher.add_day`), as
tallies per segment (:class:`~rpa_sim.operate.live.tally.Tally`), and keeps,
per segment, only what the next day needs (:class:`SegmentTracker`): the
detector's wealth per null rate and alternative, the CUSUM runs that date the
change point with the tallies since each run started, the tally since the
segment was last above target, the calibration and its own detector, and the
figures of every day so far. :meth:`Watcher.snapshot` and
:meth:`Watcher.restore` carry all of it to the next run (``--state``), so that a
run a day gives exactly what one run over every day gives.

Per segment and run day ``t`` (``docs/live.md``):

1. the day's factors (:mod:`~rpa_sim.operate.live.detector`), the start
   weight ``w_t`` shared by the ``S_t`` segments seen so far, and the
   Shiryaev-Roberts step; the lower bound is the highest null rate rejected
   with every lower one, and ``error_above_target`` is raised on the day it
   first reaches ``max_error`` (again after it fell back);
2. the change point: per alternative, ``C_j(t) = max(C_j(t-1), log(w_t/S_t)) +
   log F_t(j)`` and the day its run started; the estimate is the start of the
   largest ``C_j``'s run;
3. the regime the interval is read on: the rows since the change point when
   the detector holds evidence of a change (its mixture ``M >= 1``), else the
   rows since the segment was last above target (with no evidence of change,
   the CUSUM restarts nearly every day, and a one-day regime would hide a calm
   segment behind a wide interval; ``docs/live.md`` gives the figures);
4. the label-free tier (:mod:`~rpa_sim.operate.live.calibration`): fitted after
   the first :data:`~rpa_sim.operate.live.calibration.REFERENCE_DAYS`, then
   tested every day until contradicted;
5. ``room_to_automate`` (:func:`room`): after :data:`CALM_DAYS` days whose upper
   bound stayed at or below half of ``max_error``, when the regime supports a
   lower threshold that saves reviews; at most once in :data:`NOTICE_EVERY` days.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rpa_sim.operate.live import calibration as calib
from rpa_sim.operate.live.detector import (
    ALTERNATIVES,
    binomial_log_factors,
    horvitz_thompson_log_factors,
    log_mixture,
    log_start_weight,
    log_sum,
    null_grid,
    rejected_through,
    sr_step,
)
from rpa_sim.operate.live.proposals import DayVolume, Proposal, propose, with_reviewers
from rpa_sim.operate.live.result import (
    CALIBRATION_CONTRADICTED,
    ERROR_ABOVE_TARGET,
    ROOM_TO_AUTOMATE,
    Alarm,
    DayFigures,
    Segment,
    SegmentTimeline,
    WatchResult,
)
from rpa_sim.operate.live.tally import Tally
from rpa_sim.operate.monitoring.estimators import clopper_pearson, stratified_bounds

if TYPE_CHECKING:
    from rpa_sim.operate.queue.summary import OperationModel

__all__ = ["CALM_DAYS", "NOTICE_EVERY", "EVIDENCE", "WatchSettings", "SegmentTracker", "Watcher", "regime_interval"]

#: Run days in a row whose upper bound stays at or below half of ``max_error`` before ``room_to_automate``.
CALM_DAYS = 7
#: At most one ``room_to_automate`` per segment in this many run days.
NOTICE_EVERY = 28
#: ``log M`` from which the regime is read since the change point (``M >= 1``: the detector's mixture holds
#: evidence of a change); below, since the segment was last above target.
EVIDENCE = 0.0


@dataclass(frozen=True)
class WatchSettings:
    """What a run of ``watch`` is asked; a state file continues only a run with the same settings.

    Attributes
    ----------
    max_error : float
        ``eps``, in (0, 1).
    delta : float, default=0.05
        The guarantee's level, in (0, 1).
    segments_by : tuple of str, default=("document_type",)
        The columns whose values make a segment.
    horizon_days : int, default=365
        Where detection is fastest (the guarantee holds with no horizon).
    staffing : str or None
        What sizes the review team (a fingerprint of the scenario's ``operations:``), or None.
    """

    max_error: float
    delta: float = 0.05
    segments_by: tuple[str, ...] = ("document_type",)
    horizon_days: int = 365
    staffing: str | None = None

    def __post_init__(self) -> None:
        for name in ("max_error", "delta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
        if not self.segments_by or len(set(self.segments_by)) < len(self.segments_by):
            raise ValueError(f"segments_by must name distinct columns, got {self.segments_by!r}")
        if isinstance(self.horizon_days, bool) or not isinstance(self.horizon_days, int) or self.horizon_days < 1:
            raise ValueError(f"horizon_days must be an integer >= 1, got {self.horizon_days!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"max_error": self.max_error, "delta": self.delta, "segments_by": list(self.segments_by),
                "horizon_days": self.horizon_days, "staffing": self.staffing}


@dataclass
class SegmentTracker:
    """What one segment carries from day to day (the module docstring says what each part is for)."""

    segment: Segment
    first: int
    log_r: np.ndarray
    cusum: np.ndarray
    starts: np.ndarray
    windows: list[Tally]
    stable_start: int
    stable: Tally
    above: bool = False
    first_alarm: str | None = None
    reference: Tally = field(default_factory=Tally.empty)
    calibration: np.ndarray | None = None
    calibration_log_r: np.ndarray = field(default_factory=lambda: np.full(len(calib.CALIBRATION_ALTERNATIVES),
                                                                          -np.inf))
    tolerance: float = 0.0
    contradicted: bool = False
    tested: Tally = field(default_factory=Tally.empty)
    predicted: float = 0.0
    calm: int = 0
    last_notice: int | None = None
    never_audited: int = 0
    days: list[DayFigures] = field(default_factory=list)

    @classmethod
    def start(cls, segment: Segment, first: int, grid_size: int) -> SegmentTracker:
        alternatives = len(ALTERNATIVES)
        return cls(segment=segment, first=first, log_r=np.full((grid_size, alternatives), -np.inf),
                   cusum=np.full(alternatives, -np.inf), starts=np.full(alternatives, first, dtype=np.int64),
                   windows=[Tally.empty()] * alternatives, stable_start=first, stable=Tally.empty())

    def calibration_state(self, day: int) -> str:
        if self.contradicted:
            return "contradicted"
        if day - self.first < calib.REFERENCE_DAYS:
            return "reference"
        return "none" if self.calibration is None else "holds"


def _day_log_factors(tally: Tally, grid: np.ndarray) -> np.ndarray:
    """The segment-day's ``log F[g, j]``: binomial at one audit rate above 0, Horvitz-Thompson otherwise."""
    rates, accepted, audited, errors = tally.strata()
    if not accepted.sum():
        return np.zeros((len(grid), len(ALTERNATIVES)))
    if len(rates) == 1 and rates[0] > 0:
        return binomial_log_factors(audited[0], errors[0], grid)
    return horvitz_thompson_log_factors(rates, accepted, errors, grid)


def regime_interval(regime: Tally, low: float, *, delta: float) -> tuple[float | None, float | None]:
    """The regime's Horvitz-Thompson estimate and the upper end of its ``1 - delta`` interval, clipped so
    that ``low <= estimate <= high``; both None without an audit.

    The interval is ``rpa-sim estimate``'s: Clopper-Pearson at one audit rate, stratified (Bonferroni)
    over several (a stratum at rate 0, never audited, counts as anything from 0 to 1).
    """
    estimate = regime.horvitz_thompson()
    if estimate is None:
        return None, None
    rates, accepted, audited, errors = regime.strata()
    present = accepted > 0
    if present.sum() == 1 and rates[present][0] > 0:
        _, high = clopper_pearson(int(errors[present][0]), int(audited[present][0]), confidence_level=1 - delta)
    else:
        _, high = stratified_bounds(accepted[present], audited[present], errors[present], confidence_level=1 - delta)
    high = max(high, low)
    return min(max(estimate, low), high), high


def room(regime: Tally, *, days: int, max_error: float, delta: float) -> Proposal | None:
    """The lower threshold a calm segment's regime supports, when it saves at least one review a day."""
    proposal = propose(regime, days=days, max_error=max_error, delta=delta)
    saved = proposal.change_in_reviews_per_day
    return proposal if saved is not None and saved <= -1.0 else None


class Watcher:
    """``watch`` over a run of days: feed it each day's tallies in day order, then read :meth:`result`.

    Parameters
    ----------
    settings : WatchSettings
    operations : OperationModel, optional
        The scenario's review operation: proposals then say the reviewers they take.

    Examples
    --------
    One segment audited at 10%: 50 audits a day, 1 error a day for 10 days, then 6 a day at the same
    confidences (the calibration fitted on the first 14 days no longer holds either).

    >>> from rpa_sim.operate.live.tally import Tally
    >>> def day(errors):
    ...     route = np.array([2] * 50 + [0] * 450)
    ...     correct = np.array([0] * errors + [1] * (50 - errors) + [-1] * 450)
    ...     return {(("document_type", "invoice"),): Tally.of(route=route, inclusion=np.full(500, 0.1),
    ...             correct=correct, confidence=np.full(500, 0.99))}
    >>> watcher = Watcher(WatchSettings(max_error=0.03))
    >>> for index in range(25):
    ...     watcher.add_day(f"2024-05-{index + 1:02d}", day(1 if index < 10 else 6))
    >>> for alarm in watcher.result().alarms:
    ...     print(alarm.day, alarm.kind, "since", alarm.since)
    2024-05-13 error_above_target since 2024-05-11
    2024-05-24 calibration_contradicted since 2024-05-15
    """

    def __init__(self, settings: WatchSettings, *, operations: OperationModel | None = None) -> None:
        self.settings = settings
        self.operations = operations
        self.grid = null_grid(settings.max_error)
        self.at_target = int(np.searchsorted(self.grid, settings.max_error))
        self.days: list[str] = []
        self.trackers: dict[Segment, SegmentTracker] = {}
        self.alarms: list[Alarm] = []

    # -- feeding ----------------------------------------------------------------------------------

    def add_day(self, day: str, tallies: Mapping[Segment, Tally], volume: DayVolume | None = None) -> None:
        """Take the next run day: each segment's tally (a segment without rows that day may be left out).

        Raises
        ------
        ValueError
            For a day that does not come after the last one.
        """
        if self.days and day <= self.days[-1]:
            raise ValueError(f"day {day} does not come after the last day read, {self.days[-1]}")
        self.days.append(day)
        t = len(self.days)
        for segment in tallies:
            if segment not in self.trackers:
                self.trackers[segment] = SegmentTracker.start(segment, t, len(self.grid))
        log_weight = log_start_weight(t, horizon=self.settings.horizon_days) - math.log(len(self.trackers))
        empty = Tally.empty()
        for segment in sorted(self.trackers, key=_order):
            self._step(self.trackers[segment], t, day, tallies.get(segment, empty), log_weight, volume)

    def _step(self, tracker: SegmentTracker, t: int, day: str, tally: Tally, log_weight: float,
              volume: DayVolume | None) -> None:
        settings = self.settings
        log_factors = _day_log_factors(tally, self.grid)
        tracker.log_r = sr_step(tracker.log_r, log_weight, log_factors)
        log_m = log_mixture(tracker.log_r)
        count = int(rejected_through(log_m, settings.delta))
        low = float(self.grid[count - 1]) if count else 0.0
        above = count > self.at_target
        # the CUSUM runs, each with the tally since it started
        restart = log_weight > tracker.cusum
        tracker.cusum = np.where(restart, log_weight, tracker.cusum) + log_factors[self.at_target]
        tracker.starts = np.where(restart, t, tracker.starts)
        tracker.windows = [tally if again else window + tally for again, window in zip(restart.tolist(),
                                                                                       tracker.windows)]
        tracker.stable = tracker.stable + tally
        tracker.never_audited += tally.never_audited
        if log_m[self.at_target] >= EVIDENCE:  # evidence of a change: read the regime since the change point
            best = int(np.argmax(tracker.cusum))
            regime, since = tracker.windows[best], int(tracker.starts[best])
        else:
            regime, since = tracker.stable, tracker.stable_start
        estimate, high = regime_interval(regime, low, delta=settings.delta)
        kinds: list[str] = []
        if above and not tracker.above:
            proposal = propose(regime, days=t - since + 1, max_error=settings.max_error, delta=settings.delta,
                               estimate=estimate)
            if self.operations is not None and volume is not None:
                proposal = with_reviewers(proposal, self.operations, volume)
            self._alarm(tracker, ERROR_ABOVE_TARGET, day, since, regime, (estimate, low, high), proposal)
            kinds.append(ERROR_ABOVE_TARGET)
        tracker.above = above
        label_free = self._label_free(tracker, t, day, tally, log_weight, (estimate, low, high), kinds)
        self._room(tracker, t, day, regime, since, (estimate, low, high), kinds)
        if above:  # the calm run, and the tally since the segment was last above target, start again
            tracker.stable, tracker.stable_start = Tally.empty(), t + 1
        tracker.days.append(DayFigures(day=day, auto_accepted=tally.auto_accepted, audited=tally.audited_rows,
                                       errors_found=tally.errors_found, estimate=estimate, low=low, high=high,
                                       label_free=label_free, alarm=tuple(kinds)))

    def _label_free(self, tracker: SegmentTracker, t: int, day: str, tally: Tally, log_weight: float,
                    figures: tuple[float | None, float, float | None], kinds: list[str]) -> float | None:
        """The day's label-free figure, after fitting the calibration or testing it (and its alarm)."""
        if t - tracker.first < calib.REFERENCE_DAYS:
            tracker.reference = tracker.reference + tally
            if t - tracker.first == calib.REFERENCE_DAYS - 1:
                fitted = calib.fit_calibration(tracker.reference)
                tracker.calibration = None if np.isnan(fitted[:-1]).all() else fitted
                tracker.tolerance = calib.tolerance(tracker.reference)
            return None
        if tracker.calibration is None or tracker.contradicted:
            return None
        log_factors = calib.calibration_log_factors(tally, tracker.calibration, tolerance=tracker.tolerance)
        tracker.calibration_log_r = sr_step(tracker.calibration_log_r, log_weight, log_factors)
        tracker.tested = tracker.tested + tally
        audited = tally.audited[:, :-1].sum(axis=0)
        tracker.predicted += float(np.dot(audited, tracker.calibration[:-1]))
        mixture = float(log_sum(tracker.calibration_log_r + calib.LOG_CALIBRATION_WEIGHTS))
        if mixture >= -math.log(self.settings.delta):
            tracker.contradicted = True
            since = self.days[tracker.first - 1 + calib.REFERENCE_DAYS]
            self._alarm(tracker, CALIBRATION_CONTRADICTED, day, since, tracker.tested, figures, None,
                        predicted=tracker.predicted)
            kinds.append(CALIBRATION_CONTRADICTED)
            return None
        return calib.predicted_error(tally, tracker.calibration)

    def _room(self, tracker: SegmentTracker, t: int, day: str, regime: Tally, since: int,
              figures: tuple[float | None, float, float | None], kinds: list[str]) -> None:
        """``room_to_automate`` after :data:`CALM_DAYS` calm days, at most once in :data:`NOTICE_EVERY`."""
        high = figures[2]
        calm = not tracker.above and (regime.auto_accepted == 0 or (high is not None
                                                                     and high <= self.settings.max_error / 2))
        tracker.calm = tracker.calm + 1 if calm else 0
        if tracker.calm < CALM_DAYS or (tracker.last_notice is not None and t - tracker.last_notice < NOTICE_EVERY):
            return
        proposal = room(regime, days=t - since + 1, max_error=self.settings.max_error, delta=self.settings.delta)
        if proposal is None:
            return
        tracker.last_notice = t
        self._alarm(tracker, ROOM_TO_AUTOMATE, day, since, regime, figures, proposal)
        kinds.append(ROOM_TO_AUTOMATE)

    def _alarm(self, tracker: SegmentTracker, kind: str, day: str, since: int | str, evidence: Tally,
               figures: tuple[float | None, float, float | None], proposal: Proposal | None, *,
               predicted: float | None = None) -> None:
        if kind != ROOM_TO_AUTOMATE and tracker.first_alarm is None:
            tracker.first_alarm = day
        estimate, low, high = figures
        first_day = since if isinstance(since, str) else self.days[since - 1]
        self.alarms.append(Alarm(
            day=day, segment=tracker.segment, kind=kind, since=first_day,
            auto_accepted=evidence.auto_accepted, audited=evidence.audited_rows, errors_found=evidence.errors_found,
            estimate=estimate, low=low, high=high, never_audited=evidence.never_audited, predicted_errors=predicted,
            proposal=proposal))

    # -- reading ----------------------------------------------------------------------------------

    def result(self) -> WatchResult:
        """What the run so far found."""
        settings = self.settings
        timelines = []
        for segment in sorted(self.trackers, key=_order):
            tracker = self.trackers[segment]
            # what to do now: the last error alarm's advice while above target, the last notice's once calm again
            latest = next((alarm for alarm in reversed(self.alarms)
                           if alarm.segment == segment and alarm.kind != CALIBRATION_CONTRADICTED), None)
            wanted = ERROR_ABOVE_TARGET if tracker.above else ROOM_TO_AUTOMATE
            proposal = latest.proposal if latest is not None and latest.kind == wanted else None
            timelines.append(SegmentTimeline(segment=segment, days=tuple(tracker.days),
                                             first_alarm=tracker.first_alarm, status=_status(tracker),
                                             calibration=tracker.calibration_state(len(self.days)),
                                             never_audited=tracker.never_audited, proposal=proposal))
        return WatchResult(max_error=settings.max_error, delta=settings.delta, segments_by=settings.segments_by,
                           horizon_days=settings.horizon_days, days=tuple(self.days), segments=tuple(timelines),
                           alarms=tuple(self.alarms))


def _order(segment: Segment) -> tuple[tuple[bool, str], ...]:
    """Segments in the order of their values, a missing value first."""
    return tuple((value is not None, value or "") for _, value in segment)


def _status(tracker: SegmentTracker) -> str:
    last = tracker.days[-1]
    if tracker.above:
        return "above target"
    if last.high is None:
        return "no auto" if tracker.stable.auto_accepted == 0 and last.auto_accepted == 0 else "no audits"
    return "within target"

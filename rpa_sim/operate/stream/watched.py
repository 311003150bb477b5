"""A stream watched: ``rpa-sim watch`` over its days, and for each change the day it happened and the day it was caught.

The days go to the watcher as their logs would from files
(:func:`~rpa_sim.operate.live.reader.log_day`), so watching a stream in memory
gives what ``rpa-sim watch`` gives on the logs ``replay --days`` writes.

**Which alarm catches a change.** A change touches a watched segment when the
segment's value of each column the change names, among the watched columns, is
the change's (a segment that aggregates over a column the change names is
touched too; a ``mix`` touches the segments that aggregate over the column
whose shares move, and none when each segment is one value of it). A change is
caught by the first alarm (``error_above_target`` or
``calibration_contradicted``; ``room_to_automate`` is a notice) raised on or
after its day on a segment it touches that no change earlier in the section's
order was caught by. Its delay counts the days from its day (day 1) to that
alarm's. A change it did not reach in time is "not caught in N days", N the days
from its day to the last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rpa_sim.operate.live.reader import log_day
from rpa_sim.operate.live.result import (
    CALIBRATION_CONTRADICTED,
    ERROR_ABOVE_TARGET,
    Alarm,
    Segment,
    SegmentKeyed,
    WatchResult,
    segment_name,
)
from rpa_sim.operate.live.watch import Watcher, WatchSettings
from rpa_sim.operate.stream.generator import Stream
from rpa_sim.operate.stream.plan import Planted

__all__ = ["Detection", "ChangeOutcome", "StreamResult", "watch_stream", "touches", "outcomes"]


@dataclass(frozen=True)
class Detection(SegmentKeyed):
    """The alarm that caught a change: its day, kind and segment, and the days since the change (its day is 1)."""

    day: str
    kind: str
    segment: Segment
    delay_days: int


@dataclass(frozen=True)
class ChangeOutcome:
    """One change of the stream: what it planted, and whether and when ``watch`` caught it.

    ``days_watched`` are the days from the change's day to the last (0 when it comes after the stream);
    ``touched`` the watched segments it touches (module docstring).
    """

    planted: Planted
    caught: Detection | None
    days_watched: int
    touched: int

    @property
    def text(self) -> str:
        """The outcome in a few words: ``caught on 2024-02-03 (its day 9) by error_above_target on invoice /
        email``."""
        if not self.days_watched:
            return "after the stream's last day"
        if not self.touched:
            columns = " and ".join(self.planted.shares or ())
            return (f"not an alarm, rightly: each watched segment is one {columns}, whose error rate a mix leaves "
                    f"as it was")
        if self.caught is None:
            return f"not caught in {self.days_watched:,} days"
        return (f"caught on {self.caught.day} (its day {self.caught.delay_days}) by {self.caught.kind} on "
                f"{segment_name(self.caught.segment)}")


@dataclass(frozen=True)
class StreamResult:
    """A scenario's stream and what ``watch`` found in it (``summary.json``'s ``stream``, docs/summary.md).

    Attributes
    ----------
    policy : str
    threshold : float
    audit : str
        The audit, in words (``0.25 of auto-accepted units``, or a plan's strata and rates).
    start : str
    days, documents_per_day, seed : int
    changes : tuple of ChangeOutcome
        In the section's order.
    watch : WatchResult
    """

    policy: str
    threshold: float
    audit: str
    start: str
    days: int
    documents_per_day: int
    seed: int
    changes: tuple[ChangeOutcome, ...]
    watch: WatchResult


def watch_stream(stream: Stream, settings: WatchSettings, *,
                 advance: Callable[[int], None] | None = None) -> WatchResult:
    """``watch`` over every day of ``stream`` (``advance(1)`` after each day, for a progress bar)."""
    watcher = Watcher(settings)
    for day in stream:
        logged = log_day(day.date, day.log, segments_by=settings.segments_by)
        watcher.add_day(logged.day, logged.tallies, logged.volume)
        if advance is not None:
            advance(1)
    return watcher.result()


def touches(planted: Planted, segment: Segment) -> bool:
    """Whether a change touches a watched segment (module docstring)."""
    columns = dict(segment)
    if planted.shares is not None:
        return any(column not in columns for column in planted.shares)
    return all(columns.get(column, value) == value for column, value in planted.segment.items())


def outcomes(planted: tuple[Planted, ...], result: WatchResult) -> tuple[ChangeOutcome, ...]:
    """Each change with the alarm that caught it (module docstring), in the section's order."""
    position = {day: index for index, day in enumerate(result.days)}
    alarms = [alarm for alarm in result.alarms if alarm.kind in (ERROR_ABOVE_TARGET, CALIBRATION_CONTRADICTED)]
    taken: set[int] = set()
    found: dict[int, ChangeOutcome] = {}
    for entry in sorted(planted, key=lambda entry: entry.position):
        watched = max(len(result.days) - entry.from_day + 1, 0)
        caught: Detection | None = None
        if watched:
            index = next((index for index, alarm in enumerate(alarms)
                          if index not in taken and position[alarm.day] >= entry.from_day - 1
                          and touches(entry, alarm.segment)), None)
            if index is not None:
                taken.add(index)
                caught = _detection(alarms[index], position[alarms[index].day] - entry.from_day + 2)
        touched = sum(touches(entry, timeline.segment) for timeline in result.segments)
        found[entry.position] = ChangeOutcome(entry, caught, watched, touched)
    return tuple(found[key] for key in sorted(found))


def _detection(alarm: Alarm, delay: int) -> Detection:
    return Detection(alarm.day, alarm.kind, alarm.segment, delay)

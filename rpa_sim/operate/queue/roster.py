"""Who is on duty when: each reviewer's working hours from a day's plan of shifts.

The plan gives, for stretches of the day, how many reviewers are on the
floor (after shrinkage). Reviewer ``j`` (counting from 0) works in every
stretch that has more than ``j`` reviewers, the same hours every day; a
reviewer whose hours end mid-task finishes the task, then leaves. Times are
seconds from the start of the simulation (a Monday, 00:00).

Examples
--------
>>> roster = Roster([(8, 12, 3), (12, 17, 2)])
>>> roster.size, roster.on_floor_at(9 * 3600.0), roster.on_floor_at(13 * 3600.0), roster.on_floor_at(0.0)
(3, 3, 2, 0)
>>> [h / 3600 for h in roster.stretch(2, 13 * 3600.0)]  # reviewer 2 works 08:00-12:00: tomorrow's stretch
[32.0, 36.0]
>>> roster.reviewer_seconds(0.0, 86400.0) / 3600  # reviewer-hours in a day
22.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rpa_sim.operate.queue.settings import Reviewers

__all__ = ["Roster", "DAY"]

DAY = 86400.0
_HOUR = 3600.0


class Roster:
    """The daily plan ``(start_hour, end_hour, reviewers on the floor)`` of non-overlapping stretches, hours
    not covered having nobody.

    Build one with :meth:`constant` or :meth:`from_settings`.
    """

    def __init__(self, plan: Sequence[tuple[float, float, int]]) -> None:
        self._plan = sorted((float(start) * _HOUR, float(end) * _HOUR, int(count)) for start, end, count in plan)
        self.size = max(count for _, _, count in self._plan)
        self._daily: list[list[tuple[float, float]] | None] = [self._hours_of(j) for j in range(self.size)]
        self.always_on = all(hours is None for hours in self._daily)
        self._per_day = sum((end - start) * count for start, end, count in self._plan)

    @classmethod
    def constant(cls, reviewers: int) -> Roster:
        """``reviewers`` on the floor around the clock."""
        return cls([(0.0, 24.0, reviewers)])

    @classmethod
    def from_settings(cls, reviewers: Reviewers) -> Roster:
        """The roster of validated settings (shrinkage applied)."""
        return cls(reviewers.on_floor())

    def _hours_of(self, reviewer: int) -> list[tuple[float, float]] | None:
        """Reviewer's stretches on duty within a day, merged; a stretch through midnight is one stretch
        ending after ``DAY``; None when on duty all day."""
        stretches: list[tuple[float, float]] = []
        for start, end, count in self._plan:
            if count > reviewer:
                if stretches and stretches[-1][1] == start:
                    stretches[-1] = (stretches[-1][0], end)
                else:
                    stretches.append((start, end))
        if stretches == [(0.0, DAY)]:
            return None
        if len(stretches) > 1 and stretches[0][0] == 0.0 and stretches[-1][1] == DAY:
            first = stretches.pop(0)
            stretches[-1] = (stretches[-1][0], DAY + first[1])
        return stretches

    def stretch(self, reviewer: int, time: float) -> tuple[float, float]:
        """``(start, end)`` of the reviewer's stretch on duty containing ``time``, or else of the next one;
        ``(-inf, inf)`` for a reviewer always on duty."""
        hours = self._daily[reviewer]
        if hours is None:
            return -math.inf, math.inf
        day = math.floor(time / DAY)
        # yesterday's stretch may run through midnight; tomorrow's first one starts after ``time``
        for offset in ((day - 1) * DAY, day * DAY):
            for start, end in hours:
                if end + offset > time:
                    return start + offset, end + offset
        start, end = hours[0]
        return start + (day + 1) * DAY, end + (day + 1) * DAY

    def on_floor_at(self, time: float) -> int:
        """Reviewers on duty at ``time``."""
        moment = time % DAY
        return next((count for start, end, count in self._plan if start <= moment < end), 0)

    def _since_midnight(self, moment: float) -> float:
        return sum(count * min(max(moment - start, 0.0), end - start) for start, end, count in self._plan)

    def reviewer_seconds(self, start: float, end: float) -> float:
        """Reviewer-seconds on duty between ``start`` and ``end``."""
        def until(time: float) -> float:
            days = math.floor(time / DAY)
            return days * self._per_day + self._since_midnight(time - days * DAY)

        return until(end) - until(start)

    def on_duty_seconds(self, reviewer: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
        """Seconds of the spans ``[start, end)`` (``end >= start``) within the hours on duty of their
        ``reviewer``: a review that runs past its reviewer's shift counts only up to the shift's end (the
        rest is overtime, not staffed time).

        Examples
        --------
        >>> roster = Roster([(8, 12, 2), (12, 17, 1)])
        >>> hour = 3600.0
        >>> # reviewer 1 leaves at 12:00: of a review 11:30-12:30, 30 minutes were on duty
        >>> roster.on_duty_seconds(np.array([1]), np.array([11.5 * hour]), np.array([12.5 * hour])) / hour
        0.5
        """
        total = 0.0
        for index in range(self.size):
            mine = reviewer == index
            if mine.any():
                total += float((self._on_duty_until(index, end[mine]) - self._on_duty_until(index, start[mine])).sum())
        return total

    def _on_duty_until(self, reviewer: int, time: np.ndarray) -> np.ndarray:
        """The reviewer's seconds on duty from 0 to each of ``time``."""
        days = np.floor(time / DAY)
        moment = time - days * DAY
        stretches = [(start, end) for start, end, count in self._plan if count > reviewer]
        per_day = sum(end - start for start, end in stretches)
        return days * per_day + sum(np.clip(moment - start, 0.0, end - start) for start, end in stretches)

    def off_duty_hours(self) -> list[tuple[float, float]]:
        """The hours of the day ``(start_hour, end_hour)`` with nobody on duty."""
        gaps, reached = [], 0.0
        for start, end, _ in self._plan:
            if start > reached:
                gaps.append((reached / _HOUR, start / _HOUR))
            reached = end
        if reached < DAY:
            gaps.append((reached / _HOUR, 24.0))
        return gaps

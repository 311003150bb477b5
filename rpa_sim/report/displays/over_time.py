"""The stream over time, one small panel per watched segment: the error rate and its interval against the target,
the days the changes were planted, and the alarms and notices raised (the summary's ``stream``).

Small multiples: every panel shares both axes (the stream's days, and the error rate from 0 to at most 2.5 times
the target, higher when a segment's rate climbs above it), two panels a row, so that a phone shows six
segments on one screen and the eye compares them without reading a scale twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.lines import Line2D

from rpa_sim.operate.live.result import CALIBRATION_CONTRADICTED, ERROR_ABOVE_TARGET, ROOM_TO_AUTOMATE, segment_name
from rpa_sim.operate.stream.watched import touches
from rpa_sim.report.displays.base import SummaryDisplay
from rpa_sim.report.style import PALETTE, label

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.operate.live.result import SegmentTimeline
    from rpa_sim.operate.stream.watched import StreamResult
    from rpa_sim.study.result import StudySummary

__all__ = ["OverTimeDisplay", "ALARM_MARKS", "error_ceiling"]

#: How each kind of alarm is marked over its day: the marker, its colour and what the legend says.
ALARM_MARKS = {ERROR_ABOVE_TARGET: ("v", PALETTE[3], "error above target"),
               CALIBRATION_CONTRADICTED: ("D", PALETTE[4], "calibration contradicted"),
               ROOM_TO_AUTOMATE: ("^", PALETTE[2], "room to automate (a proposal)")}
_RATE, _CHANGE = PALETTE[0], "grey"
#: Where the alarms' marks sit, as a share of the panel's height.
_MARK_HEIGHT = 0.9


def error_ceiling(stream: StreamResult) -> float:
    """The top of every panel: 2.5 times the target, or a quarter above the highest estimate when a segment climbs
    higher (at most 1): the intervals of the first days, which rest on a few audits, are cut there.

    >>> from rpa_sim.operate.live.result import WatchResult
    >>> from rpa_sim.operate.stream.watched import StreamResult
    >>> watch = WatchResult(max_error=0.04, delta=0.05, segments_by=("source",), horizon_days=365, days=(),
    ...                     segments=(), alarms=())
    >>> error_ceiling(StreamResult("p", 0.9, "", "2024-01-01", 0, 1, 0, (), watch))
    0.1
    """
    estimates = [day.estimate for timeline in stream.watch.segments for day in timeline.days
                 if day.estimate is not None]
    return float(min(1.0, max(2.5 * stream.watch.max_error, 1.25 * max(estimates, default=0.0))))


class OverTimeDisplay(SummaryDisplay):
    """Per watched segment (panels, two a row), each day's error rate of its current regime (a line) inside its
    interval from the time-uniform lower bound to the regime's upper end (a band), the target (dashed), the days
    a change that touches the segment was planted (dotted) and the alarms and notices raised (marks at the top).

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    stream : StreamResult
        The summary's stream.

    Attributes
    ----------
    figure_ : Figure
    axes_ : ndarray of Axes
        The panels, one per segment in the watch's order, row by row (a last panel left empty when the
        segments are odd).
    """

    def __init__(self, *, stream: StreamResult) -> None:
        self.stream = stream

    @classmethod
    def from_summary(cls, summary: StudySummary) -> OverTimeDisplay:
        """The stream of a study with a ``stream:`` section.

        Raises
        ------
        ValueError
            When the study has no stream.
        """
        if summary.stream is None or not summary.stream.watch.segments:
            raise ValueError("the run has no stream: add a stream: section to the scenario (docs/live.md)")
        return cls(stream=summary.stream)

    def plot(self, ax: np.ndarray | None = None) -> OverTimeDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : ndarray of Axes, optional
            The panels, one per segment (any shape holding that many, in row order). Without them a figure is
            made, two panels a row, with a legend under them.

        Returns
        -------
        OverTimeDisplay
            ``self``, with ``figure_`` and ``axes_`` set.
        """
        segments = self.stream.watch.segments
        columns = 1 if len(segments) == 1 else 2
        rows = -(-len(segments) // columns)
        if ax is not None:  # the caller's panels, one per segment in row order
            rows, columns = len(segments), 1
        grid = self.panels(ax, rows, columns, size=(7.5, 1.2 + 2.3 * rows), sharex=True, sharey=True)
        panels = list(grid.reshape(-1))
        ceiling = error_ceiling(self.stream)
        for index, (timeline, axes) in enumerate(zip(segments, panels)):
            self._segment(axes, timeline, ceiling, xlabel="day of the stream" if index >= len(segments) - columns
                          else "", ylabel="error rate" if index % columns == 0 else "")
        for axes in panels[len(segments):]:
            axes.set_axis_off()
        self.axes_ = grid
        if ax is None:
            self.figure_.legend(handles=self._legend(), loc="outside lower center", ncols=2, fontsize=8,
                                frameon=False)
        return self

    def _segment(self, axes: Axes, timeline: SegmentTimeline, ceiling: float, *, xlabel: str, ylabel: str) -> None:
        """One segment's panel."""
        watch = self.stream.watch
        position = {day: number for number, day in enumerate(watch.days, start=1)}
        day = np.array([position[figures.day] for figures in timeline.days])
        low = np.array([figures.low for figures in timeline.days])
        high = np.array([np.nan if figures.high is None else figures.high for figures in timeline.days])
        estimate = np.array([np.nan if figures.estimate is None else figures.estimate for figures in timeline.days])
        axes.fill_between(day, low, np.minimum(high, ceiling), color=_RATE, alpha=0.25, linewidth=0, step="mid")
        axes.plot(day, estimate, color=_RATE, linewidth=1.3, drawstyle="steps-mid")
        axes.axhline(watch.max_error, color="black", linestyle="--", linewidth=1)
        for change in self.stream.changes:
            if change.days_watched and change.touched and touches(change.planted, timeline.segment):
                axes.axvline(change.planted.from_day, color=_CHANGE, linestyle=":", linewidth=1.4)
        for alarm in watch.alarms:
            if alarm.segment == timeline.segment:
                marker, color, _ = ALARM_MARKS[alarm.kind]
                axes.plot([position[alarm.day]], [_MARK_HEIGHT * ceiling], marker=marker, color=color, markersize=7,
                          linestyle="none")
        label(axes, f"{segment_name(timeline.segment)}: {timeline.status}", xlabel, ylabel)
        axes.title.set_fontsize(10)
        axes.set_xlim(0.5, len(watch.days) + 0.5)
        axes.set_ylim(0.0, ceiling)

    def _legend(self) -> list[Line2D]:
        target = self.stream.watch.max_error
        handles = [Line2D([], [], color=_RATE, label="error rate of the regime"),
                   Line2D([], [], color=_RATE, alpha=0.4, linewidth=6, label="interval [low, high]"),
                   Line2D([], [], color="black", linestyle="--", label=f"target {target:g}"),
                   Line2D([], [], color=_CHANGE, linestyle=":", label="a change planted")]
        return handles + [Line2D([], [], marker=marker, color=color, linestyle="none", label=text)
                          for marker, color, text in ALARM_MARKS.values()]

"""The dashboard's Live view: the scenario's stream watched, day by day, per segment.

Shown only for a scenario with a ``stream:`` section (its tab appears with the
summary, which holds the stream watched: ``StudySummary.stream``). The view
reads a day of the stream, the last one at first: the segments as rows with
their status and interval that day, the selected segment's timeline (its
error rate, interval and the target, the day marked) and the alarms raised up
to that day, newest first. ``,`` and ``.`` step a day back and on, ``<`` and
``>`` a week, ``n`` and ``N`` select the next and the previous segment. It draws
what the summary holds and computes nothing of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual_plotext import PlotextPlot

from rpa_sim.operate.live.result import ROOM_TO_AUTOMATE, day_status, segment_name
from rpa_sim.tui.views.base import View
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import Marker
from rpa_sim.tui.widgets.readout import Readout
from rpa_sim.tui.widgets.text_table import TextTable

if TYPE_CHECKING:
    from rpa_sim.operate.live.result import DayFigures, SegmentTimeline
    from rpa_sim.operate.stream.watched import StreamResult

__all__ = ["LiveView", "WEEK"]

#: days ``<`` and ``>`` step
WEEK = 7
RATE, BOUNDS, TARGET, TODAY = Marker("●", "cyan+"), Marker("┄", "cyan"), Marker("─", "gray"), Marker("│", "orange+")
ALARMS = {"error_above_target": Marker("▼", "red+"), "calibration_contradicted": Marker("◆", "magenta+"),
          "room_to_automate": Marker("▲", "green+")}


class LiveView(View):
    """The stream's segments on a day, the selected segment's timeline and the alarms so far."""

    stem = "live"
    # in help and under the alarms, not in the footer: the footer keeps τ's keys and the decision at 80 columns
    BINDINGS = [Binding("comma", "day(-1)", "Day −", show=False), Binding("full_stop", "day(1)", "Day +", show=False),
                Binding("less_than_sign", f"day(-{WEEK})", "Week −", show=False),
                Binding("greater_than_sign", f"day({WEEK})", "Week +", show=False),
                Binding("n", "segment(1)", "Next segment", show=False),
                Binding("N", "segment(-1)", "Previous segment", show=False)]
    DEFAULT_CSS = """
    LiveView #live-note { height: auto; padding: 0 1; }
    LiveView #live-segments { height: auto; max-height: 9; padding: 0 1; }
    LiveView #live-timeline { height: 1fr; min-height: 7; }
    LiveView #live-alarms { height: 4; padding: 0 1; }
    """
    #: the day shown, an index into the stream's days (None: the last)
    day: int | None = None
    #: the selected segment, an index into the watch's segments
    segment = 0

    def compose(self) -> ComposeResult:
        yield Readout(id="live-note")
        yield TextTable(id="live-segments")
        yield PlotextPlot(id="live-timeline")
        yield Legend(id="live-legend")
        yield TextTable(id="live-alarms")

    @property
    def stream(self) -> StreamResult | None:
        summary = self.state.model.summary if self.state.model is not None else None
        return None if summary is None else summary.stream

    def today(self) -> int:
        """The index of the day shown."""
        stream = self.stream
        last = 0 if stream is None else len(stream.watch.days) - 1
        return last if self.day is None else min(max(self.day, 0), last)

    # -- keys -----------------------------------------------------------------------------------------

    def action_day(self, steps: int) -> None:
        """A day (or a week) back or on, within the stream."""
        stream = self.stream
        if stream is None:
            return
        self.day = min(max(self.today() + steps, 0), len(stream.watch.days) - 1)
        self.redraw()

    def action_segment(self, step: int) -> None:
        stream = self.stream
        if stream is None or not stream.watch.segments:
            return
        self.segment = (self.segment + step) % len(stream.watch.segments)
        self.redraw()

    # -- drawing --------------------------------------------------------------------------------------

    def redraw(self) -> None:
        model = self.state.model
        if model is None:
            return
        stream = self.stream
        if stream is None or not stream.watch.days:
            self.query_one("#live-note", Readout).show_text(
                "Live: waiting for the comparison of the policies (it holds the stream watched)…"
                if not model.summarised else "This scenario has no stream: section (docs/live.md).")
            return
        watch, today = stream.watch, self.today()
        date = watch.days[today]
        self.query_one("#live-note", Readout).show_text(
            f"day {today + 1}/{len(watch.days)} · {date} · {stream.policy} at τ {stream.threshold:g} · target "
            f"{watch.max_error:g} · δ {watch.delta:g}")
        self.draw_segments(stream, today)
        timeline = watch.segments[self.segment % len(watch.segments)]
        self.draw_timeline(stream, timeline, today)
        self.draw_alarms(stream, date)

    def draw_segments(self, stream: StreamResult, today: int) -> None:
        """A row per segment: its status, its interval and its alarms so far, on the day shown."""
        watch = stream.watch
        date = watch.days[today]
        names = [segment_name(timeline.segment) for timeline in watch.segments]
        width = max(len("segment"), *map(len, names))
        lines = []
        for index, (name, timeline) in enumerate(zip(names, watch.segments)):
            figures = _on(timeline, date)
            status = "-" if figures is None else day_status(figures, max_error=watch.max_error)
            interval = "-" if figures is None else (f"{_rate(figures.estimate)} [{_rate(figures.low)}, "
                                                    f"{_rate(figures.high)}]")
            raised = sum(alarm.segment == timeline.segment and alarm.day <= date and alarm.kind != ROOM_TO_AUTOMATE
                         for alarm in watch.alarms)
            mark = "▶" if index == self.segment % len(watch.segments) else " "
            lines.append(f"{mark} {name:<{width}}  {status:<13}  {interval:<21}  {raised}")
        header = f"  {'segment':<{width}}  {'status':<13}  {'error [low, high]':<21}  alarms"
        self.query_one("#live-segments", TextTable).show(header, lines)

    def draw_timeline(self, stream: StreamResult, timeline: SegmentTimeline, today: int) -> None:
        """The selected segment's error rate, interval and target over the stream's days, the day shown marked."""
        watch = stream.watch
        position = {date: number for number, date in enumerate(watch.days, start=1)}
        days = [position[figures.day] for figures in timeline.days]
        plot = self.query_one("#live-timeline", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        top = min(1.0, max(2.5 * watch.max_error, *(1.25 * figures.estimate for figures in timeline.days
                                                    if figures.estimate is not None)))
        for values, marker in (([figures.low for figures in timeline.days], BOUNDS),
                               ([min(top, figures.high) if figures.high is not None else None
                                 for figures in timeline.days], BOUNDS),
                               ([figures.estimate for figures in timeline.days], RATE)):
            known = [(day, value) for day, value in zip(days, values) if value is not None]
            if known:
                plt.plot(*zip(*known), color=marker.color, marker="braille")
        plt.hline(watch.max_error, color=TARGET.color)
        plt.vline(today + 1, color=TODAY.color)
        for alarm in watch.alarms:
            if alarm.segment == timeline.segment:
                plt.scatter([position[alarm.day]], [0.92 * top], color=ALARMS[alarm.kind].color,
                            marker=ALARMS[alarm.kind].symbol)
        plt.xlim(1, len(watch.days))
        plt.ylim(0, top)
        plt.title(f"{segment_name(timeline.segment)}: error rate by day of the stream")
        plot.refresh()
        self.query_one("#live-legend", Legend).show_entries(
            [(RATE, "rate"), (BOUNDS, "interval"), (TARGET, "target"), (TODAY, "day"),
             *((marker, label) for marker, label in zip(ALARMS.values(), ("error", "calibration", "room")))])

    def draw_alarms(self, stream: StreamResult, date: str) -> None:
        """The alarms raised up to the day shown, newest first, with their evidence and proposal."""
        lines = []
        for alarm in reversed(stream.watch.alarms):
            if alarm.day > date:
                continue
            evidence = f"{alarm.errors_found:,} errors in {alarm.audited:,} audits since {alarm.since}"
            proposal = "" if alarm.proposal is None else f" · {alarm.proposal.short}"
            lines.append(f"{alarm.day}  {segment_name(alarm.segment)}  {alarm.kind.replace('_', ' ')}: "
                         f"{evidence}{proposal}")
        self.query_one("#live-alarms", TextTable).show(
            f"alarms up to {date} ({len(lines):,}) · keys: , . a day  < > a week  n N a segment", lines)

    # -- export ---------------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """Per segment and day up to the day shown: the segment's columns, then the day's figures."""
        stream = self.stream
        if stream is None or not stream.watch.days:
            return []
        date = stream.watch.days[self.today()]
        return [{**dict(timeline.segment), **figures.to_dict(), "alarm": ";".join(figures.alarm)}
                for timeline in stream.watch.segments for figures in timeline.days if figures.day <= date]


def _on(timeline: SegmentTimeline, date: str) -> DayFigures | None:
    """The segment's figures on ``date`` (None before its first day)."""
    return next((figures for figures in timeline.days if figures.day == date), None)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"

"""The report's Over time section: the scenario's stream watched, per segment, against the target.

Drawn from the summary's stream (``StudySummary.stream``, made by :mod:`rpa_sim.study.stream`): what the stream
is, the guarantee in one sentence, the small multiples of every segment's error rate and interval against the
target with the changes and alarms marked (:mod:`rpa_sim.report.displays.over_time`), each change with the day
it happened and the day it was caught, each segment's status on the last day, and every alarm with its
proposal. :func:`rpa_sim.report.page.render_report` adds it only when the summary has a stream, so other reports
keep their bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, number
from rpa_sim.operate.live.result import segment_name
from rpa_sim.report.html import escape, table
from rpa_sim.report.svg import figure_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.operate.stream.watched import StreamResult

__all__ = ["over_time_section"]

_KINDS = {"error_above_target": "error above target", "calibration_contradicted": "calibration contradicted",
          "room_to_automate": "room to automate"}


def over_time_section(stream: StreamResult, figures: dict[str, Figure]) -> list[str]:
    """The section's HTML parts: the explanation, the guarantee, the plot and the changes', segments' and
    alarms' tables."""
    watch = stream.watch
    parts = [
        '<h2 id="over-time">Over time</h2>',
        f'<p class="explain">A threshold decided once then lives in production, where things change. Here the '
        f"study's data is drawn as {stream.days:,} days of production ({count(stream.documents_per_day)} documents a "
        f"day from {escape(stream.start)}, routed by <strong>{escape(stream.policy)}</strong> at τ "
        f"{number(stream.threshold)}, audit {escape(stream.audit)}), in which the scenario plants "
        f"{_changes(len(stream.changes))}, and <code>rpa-sim watch</code> follows the error rate of what goes "
        f"straight through, per {escape(', '.join(watch.segments_by))}, day by day, against the target of "
        f"{number(watch.max_error)}. An alarm says a segment's error rate is above the target "
        "(error above target), or that its audits contradict what its confidences predicted (calibration "
        "contradicted); a notice says a calm segment could go straight through more (room to automate).</p>",
        f'<p class="explain" id="over-time-guarantee"><strong>The guarantee.</strong> {escape(watch.guarantee)}</p>',
    ]
    if "over-time" in figures:
        parts.append(figure_html(
            figures["over-time"], "over-time",
            "Per segment, day by day: the error rate of its current regime (line) and its interval, from the lower "
            "bound that holds on every day at once to the regime's upper end (band), against the target (dashed); "
            "the days a change touching the segment was planted (dotted); the alarms and notices (marks at the "
            "top). Panels share their axes; the intervals of the first days, which rest on a few audits, are cut "
            "at the top."))
    rows = [[str(change.planted.from_day), change.planted.text or f"{change.planted.kind} from day "
             f"{change.planted.from_day}", change.text] for change in stream.changes]
    parts += [
        '<p class="explain">Each change: the day of the stream it starts on, what it plants (the segment\'s figures '
        "the day before and from that day, expected over the draws), and the alarm that caught it, on a segment it "
        "touches, counting its day as day 1 (docs/live.md).</p>",
        table(["day", "the change, and what it plants", "caught"], rows, table_id="over-time-changes"),
    ]
    rows = [[segment_name(timeline.segment), timeline.status,
             _interval(timeline.days[-1].estimate, timeline.days[-1].low, timeline.days[-1].high),
             timeline.first_alarm or "-", "-" if timeline.proposal is None else timeline.proposal.short]
            for timeline in watch.segments]
    marks = {(index, 1): "unmet" if timeline.status == "above target" else "met"
             for index, timeline in enumerate(watch.segments) if timeline.status in ("above target", "within target")}
    parts += [
        f'<p class="explain">Each segment on the last day, {escape(watch.days[-1] if watch.days else "-")}: its '
        "status, its error rate with its interval, its first alarm and what to do now: a threshold and the reviews "
        "a day it adds or saves, an audit that would settle it, or review all.</p>",
        table(["segment", "status", "error [low, high]", "first alarm", "to do"], rows, table_id="over-time-segments",
              marks=marks),
    ]
    if watch.alarms:
        rows = [[alarm.day, segment_name(alarm.segment), _KINDS[alarm.kind], alarm.since,
                 f"{count(alarm.errors_found)} of {count(alarm.audited)}",
                 _interval(alarm.estimate, alarm.low, alarm.high),
                 "-" if alarm.proposal is None else alarm.proposal.reason] for alarm in watch.alarms]
        parts += [
            '<p class="explain">Every alarm and notice, dated: the first day of its evidence (the change point the '
            "method estimates), the errors its audits found among the audited units since, the error rate with "
            "its interval that day, and the proposal.</p>",
            table(["day", "segment", "alarm", "since", "errors found", "error [low, high]", "proposal"], rows,
                  table_id="over-time-alarms"),
        ]
    return parts


def _changes(changes: int) -> str:
    return "no change" if not changes else "one change" if changes == 1 else f"{changes:,} changes"


def _interval(estimate: float | None, low: float, high: float | None) -> str:
    return f"{number(estimate, 3)} [{number(low, 3)}, {number(high, 3)}]"

"""The report's Over time section (issue 28, item 4): present only with a stream, its figures drawn from the
summary's watch result (numbers where they should be), and readable at 390 px (a 5 in figure, no text below
10 pt, nothing cut)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from rpa_sim.operate.live.result import segment_name
from rpa_sim.report.displays import OverTimeDisplay
from rpa_sim.report.displays.over_time import ALARM_MARKS, error_ceiling
from tests.support_report import parse_html, run_yaml
from tests.support_stream import SCENARIO

# the planted stream, small: 20 days from day 16 on with three changes, every auto-accepted unit audited
STREAMED = (SCENARIO.replace("n: 150", "n: 60").replace("days: 30", "days: 24").replace("documents_per_day: 120",
                                                                                        "documents_per_day: 60")
            .replace("policies: [confidence]", "policies: [confidence]\ntargets: [0.9]"))
PLAIN = STREAMED[:STREAMED.index("stream:")]


@pytest.fixture(scope="module")
def streamed(tmp_path_factory):
    return run_yaml(tmp_path_factory.mktemp("streamed"), STREAMED)


def test_the_section_is_there_only_with_a_stream(streamed, tmp_path):
    from rpa_sim.report.figures import report_figures
    from rpa_sim.report.page import render_report

    figures = report_figures(streamed)
    assert "over-time" in figures
    page = parse_html(render_report(streamed, figures=figures))
    assert {"over-time", "over-time-guarantee", "plot-over-time", "svg-over-time"} <= set(page.ids)
    assert page.texts["over-time-guarantee"] == f"The guarantee. {streamed.summary.stream.watch.guarantee}"
    stream = streamed.summary.stream
    changes = page.tables["over-time-changes"]
    assert changes["header"] == ["day", "the change, and what it plants", "caught"]
    assert changes["rows"] == [[str(change.planted.from_day), change.planted.text, change.text]
                               for change in stream.changes]
    segments = page.tables["over-time-segments"]
    assert [row[:2] for row in segments["rows"]] == [[segment_name(timeline.segment), timeline.status]
                                                     for timeline in stream.watch.segments]
    assert [row[0] for row in page.tables["over-time-alarms"]["rows"]] == [alarm.day for alarm in
                                                                          stream.watch.alarms]
    # the new template's segment is above target on the last day, marked as a constraint not met
    template = next(index for index, timeline in enumerate(stream.watch.segments)
                    if dict(timeline.segment) == {"document_type": "x", "source": "a"})
    assert segments["rows"][template][1] == "above target" and "unmet" in segments["classes"][template][1]
    plain = run_yaml(tmp_path, PLAIN)
    assert "over-time" not in report_figures(plain)
    assert "over-time" not in parse_html(render_report(plain)).ids
    with pytest.raises(ValueError, match="the run has no stream: add a stream: section"):
        OverTimeDisplay.from_result(plain)


def test_each_panel_draws_its_segments_figures_the_target_the_changes_and_the_alarms(streamed):
    stream = streamed.summary.stream
    watch = stream.watch
    figure = Figure()
    axes = figure.subplots(len(watch.segments), 1)
    display = OverTimeDisplay.from_summary(streamed.summary).plot(ax=axes)
    assert display.figure_ is figure and display.axes_.shape == (len(watch.segments), 1)
    ceiling = error_ceiling(stream)
    for panel, timeline in zip(axes, watch.segments):
        assert panel.get_title() == f"{segment_name(timeline.segment)}: {timeline.status}"
        estimate, target, *rest = panel.get_lines()
        x, y = estimate.get_data()
        assert list(x) == list(range(1, len(timeline.days) + 1))
        assert np.array_equal(y, [np.nan if day.estimate is None else day.estimate for day in timeline.days],
                              equal_nan=True)
        assert list(target.get_ydata()) == [watch.max_error] * 2
        planted = [line.get_xdata()[0] for line in rest if line.get_linestyle() == ":"]
        touched = [change.planted.from_day for change in stream.changes
                   if change.touched and dict(timeline.segment).items() >= change.planted.segment.items()]
        assert planted == touched
        marks = [(line.get_marker(), line.get_xdata()[0], line.get_ydata()[0]) for line in rest
                 if line.get_linestyle() == "None"]
        assert marks == [(ALARM_MARKS[alarm.kind][0], watch.days.index(alarm.day) + 1, 0.9 * ceiling)
                         for alarm in watch.alarms if alarm.segment == timeline.segment]
        assert panel.get_ylim() == (0.0, ceiling)
    # the changed cells are caught; the mix moves no watched segment's error rate
    assert {change.planted.kind for change in stream.changes if change.caught is not None} >= {
        "new_template", "degraded_scans"}


def test_the_small_multiples_read_on_a_phone(streamed):
    """At 390 px: 5 in wide, no text below 10 pt, every title, label and legend entry inside the figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rpa_sim.report.figures import report_figures
    from rpa_sim.report.style import FIGURE_WIDTH_INCHES, SMALLEST_FONT_POINTS

    figure = report_figures(streamed)["over-time"]
    assert figure.get_size_inches()[0] <= FIGURE_WIDTH_INCHES
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    texts = [*figure.texts, *(text for legend in figure.legends for text in legend.get_texts())]
    for axes in figure.axes:
        texts += [axes.title, axes.xaxis.label, axes.yaxis.label]
        assert all(label.get_fontsize() >= SMALLEST_FONT_POINTS for label in [*axes.get_xticklabels(),
                                                                              *axes.get_yticklabels()])
    shown = [text for text in texts if text.get_text()]
    assert len(shown) > 10
    for text in shown:
        assert text.get_fontsize() >= SMALLEST_FONT_POINTS, text.get_text()
        box = text.get_window_extent(renderer)
        assert box.x0 >= -1 and box.x1 <= figure.bbox.x1 + 1, text.get_text()
        assert box.y0 >= -1 and box.y1 <= figure.bbox.y1 + 1, text.get_text()
    # two panels a row: a phone shows the segments side by side, two at a time
    assert len(figure.axes) == 4 and len({round(axes.get_position().x0, 3) for axes in figure.axes}) == 2

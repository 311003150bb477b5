"""The report's figures keep their texts apart and readable (issue 29, item 7): the labels of points at one τ do
not overlap, and counts and money are ticked with thousands separators and no spurious decimals (the report's
formatter and the dashboard's plots share rpa_sim.common.ticks)."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Annotation

from rpa_sim.common.ticks import amount_labels, round_ticks
from rpa_sim.report.displays.cost import CostDisplay
from rpa_sim.report.displays.lines import MarkedPoint, PolicyLine
from rpa_sim.report.displays.tradeoff import TradeoffDisplay
from rpa_sim.report.style import AmountFormatter, fit_to_phone


def _point_labels(figure):
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    labels = [text for text in figure.findobj(Annotation) if text.get_visible() and text.get_text().startswith("τ ")]
    return labels, [text.get_window_extent(renderer) for text in labels]


def _assert_apart(boxes):
    for first in range(len(boxes)):
        for second in range(first + 1, len(boxes)):
            assert not boxes[first].overlaps(boxes[second]), (boxes[first], boxes[second])


def _line(label: str, shift: float, *thresholds: float) -> PolicyLine:
    x = np.linspace(0.0, 1.0, 21)
    return PolicyLine(label=label, x=x, y=0.7 + 0.2 * x + shift,
                      points=tuple(MarkedPoint(threshold=t, x=0.6, y=0.82 + shift) for t in thresholds))


@pytest.mark.parametrize("zoomed", [False, True])
def test_the_labels_of_points_at_one_tau_do_not_overlap(zoomed):
    # one policy with two points at τ 0.9 (two targets met at one τ), a second at the very same place, and three
    # more marking a point close by: policies 0 and 2 take label heights 9 points apart, less than a 10-point label
    lines = [_line("a", 0.0, 0.9, 0.9), _line("b", 0.0, 0.9), _line("c", 0.002, 0.9), _line("d", 0.001, 0.9),
             _line("e", 0.003, 0.9)]
    display = TradeoffDisplay(lines=lines, targets=[0.8], review_all=0.9, review_none=0.7, star=(0.6, 0.82),
                              metric_label="quality", window=(0.5, 0.7, 0.75, 0.9) if zoomed else None).plot()
    fit_to_phone(display.figure_)
    labels, boxes = _point_labels(display.figure_)
    assert len(labels) == 4  # the points at one place and one τ share one label
    assert {text.get_text() for text in labels} == {"τ 0.9000"}
    _assert_apart(boxes)


def test_the_cost_figures_labels_do_not_overlap():
    lines = [_line(name, shift, 0.95) for name, shift in (("a", 0.0), ("b", 0.001), ("c", 0.002))]
    display = CostDisplay(lines=lines, star=(0.6, 0.82), ylabel="cost (EUR)", window=(0.5, 0.7, 0.75, 0.9)).plot()
    fit_to_phone(display.figure_)
    labels, boxes = _point_labels(display.figure_)
    assert len(labels) == 3
    _assert_apart(boxes)


def test_amount_ticks_have_thousands_separators_and_no_spurious_decimals():
    formatter = AmountFormatter()
    assert formatter.format_ticks([10000.0, 10500.0, 11000.0]) == ["10,000", "10,500", "11,000"]
    assert formatter.format_ticks([10848.0, 10848.5, 10849.0]) == ["10,848.0", "10,848.5", "10,849.0"]
    assert formatter.format_ticks([1e6, 2e6]) == ["1,000,000", "2,000,000"]
    assert formatter.format_ticks([-0.0, 1.0, 2.0]) == ["0", "1", "2"]
    assert formatter.format_ticks([0.1, 0.2, 0.3]) == ["0.1", "0.2", "0.3"]


def test_the_cost_figure_ticks_money_as_amounts():
    x = np.linspace(0.0, 1.0, 21)
    line = PolicyLine(label="a", x=x, y=10_000.0 + 900.0 * x, points=(MarkedPoint(threshold=0.5, x=0.5, y=10_450.0),))
    display = CostDisplay(lines=[line], ylabel="cost (EUR)").plot()
    fit_to_phone(display.figure_)
    FigureCanvasAgg(display.figure_).draw()
    assert isinstance(display.ax_.yaxis.get_major_formatter(), AmountFormatter)
    ticks = [text.get_text() for text in display.ax_.get_yticklabels() if text.get_text()]
    assert ticks and all("," in tick and "." not in tick for tick in ticks if tick != "0"), ticks


@pytest.mark.parametrize(("low", "high", "most"), [(3795.3, 10848.1, 5), (0.0, 215.7 * 1.05, 4), (0.0, 2.1, 4),
                                                  (-12.5, 0.3, 5), (1e6, 1.0001e6, 5), (0.0, 1.0, 2)])
def test_round_ticks_are_few_round_and_inside_the_range(low, high, most):
    ticks = round_ticks(low, high, most=most)
    assert 1 <= len(ticks) <= most and all(low <= tick <= high for tick in ticks)
    if len(ticks) > 1:
        steps = np.diff(ticks)
        assert np.allclose(steps, steps[0])
        mantissa = steps[0] / 10.0 ** np.floor(np.log10(steps[0]))
        assert min(abs(mantissa - round_step) for round_step in (1.0, 2.0, 2.5, 5.0, 10.0)) < 1e-9
    assert len(set(amount_labels(ticks))) == len(ticks)  # as many decimals as the ticks need to differ
    assert round_ticks(3795.3, 10848.1) == [4000.0, 6000.0, 8000.0, 10000.0]
    assert amount_labels([4000.0, 6000.0, 8000.0, 10000.0]) == ["4,000", "6,000", "8,000", "10,000"]

"""MarkedPlot: marks drawn over a cached plotext figure land exactly where plotext's own scatter puts them."""

from __future__ import annotations

import asyncio
import functools

import numpy as np
import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.visual import Visual, visualize

from rpa_sim.tui.widgets.plot import MarkedPlot, Marker

RED = Marker("●", "red", "each policy")
BRIGHT_YELLOW = Marker("◆", "orange+", "selected")
STAR = Marker("★", "green")
XS = np.linspace(0, 1, 41)
YS = 0.6 + 0.4 * XS**2
XLIM, YLIM = (0.0, 1.0), (0.55, 1.02)


def run_async(test):
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))
    return wrapper


class PlotApp(App):
    def compose(self) -> ComposeResult:
        yield MarkedPlot(id="plot")


def curve(plt) -> None:
    plt.title("a curve")
    plt.xlabel("x")
    plt.ylabel("y")
    plt.plot(XS.tolist(), YS.tolist(), marker="braille")


def cells(strips) -> list[list[tuple]]:
    """Each line as (character, colour, background, bold) per cell: what the screen shows."""
    return [[(ch, seg.style.color, seg.style.bgcolor, seg.style.bold) for seg in strip for ch in seg.text]
            for strip in strips]


def plotext_drawing(plot: MarkedPlot, marks) -> list[list[tuple]]:
    """The same figure drawn by plotext alone, with the marks as scatter points (the oracle)."""
    plt = plot.plt
    plt.clear_figure()
    curve(plt)
    for x, y, marker in marks:
        plt.scatter([x], [y], marker=marker.symbol, color=marker.color)
    plt.xlim(*XLIM)
    plt.ylim(*YLIM)
    width, height = plot.size
    return cells(Visual.to_strips(plot, visualize(plot, plot.render(), markup=False), width, height,
                                  plot.visual_style))


def shown(plot: MarkedPlot) -> list[list[tuple]]:
    return cells([plot.render_line(y) for y in range(plot.size.height)])


@pytest.mark.parametrize("size", [(70, 24), (120, 40), (47, 17)])
@run_async
async def test_marks_land_where_plotext_puts_them(size):
    rng = np.random.default_rng(size[0])
    app = PlotApp()
    async with app.run_test(size=size) as pilot:
        plot = app.query_one(MarkedPlot)
        for _ in range(12):
            plot.draw(curve, xlim=XLIM, ylim=YLIM)
            # points on and off the curve, anywhere (no legend inside the plot)
            at = rng.uniform(0.0, 1.0, size=3)
            marks = [(float(x), float(0.6 + 0.4 * x**2), RED) for x in at[:2]]
            marks.append((float(at[2]), float(rng.uniform(0.55, 0.8)), BRIGHT_YELLOW))
            plot.mark(marks)
            await pilot.pause()
            mine = shown(plot)
            assert len(plot.marked_cells) >= 1
            assert mine == plotext_drawing(plot, marks)


@run_async
async def test_marks_outside_the_limits_or_not_finite_are_left_out_and_later_marks_win():
    app = PlotApp()
    async with app.run_test(size=(70, 24)) as pilot:
        plot = app.query_one(MarkedPlot)
        plot.draw(curve, xlim=XLIM, ylim=YLIM)
        plot.mark([(1.5, 0.8, RED), (0.5, 0.2, RED), (float("nan"), 0.8, RED), (0.5, float("inf"), RED)])
        await pilot.pause()
        assert plot.marked_cells == {}
        plot.mark([(0.5, 0.7, RED), (0.5, 0.7, STAR)])
        await pilot.pause()
        where = plot.cell(0.5, 0.7)
        assert plot.marked_cells == {where: "★"}
        assert plot.render_line(where[1]).text[where[0]] == "★"
        # the limits' corners are the canvas's corners
        top_right, bottom_left = plot.cell(XLIM[1], YLIM[1]), plot.cell(XLIM[0], YLIM[0])
        assert top_right[0] > bottom_left[0] and top_right[1] < bottom_left[1]


@run_async
async def test_moving_marks_repaints_only_the_lines_they_leave_and_enter():
    app = PlotApp()
    async with app.run_test(size=(70, 24)) as pilot:
        plot = app.query_one(MarkedPlot)
        plot.draw(curve, xlim=XLIM, ylim=YLIM)
        plot.mark([(0.5, 0.7, RED)])
        await pilot.pause()
        builds, regions = [], []
        original_render, original_refresh = plot.render, plot.refresh
        plot.render = lambda: builds.append(1) or original_render()

        def refresh(*args, **kwargs):
            regions.append(args)
            return original_refresh(*args, **kwargs)

        plot.refresh = refresh
        before = plot.cell(0.5, 0.7)
        plot.mark([(0.9, 0.95, RED)])
        after = plot.cell(0.9, 0.95)
        await pilot.pause()
        width = plot.size.width
        assert sorted(regions) == sorted([(Region(0, before[1], width, 1),), (Region(0, after[1], width, 1),)])
        assert builds == []  # the figure was not rebuilt
        assert plot.marked_cells == {after: "●"}
        regions.clear()
        plot.mark([(0.9, 0.95, RED)])  # nothing moved: nothing to repaint
        assert regions == []
        plot.draw(curve, xlim=XLIM, ylim=(0.0, 1.0))  # a new figure is built once, on the next paint
        await pilot.pause()
        assert builds == [1]
        assert plot.marked_cells == {plot.cell(0.9, 0.95): "●"}


@run_async
async def test_a_resize_rebuilds_the_figure_and_places_the_marks_again():
    app = PlotApp()
    async with app.run_test(size=(70, 24)) as pilot:
        plot = app.query_one(MarkedPlot)
        plot.draw(curve, xlim=XLIM, ylim=YLIM)
        plot.mark([(0.8, 0.9, RED)])
        await pilot.pause()
        small = plot.cell(0.8, 0.9)
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert plot.size == (100, 30)
        large = plot.cell(0.8, 0.9)
        assert large != small and plot.marked_cells == {large: "●"}
        assert shown(plot) == plotext_drawing(plot, [(0.8, 0.9, RED)])


def test_marker_and_limit_validation():
    with pytest.raises(ValueError, match="one cell wide, got 'ab'"):
        Marker("ab", "red")
    with pytest.raises(ValueError, match="one cell wide"):
        Marker("漢", "red")
    with pytest.raises(ValueError, match="not a plotext colour: 'yellow'"):
        Marker("●", "yellow")
    assert Marker("●", 208).style.color.number == 208
    with pytest.raises(ValueError, match=r"must be increasing, got xlim=\(1.0, 0.0\)"):
        MarkedPlot().draw(curve, xlim=(1.0, 0.0), ylim=YLIM)


@run_async
async def test_a_highlighted_mark_is_in_reverse_video_and_the_plot_holds_no_legend():
    app = PlotApp()
    async with app.run_test(size=(70, 24)) as pilot:
        plot = app.query_one(MarkedPlot)
        plot.draw(curve, xlim=XLIM, ylim=YLIM)
        selected = Marker("●", "red", highlight=True)
        plot.mark([(0.3, 0.7, RED), (0.8, 0.9, selected)])
        await pilot.pause()
        styles = {}
        for x, y in ((0.3, 0.7), (0.8, 0.9)):
            column, line = plot.cell(x, y)
            segment = next(iter(plot.render_line(line).crop(column, column + 1)))
            styles[(x, y)] = (segment.text, segment.style.color, bool(segment.style.reverse), bool(segment.style.bold))
        assert styles[(0.3, 0.7)] == ("●", RED.style.color, False, False)
        assert styles[(0.8, 0.9)] == ("●", RED.style.color, True, True)
        # a mark in the top-left corner shows: nothing is drawn there but the axes
        plot.mark([(XLIM[0], YLIM[1], RED)])
        await pilot.pause()
        assert plot.marked_cells == {plot.cell(XLIM[0], YLIM[1]): "●"}

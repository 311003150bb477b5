"""The Textual dashboard: Pilot tests of every key, the views, the layouts, loading, export and errors."""

from __future__ import annotations

import asyncio
import csv
import functools
import json
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from textual.widgets import DataTable, OptionList, ProgressBar, TabbedContent

from rpa_sim.common.errors import InputError
from rpa_sim.tui.app import DashboardApp
from rpa_sim.tui.help import HELP
from rpa_sim.tui.scale import ThresholdScale
from rpa_sim.tui.stages import Progress
from rpa_sim.tui.views.palette import policy_marker
from rpa_sim.tui.widgets.figures import FiguresPanel
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import MarkedPlot
from rpa_sim.tui.widgets.readout import Readout
from rpa_sim.tui.widgets.text_table import TextTable
from tests.support_tui import SCENARIO, loaded, notifications, ready

SIZE = (120, 40)
VQA_SCENARIO = """\
name: tui-vqa
data:
  generate: docvqa
  n: 80
  seed: 3
policies: [confidence, grounding-gate]
targets: [0.9]
"""


def run_async(test):
    """Run an async test with asyncio.run (the project has no async pytest plugin)."""
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))
    return wrapper


@pytest.fixture
def scenario(tmp_path: Path) -> str:
    path = tmp_path / "small.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return str(path)


@pytest.fixture
def vqa_scenario(tmp_path: Path) -> str:
    path = tmp_path / "vqa.yaml"
    path.write_text(VQA_SCENARIO, encoding="utf-8")
    return str(path)


def _panel_numbers(app) -> dict[str, str]:
    """The figures panel as shown: label -> the number's text, whatever the number of columns."""
    text = str(app.query_one(FiguresPanel).render())
    return {label: value for line in text.splitlines()[1:]
            for label, value in re.findall(r"(\S.*?)\s+(-?[\d,]*\.?\d+|-)(?=\s{3}|\s*$)", line)}


def _expected(app, threshold: float) -> dict[str, str]:
    at = app.model.sweepers[app.policy].at(threshold)
    parts = app.model.sweepers[app.policy].curve(np.array([threshold])).breakdown.at(0)
    return {"auto-rate": f"{at['auto_rate']:.4f}", "reviews needed": f"{at['reviewed']:,.0f}",
            "KIEval_Aligned^τ": f"{at['kieval_aligned']:.4f}",
            "residual substitutions": f"{at['residual_substitutions']:,.0f}",
            "residual deletions": f"{at['residual_deletions']:,.0f}", "residual additions": f"{at['additions']:,.0f}",
            "documents straight through": f"{at['documents_straight_through']:,.0f}",
            "cost (EUR)": f"{at['cost']:,.2f}", "error cost": f"{parts.errors:,.2f}"}


def _status(app) -> str:
    return str(app.query_one("#status").render())


def _tick_label(line: str) -> str | None:
    """The y axis's tick label a plot's line starts with, if any (``0.850┤...``)."""
    match = re.match(r"\s*(-?[\d.]+)[┤├]", line)
    return match.group(1) if match else None


def _x_axis(plot: MarkedPlot) -> tuple[float, float]:
    """The first and the last tick label of a plot's x axis, as the screen shows them."""
    lines = [plot.render_line(y).text for y in range(plot.size.height)]
    frame = next(y for y, line in enumerate(lines) if "└" in line)
    labels = [float(label) for label in lines[frame + 1].split()]
    return labels[0], labels[-1]


# -- the threshold: keys, steps finer near 1, slider, typed ------------------------------------------------

@run_async
async def test_keys_move_threshold_and_figures_match_sweeper(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.error is None and app.threshold == 0.5
        assert _expected(app, 0.5).items() <= _panel_numbers(app).items()
        await pilot.press("plus", "plus")
        assert app.threshold == 0.52
        assert _expected(app, 0.52).items() <= _panel_numbers(app).items()
        await pilot.press("minus")
        assert app.threshold == 0.51
        await pilot.press("right_square_bracket")
        assert app.threshold == 0.55  # the next coarse step's point
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.threshold == 0.45
        assert _expected(app, 0.45).items() <= _panel_numbers(app).items()
        await pilot.press("2")
        assert app.policy == 1
        assert _expected(app, 0.45).items() <= _panel_numbers(app).items()
        assert "τ = 0.4500 · document-escalation · step 0.01 (+ -), 0.05 (] [)" in _status(app)


@run_async
async def test_steps_are_ten_times_finer_from_0_9_and_take_half_the_slider(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        app.set_threshold(0.89)
        await pilot.press("plus")
        assert app.threshold == 0.9
        await pilot.press("plus", "plus")
        assert app.threshold == 0.902
        assert "step 0.001 (+ -), 0.005 (] [)" in _status(app)
        await pilot.press("right_square_bracket")
        assert app.threshold == 0.905
        await pilot.press("minus")
        assert app.threshold == 0.904
        assert _expected(app, 0.904).items() <= _panel_numbers(app).items()
        await pilot.press("left_square_bracket")
        assert app.threshold == 0.9
        await pilot.press("left_square_bracket")
        assert app.threshold == 0.85  # below 0.9, steps of 0.05 and 0.01 again
        await pilot.press("minus")
        assert app.threshold == 0.84
        # from 0.9 to 1 is 100 fine steps (0 to 0.9 is 90), and half the slider
        app.set_threshold(0.95)
        await pilot.pause()
        bar = str(app.query_one("#threshold-slider").render())
        track = bar[1:-1]
        assert track.index("●") == round(0.75 * (len(track) - 1))


@run_async
async def test_slider_keys_and_click(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.focused.id == "threshold-slider"
        await pilot.press("right")
        assert app.threshold == 0.51
        await pilot.press("shift+right")
        assert app.threshold == 0.55
        await pilot.press("end")
        assert app.threshold == 1.0
        await pilot.click("#threshold-slider", offset=(1, 0))
        assert app.threshold == 0.0
        assert _expected(app, 0.0).items() <= _panel_numbers(app).items()
        slider = app.query_one("#threshold-slider")
        middle = (slider.size.width - 3) // 2  # the middle of the track: about 0.9
        await pilot.click("#threshold-slider", offset=(1 + middle, 0))
        assert app.threshold == ThresholdScale().value_at(middle / (slider.size.width - 3))
        assert 0.89 <= app.threshold <= 0.91


@run_async
async def test_typed_threshold_then_the_keys_are_the_apps_again(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("equals_sign")
        box = app.query_one("#threshold-input")
        assert app.focused is box
        await pilot.press(*"0.83", "enter")
        assert app.threshold == 0.83
        assert _expected(app, 0.83).items() <= _panel_numbers(app).items()
        assert app.focused.id == "threshold-slider"  # Enter gives the keys back
        await pilot.press("2")
        assert app.policy == 1 and box.value == ""
        await pilot.click("#threshold-input")
        await pilot.press(*"0.7", "plus", "q")  # + and q are no part of a number: they stay the app's keys
        assert box.value == "0.7" and app.threshold == 0.84
        await pilot.pause()
        assert not app.is_running
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app, pilot)
        await pilot.press("equals_sign", *"0.6", "escape")
        assert app.focused.id == "threshold-slider" and app.query_one("#threshold-input").value == ""
        assert app.threshold == 0.5
        await pilot.press("1", "plus")
        assert app.policy == 0 and app.threshold == 0.51
        await pilot.press("equals_sign", *"1.5", "enter")
        await pilot.pause()
        assert app.threshold == 0.51
        assert ("error", "Threshold\nnot a threshold in [0, 1]: '1.5'") in notifications(app)


# -- answers one key away ---------------------------------------------------------------------------------

@run_async
async def test_o_goes_to_the_cheapest_threshold(scenario):
    """o: the policy's least cost meeting every constraint (here the first target), with each constraint there."""
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        for policy in (0, 1):
            await pilot.press(str(policy + 1), "o")
            best = app.model.offer(policy, "best_feasible")
            assert app.threshold == best.threshold
            assert app.model.figures(policy, app.threshold)["cost"] == pytest.approx(best.cost.total, abs=1e-9)
            quality = best.constraints[0]
            assert (f"least cost meeting every constraint: {best.cost.total:,.2f} EUR for the data, quality "
                    f"{quality.value:.4f} ≥ 0.8500 ✓ (o)") in _status(app)
            from rpa_sim.route.sweep import parse_thresholds

            grid = parse_thresholds(app.model.summary.thresholds)
            grid = app.model.sweepers[policy].thresholds("exact") if isinstance(grid, str) else grid
            feasible = [app.model.figures(policy, t)["cost"] for t in grid
                        if app.model.figures(policy, t)["kieval_aligned"] >= 0.85]
            assert best.cost.total <= min(feasible) + 1e-9
        await pilot.press("plus")
        assert "least cost" not in _status(app)  # the note lasts until τ moves


@run_async
async def test_g_goes_to_each_target_in_turn(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        model = app.model
        seen = []
        for _ in range(3):
            await pilot.press("g")
            seen.append(app.threshold)
        points = next(p.operating_points for p in model.summary.policies if p.policy == "confidence")
        assert seen == [points["0.85"].threshold, points["0.9"].threshold, points["0.85"].threshold]
        for target, threshold in zip((0.85, 0.9), seen):
            at = model.figures(0, threshold)
            assert at["kieval_aligned"] >= target and at["auto_rate"] == points[f"{target:g}"].auto_rate
        assert "reaches KIEval_Aligned^τ 0.85: " in _status(app) and "✓ (g: next target)" in _status(app)


@run_async
async def test_o_and_g_are_in_the_command_palette(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        policy = next(p for p in app.model.summary.policies if p.policy == "confidence")
        cheapest, first_target = app.model.offer(0, "best_feasible"), policy.operating_points["0.85"]
        for command, threshold, note in (
                ("Go to the least cost", cheapest.threshold, f"every constraint: {cheapest.cost.total:,.2f} EUR"),
                ("Go to the first target", first_target.threshold, "reaches KIEval_Aligned^τ 0.85: ")):
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*command)
            await pilot.pause(0.3)
            await pilot.press("enter")
            await pilot.pause()
            assert app.threshold == threshold and note in _status(app)


@run_async
async def test_o_and_g_explain_when_there_is_nothing_to_go_to(tmp_path):
    path = tmp_path / "bare.yaml"
    path.write_text("name: bare\ndata: {generate: receipts, n: 20, seed: 1}\npolicies: [confidence]\n")
    app = DashboardApp(str(path))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app, pilot)
        await pilot.press("o", "g")
        await pilot.pause()
        assert app.threshold == 0.5
        assert notifications(app) == [
            ("information", "Least cost\nno cost model: see the Costs view ($) for how to add one"),
            ("information", "Target\nthe scenario has no targets (targets: in its YAML)")]


# -- views ------------------------------------------------------------------------------------------------

@run_async
async def test_switch_views_and_smudge_is_hidden_for_kie(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        tabs = app.query_one(TabbedContent)
        for key, view in [("c", "compare"), ("f", "fields"), ("l", "calibration"), ("dollar_sign", "costs"),
                          ("t", "tradeoff")]:
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == view
        assert not tabs.get_tab("smudge").display
        await pilot.press("a")
        assert tabs.active == "tradeoff"
        assert not any("SMuDGE" in str(f.render()) for f in app.query("FooterKey"))


@run_async
async def test_plot_marks_follow_the_threshold_and_the_policy(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        plot = app.query_one("#tradeoff-plot", MarkedPlot)
        for keys in [(), ("plus", "plus"), ("right_square_bracket", "2"), ("left_square_bracket",) * 12]:
            await pilot.press(*keys)
            await pilot.pause()
            points = app.model.points(app.threshold)
            expected = {plot.cell(x, y): policy_marker(i).symbol for i, (x, y) in enumerate(points)}
            expected[plot.cell(*points[app.policy])] = policy_marker(app.policy).symbol
            assert plot.marked_cells == expected
            selected = plot.cell(*points[app.policy])
            segment = next(iter(plot.render_line(selected[1]).crop(selected[0], selected[0] + 1)))
            assert segment.style is not None and segment.style.reverse
        await pilot.press("dollar_sign")
        await pilot.pause()
        costs = app.query_one("#costs-plot", MarkedPlot)
        best = app.model.cost_optimum(app.policy)
        now = app.model.figures(app.policy, app.threshold)["cost"]
        expected = {costs.cell(app.threshold, now): "●"} if costs.cell(app.threshold, now) else {}
        expected[costs.cell(best.threshold, best.cost)] = "★"
        assert costs.marked_cells == expected


@run_async
async def test_tradeoff_plot_legend_targets_and_limits(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        model, plot = app.model, app.query_one("#tradeoff-plot", MarkedPlot)
        lines = [plot.render_line(y).text for y in range(plot.size.height)]
        assert not any(name in line for line in lines for name in model.policy_names)  # the legend is outside
        legend = str(app.query_one("#tradeoff-legend", Legend).render())
        assert legend == "● 1 confidence   ■ 2 document-escalation   ─ targets 0.85, 0.9"
        assert len({policy_marker(i).symbol for i in range(9)}) == 9
        assert len({policy_marker(i).color for i in range(9)}) == 9
        # the y axis ends at 1 (KIEval_Aligned^τ never exceeds it): its top tick reads 1.000, on the frame's first
        # row; it reaches below the targets, and holds them, drawn as lines
        ticks = {line: float(label) for line, text in enumerate(lines) if (label := _tick_label(text))}
        assert ticks[1] == 1.0 and min(ticks) == 1 == plot.cell(0.5, 1.0)[1]
        assert min(ticks.values()) < 0.85 and {0.85, 0.9} <= set(ticks.values())
        for target in model.target_values:
            _, line = plot.cell(0.999, target)
            assert lines[line].count("─") > plot.size.width // 3


@run_async
async def test_compare_sorts_from_the_keyboard_and_enter_selects(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        view, table = app.query_one("#compare-view"), app.query_one("#compare-table", DataTable)
        assert app.focused is table
        labels = [str(column.label) for column in table.columns.values()]
        assert labels == ["policy", "area", "auto-rate at 0.85", "τ for 0.85", "auto-rate at 0.9", "τ for 0.9",
                          "least cost", "τ of least cost", "saves vs review-all", "certified τ", "dominated by"]
        explanation = str(app.query_one("#compare-explanation").render())
        assert "area: under the auto-rate/KIEval_Aligned^τ curve" in explanation and "τ for T" in explanation
        # the least cost and the decision's cost are told apart: one for the data, unconstrained; the other kept
        # to the constraints, on its own basis
        assert "least cost: each policy's cheapest τ swept, for the whole data (60 documents), under no constraint" \
            in explanation
        assert "the decision (d) keeps to the scenario's constraints, its cost for the same data" in explanation
        rows = {row["policy"]: row for row in view.rows()}
        for summary in app.model.summary.policies:
            point = summary.operating_points["0.9"]
            assert rows[summary.policy]["threshold@0.9"] == point.threshold
            assert rows[summary.policy]["auto@0.9"] == point.auto_rate
            assert rows[summary.policy]["cost_optimum"] == summary.cost_optimum.cost
        await pilot.press("right", "r")  # the area
        aucs = [row["auc"] for row in view.rows()]
        assert aucs == sorted(aucs) and str(table.columns[table.coordinate_to_cell_key((0, 1)).column_key].label) \
            == "area ▲"
        await pilot.press("r")
        assert [row["auc"] for row in view.rows()] == sorted(aucs, reverse=True)
        first = view.rows()[0]["policy"]
        await pilot.press("down", "enter")
        second = view.rows()[1]["policy"]
        assert app.policy == app.model.policy_names.index(second) != app.model.policy_names.index(first)
        assert str(table.get_row_at(1)[0]) == f"▶ {second}"
        await pilot.press("t")
        await pilot.pause()
        assert str(app.query_one(FiguresPanel).render()).startswith(f"{second} at τ")


@run_async
async def test_fields_view_header_stays_rates_and_target_in_full(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("f", "plus", "2")
        await pilot.pause()
        table = app.query_one(TextTable)
        assert table.header.split() == ["key", "predictions", "substitutions", "deletions", "additions", "auto-rate",
                                        "at", "τ", "suggested", "τ"]
        assert table.render_line(0).text.rstrip() == table.header[:table.size.width].rstrip()
        rows = app.model.field_rows(1, 0.51)
        first = rows[0]
        assert table.lines[0].split()[:5] == [first["field"], f"{first['predictions']:,}",
                                              f"{first['substitutions']:,}", f"({first['substitutions_rate']:.1%})",
                                              f"{first['deletions']:,}"]
        assert len(table.lines) == len(rows)
        # scrolled down and right: the header stays on top and scrolls sideways with the rows
        assert table.virtual_size.width > table.size.width and table.show_horizontal_scrollbar
        table.scroll_to(x=10, y=3, animate=False)
        await pilot.pause()
        assert table.render_line(0).text.rstrip() == table.header[10:10 + table.size.width].rstrip()
        assert table.render_line(1).text.rstrip() == table.lines[3][10:10 + table.size.width].rstrip()
        title = str(app.query_one("#fields-title").render())
        assert "document-escalation at τ = 0.5100" in title
        assert "suggested τ per key optimised for 0.85 KIEval_Aligned^τ" in title


@run_async
async def test_calibration_plots_accuracy_against_mean_confidence_with_counts(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("l")
        await pilot.pause()
        rows = app.model.calibration_rows()
        monitor = app.query_one("#calibration-plot").plt.monitor
        # signals: a bar per bin (its count, on the right axis), the diagonal, the accuracy line, its points
        bins = len(rows)
        assert [y[1] for y in monitor.y[:bins]] == [r["count"] for r in rows]
        assert [(x[0] + x[2]) / 2 for x in monitor.x[:bins]] == pytest.approx([(r["lower"] + r["upper"]) / 2
                                                                                for r in rows])
        assert monitor.x[bins] == [0, 1] and monitor.y[bins] == [0, 1]
        assert monitor.x[bins + 2] == [r["mean_confidence"] for r in rows]
        assert monitor.y[bins + 2] == [r["accuracy"] for r in rows]
        note = str(app.query_one("#calibration-ece").render())
        ece = app.model.summary.calibration.ece_equal_width
        assert f"ECE {ece:.4f} (equal-width bins)" in note


@run_async
async def test_costs_zoom_on_the_optimum_with_the_review_all_line(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("dollar_sign")
        await pilot.pause()
        model, plot = app.model, app.query_one("#costs-plot", MarkedPlot)
        window = model.cost_window(0)
        assert window != (0.0, 1.0) and _x_axis(plot) == pytest.approx(window, abs=5e-5)
        assert f"τ from {window[0]:g} to {window[1]:g} (z: all)" in str(app.query_one("#costs-legend").render())
        best, review_all = model.cost_optimum(0), model.review_all_cost()
        assert window[0] < best.threshold <= window[1]
        grid = np.linspace(0, 1, 2001)
        cheap = grid[model.sweepers[0].curve(grid).columns["cost"] <= review_all]
        assert window[0] <= cheap.min() and cheap.max() <= window[1]
        _, line = plot.cell(window[0], review_all)
        assert plot.render_line(line).text.count("─") > plot.size.width // 3
        assert f"review all {review_all:,.2f} EUR" in str(app.query_one("#costs-legend").render())
        await pilot.press("z")
        await pilot.pause()
        assert _x_axis(plot) == (0.0, 1.0)
        assert "τ from 0 to 1 (z: zoom)" in str(app.query_one("#costs-legend").render())


@run_async
async def test_costs_of_plain_records_say_how_to_add_them(tmp_path):
    from rpa_sim.records.readers import write_records
    from rpa_sim.records.synthetic import generate_receipts

    path = tmp_path / "receipts.jsonl"
    write_records(generate_receipts(20, seed=2), path)
    app = DashboardApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("dollar_sign")
        await pilot.pause()
        note = str(app.query_one("#costs-note").render())
        assert "file: receipts.jsonl" in note and "costs:" in note and "rpa-sim dashboard study.yaml" in note
        assert not app.query_one("#costs-plot").display


@run_async
async def test_vqa_smudge_view(vqa_scenario):
    app = DashboardApp(vqa_scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.error is None and app.model.task == "vqa"
        at = app.model.sweepers[0].at(0.5)
        assert _panel_numbers(app)["ANLS"] == f"{at['anls']:.4f}"
        await pilot.press("a")
        await pilot.press("right")
        assert app.alpha == pytest.approx(0.30)
        note = str(app.query_one("#smudge-note").render())
        assert f"{app.model.smudge_at(0.3):.4f}" in note
        await pilot.pause()
        plot = app.query_one("#smudge-plot", MarkedPlot)
        assert plot.marked_cells == {plot.cell(0.3, app.model.smudge_at(0.3)): "●"}


# -- layout -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45)])
@run_async
async def test_layout_at_every_size(scenario, size):
    app = DashboardApp(scenario)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.pause()
        narrow = size[0] < 100
        plot, side = app.query_one("#tradeoff-plot"), app.query_one("#tradeoff-side")
        if narrow:  # the figures move below the plot, the policy list collapses (keys 1-9, the legend)
            assert side.region.y >= plot.region.bottom and not app.query_one(OptionList).display
        else:
            assert side.region.x >= plot.region.right and app.query_one(OptionList).region.height > 0
        # each label with its value on one line, nothing cut off
        panel = app.query_one(FiguresPanel)
        assert _expected(app, 0.5).items() <= _panel_numbers(app).items()
        assert max(map(len, str(panel.render()).splitlines())) <= panel.size.width
        # two columns when narrow; the cost's parts (here errors) and the decision's quality constraint join
        assert str(panel.render()).count("\n") == (5 if narrow else 10)
        assert side.region.right <= size[0]
        # the footer keeps the keys that matter
        shown = {key.key: key.region for key in app.query("FooterKey")}
        for key in ("q", "question_mark", "plus", "minus", "o", "g", "d"):
            assert key in shown and shown[key].right <= size[0] - 10  # left of the palette key


@run_async
async def test_threshold_moves_repaint_text_without_a_layout_pass(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        layouts: list[str] = []
        for widget in app.query(Readout):
            def refresh(*regions, layout=False, _original=widget.refresh, _id=widget.id, **kwargs):
                if layout:
                    layouts.append(_id)
                return _original(*regions, layout=layout, **kwargs)
            widget.refresh = refresh
        for view in ("t", "f", "dollar_sign", "t"):
            await pilot.press(view)  # showing a view lays it out
            await pilot.pause()
            layouts.clear()
            await pilot.press("plus", "plus", "right_square_bracket", "minus")
            await pilot.pause()
            assert layouts == []  # same shape: a repaint is enough
        await pilot.press("2")  # another policy name: the figures panel and status line change shape
        assert {"figures", "status"} <= set(layouts)


# -- loading ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["q", "ctrl+q"])
@run_async
async def test_quit_at_once_while_loading(scenario, monkeypatch, key):
    from rpa_sim.tui import app as app_module

    release, reports = threading.Event(), []

    def slow_open(source, *, report):
        report(Progress("reading small.yaml", 0, 10, "records"))
        release.wait(30)
        try:
            report(Progress("reading small.yaml", 5, 10, "records"))
        except BaseException as stop:  # what the loader meets at its next report once the app has quit
            reports.append(type(stop).__name__)
            raise

    monkeypatch.setattr(app_module, "open_source", slow_open)
    app = DashboardApp(scenario)
    start = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.1)
        await pilot.press(key)
        await pilot.pause()
    assert not app.is_running and time.monotonic() - start < 5
    release.set()
    for _ in range(100):
        if reports:
            break
        time.sleep(0.02)
    assert len(reports) == 1  # the loader's next report raised: the load stopped there


@run_async
async def test_loading_shows_each_stage_and_how_far(scenario, monkeypatch):
    from rpa_sim.tui import app as app_module

    real_open, step, shown = app_module.open_source, threading.Event(), threading.Event()

    def staged_open(source, *, report):
        report(Progress("reading small.jsonl", 0, 200, "records"))
        report(Progress("reading small.jsonl", 120, 200, "records", finished=False))
        report(Progress("evaluating", 0, 200, "records"))
        report(Progress("evaluating", 80, 200, "records"))
        shown.set()
        step.wait(30)
        report(Progress("evaluating", 200, 200, "records", finished=True))
        report(Progress("reading small.jsonl", 200, 200, "records", finished=True))
        return real_open(source, report=report)

    monkeypatch.setattr(app_module, "open_source", staged_open)
    app = DashboardApp(scenario)
    async with app.run_test(size=(80, 24)) as pilot:
        while not shown.is_set() or "80 of 200" not in str(app.query_one("#loading-stages").render()):
            await pilot.pause(0.02)
        stages = str(app.query_one("#loading-stages").render()).splitlines()
        assert stages == ["… reading small.jsonl: 120 of 200 records", "… evaluating: 80 of 200 records"]
        bar = app.query_one(ProgressBar)
        assert (bar.progress, bar.total) == (80, 200)
        assert "small.yaml" in app.sub_title and app.query_one("#loading").display
        await pilot.press("question_mark")  # the interface answers while loading
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
        step.set()
        await ready(app, pilot)
        assert app.model is not None and not app.query_one("#loading").display and app.query_one("#views").display
        assert app.sub_title == f"small.yaml ({app.model.task.upper()}, {len(app.model.table):,} predictions)"


@run_async
async def test_the_dashboard_is_interactive_before_the_summary(scenario, monkeypatch):
    from rpa_sim.tui import loading

    release = threading.Event()
    real_summary = loading.Opened.summary

    def slow_summary(self, model, *, report):
        release.wait(30)
        return real_summary(self, model, report=report)

    monkeypatch.setattr(loading.Opened, "summary", slow_summary)
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        while app.model is None:
            await pilot.pause(0.02)
        await pilot.pause()
        await pilot.press("plus")
        assert _expected(app, 0.51).items() <= _panel_numbers(app).items()
        await pilot.press("o", "c")
        await pilot.pause()
        assert app.threshold == 0.51
        assert notifications(app) == [
            ("information", "Least cost\nstill comparing the policies: the least cost comes with them")]
        assert "comparing them" in str(app.query_one("#compare-title").render())
        release.set()
        await ready(app, pilot)
        assert app.query_one(DataTable).row_count == 2  # the view fills in when the summary arrives


@run_async
async def test_a_comparison_that_fails_leaves_the_views(scenario, monkeypatch):
    from rpa_sim.tui import loading

    def failing_summary(self, model, *, report):
        raise InputError("the comparison ran out of disk", path="summary.json")

    monkeypatch.setattr(loading.Opened, "summary", failing_summary)
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(app, pilot)
        assert app.error is None and app.summary_error == "summary.json: the comparison ran out of disk"
        assert app.query_one("#views").display and not app.model.summarised
        assert notifications(app) == [
            ("error", "Cannot compare the policies\nsummary.json: the comparison ran out of disk")]
        await pilot.press("plus")
        assert _expected(app, 0.51).items() <= _panel_numbers(app).items()  # τ still moves every figure


@run_async
async def test_missing_file_shows_error(tmp_path):
    app = DashboardApp(str(tmp_path / "nope.yaml"))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        assert app.error is not None and "nope.yaml" in app.error
        assert app.query_one("#error-box").display
        await pilot.press("plus", "c", "e")  # nothing loaded: no crash
        await pilot.press("q")
    assert app.return_code == 0


def test_a_load_error_is_printed_after_the_app_exits(tmp_path, monkeypatch):
    from textual.app import App

    from rpa_sim.tui import run_dashboard

    async def quit_once_failed(pilot) -> None:
        await loaded(pilot.app, pilot)
        await pilot.press("q")

    monkeypatch.setattr(DashboardApp, "run", lambda self: App.run(self, headless=True, auto_pilot=quit_once_failed))
    with pytest.raises(InputError, match=r"dashboard: no records file '.*nope\.jsonl'"):
        run_dashboard(str(tmp_path / "nope.jsonl"))


@run_async
async def test_invalid_scenario_shows_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ndata: {generate: receipts}\n", encoding="utf-8")
    app = DashboardApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(app, pilot)
        assert app.error is not None and "policies" in app.error


# -- help, palette, export ----------------------------------------------------------------------------------

@run_async
async def test_help_defines_every_term_and_key(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("f1")
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape", "question_mark")
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
    for term in ("**τ (threshold)**", "**auto-rate**", "**KIEval_Aligned^τ**", "**ANLS**", "**ECE**", "**AURC**",
                 "**SMuDGE**", "**α**", "**certified τ**", "**dominated by**", "**area**", "**suggested τ**",
                 "Raising τ sends more to review"):
        assert term in HELP
    shown = {"plus": "+", "minus": "-", "right_square_bracket": "]", "left_square_bracket": "[",
             "equals_sign": "=", "dollar_sign": "$", "question_mark": "?", "f1": "F1"}
    for binding in DashboardApp.BINDINGS:
        for key in binding.key.split(","):
            if not key.isdigit():
                assert f"`{shown.get(key, key)}`" in HELP, key
    assert "`1`-`9`" in HELP and "`r`" in HELP and "`z`" in HELP and "`ctrl+q`" in HELP


@run_async
async def test_command_palette_exports_the_current_view(scenario, tmp_path):
    app = DashboardApp(scenario, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Show Costs view")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "costs"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Export JSON")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        rows = json.loads((tmp_path / "rpa-sim-costs-confidence.json").read_text())
        assert [r["threshold"] for r in rows] == app.model.plot_curves[0].threshold.round(6).tolist()


@run_async
async def test_exports_are_named_by_view_policy_and_threshold_and_round_floats(scenario, tmp_path):
    out = tmp_path / "exports"
    app = DashboardApp(scenario, export_dir=out)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(app, pilot)
        await pilot.press("plus", "e", "j")
        await pilot.pause()
        rows = json.loads((out / "rpa-sim-tradeoff-tau0.51.json").read_text())
        assert [r["policy"] for r in rows] == app.model.policy_names
        for i, row in enumerate(rows):
            at = app.model.sweepers[i].at(0.51)
            assert row["auto_rate"] == round(at["auto_rate"], 6) and row["cost"] == round(at["cost"], 6)
        with (out / "rpa-sim-tradeoff-tau0.51.csv").open() as handle:
            table = list(csv.DictReader(handle))
        assert table[0]["kieval_aligned"] == repr(round(app.model.sweepers[0].at(0.51)["kieval_aligned"], 6))
        await pilot.press("2", "f", "e")
        await pilot.pause()
        fields = list(csv.DictReader((out / "rpa-sim-fields-document-escalation-tau0.51.csv").open()))
        assert [r["field"] for r in fields] == list(app.model.table.keys)
        assert all(len(r["auto_rate"].split(".")[-1]) <= 6 for r in fields if r["auto_rate"])
        await pilot.press("p")
        await pilot.pause()
        assert (out / "rpa-sim-fields-document-escalation-tau0.51.svg").read_text().startswith("<svg")
        await pilot.press("c", "e", "l", "j")
        await pilot.pause()
        assert (out / "rpa-sim-compare.csv").exists() and (out / "rpa-sim-calibration.json").exists()
        fields_csv = out / "rpa-sim-fields-document-escalation-tau0.51.csv"
        assert ("information", f"Exported CSV\nwrote {fields_csv}") in notifications(app)
        assert not list(out.glob(".*.tmp"))


@run_async
async def test_records_without_predictions_open_in_every_view(tmp_path):
    from rpa_sim.records.models import KIERecord
    from rpa_sim.records.readers import write_records

    path = tmp_path / "missed.jsonl"
    write_records([KIERecord.model_validate({
        "id": f"r{i}", "prediction": {"entities": []},
        "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"}]}})
        for i in range(2)], path)
    out = tmp_path / "exports"
    app = DashboardApp(str(path), export_dir=out)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.error is None and len(app.model.table) == 0
        numbers = _panel_numbers(app)
        # no prediction: no auto-rate; the four missed values stay, so KIEval_Aligned^τ = 1 - 4 / 4
        assert (numbers["auto-rate"], numbers["KIEval_Aligned^τ"], numbers["residual additions"]) == (
            "-", "0.0000", "4")
        for key in ("c", "f", "l", "dollar_sign", "a", "s", "i", "t", "plus", "2", "o", "g"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.press("e", "f", "e")
        await pilot.pause()
        assert next(csv.DictReader((out / "rpa-sim-tradeoff-tau0.51.csv").open()))["auto_rate"] == ""
        fields = list(csv.DictReader((out / "rpa-sim-fields-document-escalation-tau0.51.csv").open()))
        assert [(r["field"], r["predictions"], r["additions"], r["additions_rate"]) for r in fields] == [
            ("total", "0", "2", "1.0"), ("date", "0", "2", "1.0")]


# -- snapshots (each SVG looked at before it was accepted) -------------------------------------------------------

def _snapshot_app(tmp_path: Path, text: str = SCENARIO) -> str:
    path = tmp_path / "snap.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


SNAPSHOT_SIZES = [(80, 24), (100, 30)]


@pytest.mark.parametrize("size", SNAPSHOT_SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("keys", [(), ("c",), ("f",), ("l",), ("dollar_sign",), ("f1",)],
                         ids=["tradeoff", "compare", "fields", "calibration", "costs", "help"])
def test_snapshot_kie_views(snap_compare, tmp_path, keys, size):
    async def run_before(pilot) -> None:
        await ready(pilot.app, pilot)
        await pilot.press("plus", "plus", *keys)
        await pilot.pause()

    assert snap_compare(DashboardApp(_snapshot_app(tmp_path)), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SNAPSHOT_SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("keys", [(), ("f",), ("a",)], ids=["tradeoff", "fields", "smudge"])
def test_snapshot_vqa_views(snap_compare, tmp_path, keys, size):
    async def run_before(pilot) -> None:
        await ready(pilot.app, pilot)
        await pilot.press(*keys)
        await pilot.pause()

    assert snap_compare(DashboardApp(_snapshot_app(tmp_path, VQA_SCENARIO)), terminal_size=size,
                        run_before=run_before)


def test_snapshot_wide_tradeoff(snap_compare, tmp_path):
    async def run_before(pilot) -> None:
        await ready(pilot.app, pilot)
        await pilot.press("g")
        await pilot.pause()

    assert snap_compare(DashboardApp(_snapshot_app(tmp_path)), terminal_size=(160, 45), run_before=run_before)


def test_snapshot_error(snap_compare, tmp_path):
    async def run_before(pilot) -> None:
        await loaded(pilot.app, pilot)

    assert snap_compare(DashboardApp("missing-scenario.yaml"), terminal_size=(80, 24), run_before=run_before)


def test_snapshot_loading(snap_compare, tmp_path, monkeypatch):
    from rpa_sim.tui import app as app_module

    release = threading.Event()

    def staged_open(source, *, report):
        report(Progress("reading receipts.jsonl", 0, 62000, "records"))
        report(Progress("reading receipts.jsonl", 31000, 62000, "records"))
        report(Progress("evaluating", 0, 62000, "records"))
        report(Progress("evaluating", 24576, 62000, "records"))
        release.wait(30)
        raise InputError("stopped")

    monkeypatch.setattr(app_module, "open_source", staged_open)

    async def run_before(pilot) -> None:
        while "24,576" not in str(pilot.app.query_one("#loading-stages").render()):
            await pilot.pause(0.02)
        await pilot.pause()

    try:
        assert snap_compare(DashboardApp("receipts.jsonl"), terminal_size=(80, 24), run_before=run_before)
    finally:
        release.set()

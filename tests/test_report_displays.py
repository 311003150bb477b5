"""The report's figures as displays: built from a run or from what it saved (summary.json, curves.csv), drawn on
axes of one's own, and holding the run's numbers (lines, marked points, stars, bars) where they should be."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure

from rpa_sim.common.errors import InputError
from rpa_sim.report.displays import (
    CostDisplay,
    DecisionDisplay,
    MonitoringIntervalsDisplay,
    MonitoringWidthsDisplay,
    OperationsBacklogDisplay,
    OperationsReviewersDisplay,
    OperationsStaffingDisplay,
    ReliabilityDisplay,
    SmudgeAlphaDisplay,
    TradeoffDisplay,
)
from rpa_sim.report.displays.base import CurvesDisplay
from rpa_sim.report.displays.decision import FIGURE_INCHES
from rpa_sim.route.curvefile import curves_from_csv, read_curves
from rpa_sim.route.sweep import curves_to_csv
from rpa_sim.study.result import read_summary
from rpa_sim.study.run import run_scenario, write_outputs
from rpa_sim.study.scenario import load_scenario
from tests.support_report import run_yaml

KIE = """
name: displays
data: {generate: receipts, n: 60, seed: 3}
policies: [confidence, document-escalation]
reviewer: {miss_rate: 0.02, seconds_per_item: 6, seconds_per_document: 15}
costs: {currency: EUR, hourly_rate: 30, per_residual_error: 1.5}
targets: [0.9, 0.95]
monitoring: {threshold: 0.9, days: 12, days_shown: 10, width_days: 4, audit_rates: [0.05, 0.2]}
"""
#: nothing to star and nothing to zoom on: no costs, no targets
BARE = """
name: bare
data: {generate: receipts, n: 30, seed: 2}
policies: [confidence]
"""
VQA = """
name: questions
data: {generate: docvqa, n: 40, seed: 1}
policies: [confidence]
targets: [0.9]
alpha: 0.3
"""


@pytest.fixture(scope="module")
def kie(tmp_path_factory):
    return run_yaml(tmp_path_factory.mktemp("kie"), KIE)


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    return run_yaml(tmp_path_factory.mktemp("bare"), BARE)


@pytest.fixture(scope="module")
def operations():
    scenario, base = load_scenario("operations-day")
    return run_scenario(scenario.model_copy(update={"data": scenario.data.model_copy(update={"n": 120})}), base)


def _axes():
    figure = Figure()
    return figure, figure.subplots()


def _offsets(axes) -> list[list[tuple[float, float]]]:
    """The points of each scatter on ``axes``, in drawing order."""
    return [[tuple(map(float, point)) for point in collection.get_offsets()]
            for collection in axes.collections if isinstance(collection, PathCollection)]


def _pairs(x, y) -> set[tuple[float, float]]:
    return {(float(a), float(b)) for a, b in zip(x, y)}


def test_the_tradeoff_on_a_panel_of_ones_own(kie):
    figure, ax = _axes()
    display = TradeoffDisplay.from_result(kie).plot(ax=ax)
    assert (display.figure_, display.ax_, display.zoom_ax_) == (figure, ax, None)
    assert not figure.legends  # the panel only: the legend under the panels is the report's figure's
    summary = kie.summary.to_dict()
    policies = summary["policies"]
    # one line per policy, labelled, through its curve's points in the order of the auto-rate
    assert [line.get_label() for line in display.lines_] == ["confidence", "document-escalation"]
    for line, curve in zip(display.lines_, kie.curves):
        x, y = line.get_data()
        assert np.all(np.diff(x) >= 0) and _pairs(x, y) == _pairs(curve.auto_rate, curve.metric)
    # the targets dashed, each operating point in its policy's marker and labelled with its τ (no zoom panel)
    dashed = [line.get_ydata()[0] for line in ax.get_lines() if line.get_linestyle() == "--" and
              line.get_color() == "grey"]
    assert dashed == [0.9, 0.95]
    scatters = _offsets(ax)
    for points, policy in zip(scatters, policies):
        expected = [(p["auto_rate"], p["metric"]) for p in policy["operating_points"].values() if p is not None]
        assert points == expected
    # reviewing predictions one by one never reaches 0.95: only document-escalation adds the missed fields
    assert [len(points) for points in scatters[:2]] == [1, 2]
    texts = {text.get_text() for text in ax.texts}
    assert {f"τ {p['threshold']:.4f}" for policy in policies for p in policy["operating_points"].values()
            if p is not None} <= texts
    # reviewing everything at auto-rate 0 and nothing at 1, then the decision's point starred
    everything, nothing = summary["baselines"]["review_all"], summary["baselines"]["review_none"]
    point = summary["decision"]["point"]
    assert scatters[2:] == [[(0.0, everything["metric"])], [(1.0, nothing["metric"])],
                            [(point["auto_rate"], point["metric"])]]
    assert ax.get_xlim() == (-0.02, 1.02)


def test_the_tradeoff_as_the_report_draws_it_zooms_on_the_operating_points(kie):
    display = TradeoffDisplay.from_result(kie).plot()
    assert len(display.figure_.axes) == 2 and display.zoom_ax_ is display.figure_.axes[1]
    x0, x1, _, _ = display.window
    best = [max(p.operating_points[t].auto_rate for p in kie.summary.policies if p.operating_points[t])
            for t in ("0.9", "0.95")]
    assert x0 < min(best) and max(best) < x1 and x1 - x0 >= 0.1 - 1e-12
    low, high = display.zoom_ax_.get_xlim()
    assert low < x0 and x1 < high  # a sliver of margin keeps the edge markers whole
    legend = [text.get_text() for text in display.figure_.legends[0].get_texts()]
    assert legend == ["confidence", "document-escalation", "operating point (policy's marker)", "target",
                      "review everything", "review nothing", "the decision"]


def test_a_zoom_panel_needs_a_window(bare):
    display = TradeoffDisplay.from_result(bare)
    assert display.window is None and display.star is None  # no target reached, no point decided
    figure = Figure()
    top, bottom = figure.subplots(2)
    with pytest.raises(ValueError, match="zoom_ax needs a zoom window"):
        display.plot(ax=top, zoom_ax=bottom)
    assert len(display.plot().figure_.axes) == 1
    with pytest.raises(ValueError, match="no costs"):
        CostDisplay.from_result(bare)


def test_the_cost_curves_mark_each_cheapest_threshold_and_star_the_decision(kie):
    figure, ax = _axes()
    display = CostDisplay.from_result(kie).plot(ax=ax)
    assert display.figure_ is figure and ax.get_ylabel() == "total cost (EUR, 60 documents)"
    for line, curve in zip(display.lines_, kie.curves):
        finite = np.isfinite(curve.threshold)
        assert _pairs(*line.get_data()) == _pairs(curve.threshold[finite], curve.columns["cost"][finite])
    optima = [p["cost_optimum"] for p in kie.summary.to_dict()["policies"]]
    decision = kie.summary.to_dict()["decision"]
    assert decision["basis"] == "cost"
    assert _offsets(ax) == [[(best["threshold"], best["cost"])] for best in optima] + [
        [(decision["threshold"], decision["point"]["cost"])]]
    assert {f"τ {best['threshold']:.4f}" for best in optima} <= {text.get_text() for text in ax.texts}


def test_the_decision_figure(kie):
    figure, ax = _axes()
    display = DecisionDisplay.from_result(kie).plot(ax=ax)
    decision = kie.summary.to_dict()["decision"]
    assert [line.get_label() for line in display.lines_] == ["confidence", "document-escalation"]
    assert _offsets(ax) == [[(decision["point"]["auto_rate"], decision["point"]["metric"])]]
    assert [text.get_text() for text in ax.texts] == [f"τ {decision['threshold']:.4f}"]
    assert not figure.legends
    own = DecisionDisplay.from_result(kie).plot()
    assert tuple(own.figure_.get_size_inches()) == FIGURE_INCHES
    assert [text.get_text() for text in own.figure_.legends[0].get_texts()] == [
        "confidence", "document-escalation", "target", "decision"]


def test_the_reliability_diagram_draws_the_summary_bins(kie):
    figure, ax = _axes()
    display = ReliabilityDisplay.from_result(kie).plot(ax=ax)
    calibration = kie.summary.to_dict()["calibration"]
    table = calibration["reliability"]
    bars = ax.patches
    assert [bar.get_x() for bar in bars] == pytest.approx(table["lower"])
    assert [bar.get_width() for bar in bars] == pytest.approx(np.subtract(table["upper"], table["lower"]))
    assert [bar.get_height() for bar in bars] == pytest.approx(table["accuracy"])
    dots, diagonal = ax.get_lines()
    assert _pairs(*dots.get_data()) == _pairs(table["mean_confidence"], table["accuracy"])
    assert _pairs(*diagonal.get_data()) == {(0.0, 0.0), (1.0, 1.0)}
    assert ax.get_title() == f"Reliability (ECE {calibration['ece_equal_width']:.4f})"
    assert display.figure_ is figure and [t.get_text() for t in ax.get_legend().get_texts()] == [
        "mean confidence of the bin", "perfect calibration", "accuracy in the bin"]


def test_smudge_against_alpha_runs_from_the_mean_grounding_to_the_mean_match(tmp_path, kie):
    result = run_yaml(tmp_path, VQA)
    figure, ax = _axes()
    display = SmudgeAlphaDisplay.from_result(result).plot(ax=ax)
    table = result.table
    grounded = ~np.isnan(table.smudge_grounding)
    match, grounding = table.match[grounded], table.smudge_grounding[grounded]
    curve = ax.get_lines()[0]
    alphas, means = curve.get_data()
    assert len(alphas) == 21 and alphas[0] == 0.0 and alphas[-1] == 1.0
    # the composite is alpha * match + (1 - alpha) * grounding, per question
    assert means[0] == pytest.approx(grounding.mean()) and means[-1] == pytest.approx(match.mean())
    marked = _offsets(ax)[0][0]
    assert marked == pytest.approx((0.3, float(np.mean(0.3 * match + 0.7 * grounding))))
    assert display.figure_ is figure and "scenario alpha 0.3" in [t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match="KIE documents"):
        SmudgeAlphaDisplay.from_result(kie)


def test_monitoring_intervals_on_a_grid_of_ones_own(kie):
    monitoring = kie.summary.to_dict()["monitoring"]
    monitored = [entry for entry in monitoring["policies"] if entry["note"] is None]
    methods = list(monitored[0]["methods"])
    figure = Figure()
    grid = figure.subplots(len(monitored), len(methods), squeeze=False)
    display = MonitoringIntervalsDisplay.from_result(kie).plot(ax=grid)
    assert display.figure_ is figure and display.axes_.shape == (len(monitored), len(methods))
    assert not figure.legends and figure.get_suptitle() == ""
    for row, entry in enumerate(monitored):
        truth = entry["true_auto_error"]
        days = entry["first_days"]
        for column, method in enumerate(methods):
            axes = grid[row, column]
            covered, missed = (c for c in axes.collections if isinstance(c, LineCollection))
            low, high = np.array(days["low"][method]), np.array(days["high"][method])
            holds = (low <= truth) & (truth <= high)
            # one vertical segment a day, blue when the interval holds the truth, vermilion when it misses
            assert len(covered.get_segments()) == holds.sum() and len(missed.get_segments()) == (~holds).sum()
            assert len(holds) == monitoring["days_shown"]
            assert axes.get_lines()[-1].get_ydata()[0] == truth
    own = MonitoringIntervalsDisplay.from_result(kie).plot()
    assert monitoring["confidence_level"] == 0.95 and len(own.figure_.legends) == 1
    assert own.figure_.get_suptitle() == "95% intervals of the first replayed days against the truth"


def test_monitoring_widths_per_method(kie):
    monitored = [entry for entry in kie.summary.to_dict()["monitoring"]["policies"] if entry["note"] is None]
    methods = list(monitored[0]["methods"])
    figure = Figure()
    panels = figure.subplots(1, len(methods))
    display = MonitoringWidthsDisplay.from_result(kie).plot(ax=panels)
    assert [line.get_label() for line in display.lines_] == [entry["policy"] for entry in monitored]
    for axes, method in zip(panels, methods):
        assert axes.get_title() == method
        assert [_pairs(*line.get_data()) for line in axes.get_lines()] == [
            _pairs(entry["widths"]["audit_rates"], entry["widths"]["mean_width"][method]) for entry in monitored]


def test_operations_displays(operations):
    summary = operations.summary.to_dict()["operations"]
    policies = summary["policies"]
    figure = Figure()
    top, bottom = figure.subplots(2)
    OperationsReviewersDisplay.from_result(operations).plot(ax=(top, bottom))
    for line, entry in zip(top.get_lines(), policies):
        tau = [row["threshold"] for row in entry["grid"]]
        assert line.get_label() == entry["policy"]
        assert _pairs(*line.get_data()) == _pairs(tau, [row["peak_scheduled_needed"] for row in entry["grid"]])
    team = max(summary["team"]["scheduled_per_hour"])
    assert top.get_lines()[-1].get_ydata()[0] == team
    assert bottom.get_lines()[-1].get_ydata()[0] == summary["settings"]["service_level"]["share"]

    figure, ax = _axes()
    staffing = OperationsStaffingDisplay.from_result(operations).plot(ax=ax)
    first = [entry for entry in policies if entry["points"]]
    assert staffing.figure_ is figure
    assert [patch.get_label() for patch in ax.patches] == ["the team", *(
        f"{entry['policy']} at τ {entry['points'][0]['threshold']:.3f} ({entry['points'][0]['point']})"
        for entry in first)]
    assert list(ax.patches[0].get_data().values) == summary["team"]["scheduled_per_hour"]

    figure, ax = _axes()
    backlog = OperationsBacklogDisplay.from_result(operations).plot(ax=ax)
    for line, entry in zip(ax.get_lines(), first):
        assert list(line.get_ydata()) == entry["points"][0]["simulated"]["backlog_by_hour"]
        assert list(line.get_xdata()) == list(range(1, 25))
    assert [bar.get_height() for bar in backlog.arrivals_ax_.patches] == pytest.approx(
        summary["arrivals_per_hour"][:24])


def test_without_the_sections_there_is_nothing_to_display(bare):
    for display in (MonitoringIntervalsDisplay, MonitoringWidthsDisplay, OperationsReviewersDisplay,
                    OperationsStaffingDisplay, OperationsBacklogDisplay):
        with pytest.raises(ValueError):
            display.from_result(bare)


# -- from what a study saved ---------------------------------------------------------------------


def _same(a, b) -> bool:
    """Whether two displays hold the same figures (arrays compared by value, NaN equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dict__") and not isinstance(a, type) and type(a) is type(b):
        return _same(sorted(vars(a).items()), sorted(vars(b).items()))
    return a == b


def test_every_display_is_built_from_the_saved_summary_and_curves_as_from_the_run(tmp_path, kie, operations):
    """summary.json read back by read_summary, curves.csv by read_curves: each display holds what the run's
    gives, and draws (all but SMuDGE against alpha, which scores the questions again)."""
    for result, displays in ((kie, [DecisionDisplay, TradeoffDisplay, CostDisplay, ReliabilityDisplay,
                                    MonitoringIntervalsDisplay, MonitoringWidthsDisplay]),
                             (operations, [OperationsReviewersDisplay, OperationsStaffingDisplay,
                                           OperationsBacklogDisplay])):
        out = tmp_path / result.scenario.name
        write_outputs(result, out)
        summary = read_summary(out / "summary.json")
        curves = read_curves(out / "curves.csv", task=summary.task)
        assert [curve.policy for curve in curves] == [curve.policy for curve in result.curves]
        for display in displays:
            saved = (display.from_summary(summary, curves) if issubclass(display, CurvesDisplay)
                     else display.from_summary(summary))
            assert _same(saved, display.from_result(result)), display.__name__
            assert saved.plot().figure_ is not None


def test_curves_of_other_policies_are_refused(kie):
    with pytest.raises(ValueError, match="expected a curve per policy of the summary"):
        TradeoffDisplay.from_summary(kie.summary, kie.curves[::-1])


def test_curves_csv_reads_back_every_column_and_refuses_what_is_not_one(tmp_path, kie):
    text = curves_to_csv(kie.curves)
    again = curves_from_csv(text, task="kie")
    for curve, read in zip(kie.curves, again, strict=True):
        assert read.policy == curve.policy and set(read.columns) == set(curve.columns)
        assert all(np.array_equal(read.columns[name], curve.columns[name], equal_nan=True) for name in curve.columns)
    lines = text.splitlines()
    with pytest.raises(InputError) as bad:
        curves_from_csv("\n".join([lines[0], lines[1].replace(",", ",x", 1)]), task="kie", source="c.csv")
    assert str(bad.value) == "c.csv: line 2: threshold: expected a number, got 'x" + lines[1].split(",")[1] + "'"
    with pytest.raises(InputError, match="line 1: the header lacks anls: not the curves of a vqa study"):
        curves_from_csv(text, task="vqa")
    split = [lines[0], lines[1], next(line for line in lines if line.startswith("document-escalation")), lines[2]]
    with pytest.raises(InputError, match="line 4: the rows of policy 'confidence' are not together"):
        curves_from_csv("\n".join(split), task="kie")

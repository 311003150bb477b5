"""One decision, the same on every page (issue 21): the dashboard's figures panel, status line, Costs view, ``o`` and
``d`` show the study's staffed costs and its decision, as ``summary.json``, ``rpa-sim run --format json`` and the
report do."""

from __future__ import annotations

import asyncio
import json
import re

import numpy as np
import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from rpa_sim.common.formatting import money, number
from rpa_sim.common.formatting import number as num
from rpa_sim.common.typedjson import decoded
from rpa_sim.report.page import render_report
from rpa_sim.study.decision import Decision
from rpa_sim.study.run import run_scenario, write_outputs
from rpa_sim.study.scenario import load_scenario
from rpa_sim.tui.app import DashboardApp
from rpa_sim.tui.views.operations import OperationsView
from rpa_sim.tui.widgets.figures import FiguresPanel
from tests.conftest import run_cli
from tests.support_tui import OPERATIONS, STAFFED_SCENARIO, notifications, ready, scenario_file

#: KIE with costs priced by the hour and a rostered team: the study's costs include staffing
SCENARIO = STAFFED_SCENARIO + OPERATIONS
GROWING = SCENARIO + "decision:\n  team: {extra_per_shift: {min: 0, max: 3}}\n"
#: a quality no point reaches: nothing is feasible
IMPOSSIBLE = SCENARIO.replace("targets: [0.9]", "targets: [0.9999]")


def _panel(app) -> str:
    return str(app.query_one(FiguresPanel).render())


def _panel_value(app, label: str) -> str:
    """The value beside ``label`` in the figures panel (the panel may be in columns)."""
    found = re.search(rf"(?:^|\s){re.escape(label)}\s+(at d|\S+(?: [✓✗])?)", _panel(app))
    assert found, f"{label!r} not in the figures panel:\n{_panel(app)}"
    return found.group(1)


def _status(app) -> str:
    return str(app.query_one("#status").render())


def test_o_the_figures_panel_the_status_line_and_the_costs_view_show_the_summarys_staffed_cost(tmp_path):
    """``o`` goes to the policy's least cost meeting every constraint, else to its least cost under none (said
    so); the panel leads with that point's cost a day, then the curve's cost for the data, split as the study
    splits it."""
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(app, pilot)
            assert app.model.staffed
            for index, entry in enumerate(app.model.summary.policies):
                await pilot.press(str(index + 1), "t", "o")
                feasible = app.model.offer(index, "best_feasible")
                offered = feasible or app.model.offer(index, "least_cost")
                assert app.threshold == offered.threshold
                if feasible is None:  # then o goes to the policy's cost optimum, labelled as under no constraint
                    assert offered.threshold == entry.cost_optimum.threshold
                    assert "least cost, no constraint: " in _status(app) and "✗" in _status(app)
                else:
                    assert "least cost meeting every constraint: " in _status(app) and "✗" not in _status(app)
                parts = app.model.cost_parts(index, offered.threshold)
                assert _panel_value(app, "cost a day, this team") == money(offered.cost.total)
                assert _panel_value(app, "cost for the data (EUR)") == money(parts["total"])
                assert f"{money(offered.cost.total)} EUR a day" in _status(app)
                assert _panel_value(app, "staffing cost") == money(parts["staffing"])
                # the study prices review time by the roster: that part is nothing at every τ, and is left out
                assert parts["review"] == 0.0 and "review cost" not in _panel(app)
                await pilot.press("dollar_sign")
                note = str(app.query_one("#costs-note").render())
                assert f"cost for the data {money(parts['total'])} EUR, staffing as τ needs at " \
                       f"τ = {offered.threshold:.4f}" in note
                best = entry.cost_optimum
                assert f"◇ least cost, no constraint: {money(best.cost)} EUR for the data at " \
                       f"τ = {best.threshold:.4f}" in note
                assert ("o: no τ of this policy meets every constraint" in note) == (feasible is None)
            # the export carries the curve's cost, split by kind
            await pilot.press("t")
            row = app.model.figures_rows(app.policy, app.threshold)[0]
            parts = app.model.cost_parts(app.policy, app.threshold)
            assert row["cost"] == pytest.approx(parts["total"], abs=1e-9)
            assert row["staffing_cost"] == pytest.approx(parts["staffing"], abs=1e-9)

    asyncio.run(run())


def test_the_dashboards_costs_are_the_study_curves_at_every_swept_threshold(tmp_path):
    scenario, base = load_scenario(scenario_file(tmp_path, SCENARIO))
    result = run_scenario(scenario, base)

    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(app, pilot)
            for index, curve in enumerate(result.curves):
                for position, threshold in enumerate(curve.threshold.tolist()):
                    parts = app.model.cost_parts(index, threshold)
                    assert parts["total"] == pytest.approx(float(curve.columns["cost"][position]), abs=1e-9)
                    assert parts["staffing"] == pytest.approx(float(curve.breakdown.staffing[position]), abs=1e-9)
                priced = app.model.priced_curve(index, curve.threshold)
                assert np.allclose(priced.columns["cost"], curve.columns["cost"], rtol=0, atol=1e-9)
                # the Costs view draws the same pricing on its finer grid
                _, costs = app.model.cost_curve(index, (0.0, 1.0))
                assert costs[-1] == pytest.approx(app.model.cost_parts(index, 1.0)["total"], abs=1e-9)
                assert costs[0] == pytest.approx(float(curve.columns["cost"][0]), abs=1e-9)

    asyncio.run(run())


def test_d_goes_to_the_decisions_policy_threshold_and_team(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, GROWING))
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await ready(app, pilot)
            decision = app.model.summary.decision
            assert decision.feasible and decision.reviewers is not None
            assert app.policy == 0 and app.threshold == 0.5
            await pilot.press("d")
            await pilot.pause()
            assert app.model.policy_names[app.policy] == decision.policy
            assert app.threshold == decision.threshold
            assert app.query_one(OperationsView).extra == decision.reviewers.extra_per_shift
            point = decision.point
            assert _panel(app).startswith(f"{decision.policy} at τ = {decision.threshold:.4f} ★ decision")
            assert _panel_value(app, "cost for the data (EUR)") == money(point.cost)
            assert _panel_value(app, "cost a day, this team") == money(decision.cost.total)
            # one headline cost: the decision's a day, first
            assert f"decision, {money(decision.cost.total)} EUR a day (d)" in _status(app)
            severity, text = notifications(app)[-1]
            title, message = text.split("\n", 1)
            assert (severity, title) == ("information", "Decision")
            assert message.startswith(f"Run {decision.policy} at τ = {decision.threshold:.4f}.")
            assert f"{money(decision.cost.total)} EUR a day" in message and "for the data" not in message
            assert " people a shift" in message
            # each constraint, met or not, at the decided point: the decision's own figures
            for constraint in decision.constraints:
                label = {"quality": "quality ≥", "service_level": "service level ≥"}[constraint.name]
                mark = "✓" if constraint.met else "✗"
                shown = {"quality": number, "service_level": lambda value: f"{100 * value:.1f}%"}[constraint.name]
                target, value = shown(constraint.target), shown(constraint.value)
                assert _panel_value(app, f"{label} {target}") == f"{value} {mark}"
            # elsewhere the quality comes from the curve; the service level from the Operations grid on its τ
            await pilot.press("1")
            app.set_threshold(0.3)
            await pilot.pause()
            quality = app.model.figures(0, 0.3)["kieval_aligned"]
            assert _panel_value(app, "quality ≥ 0.9000") == ("✓" if quality >= 0.9 else "✗")  # the metric is above it
            assert _panel_value(app, "KIEval_Aligned^τ") == number(quality)
            grid = next(row for row in app.model.summary.operations.policies[0].grid
                        if row.threshold == pytest.approx(0.3))
            level = grid.simulated.service_level
            assert _panel_value(app, "service level ≥ 90.0% (grid)") == \
                f"{100 * level:.1f}% {'✓' if level >= 0.9 else '✗'}"
            app.set_threshold(0.33)  # off the grid: known at the decision only
            await pilot.pause()
            assert _panel_value(app, "service level ≥ 90.0%") == "at d"
            assert "★ decision" not in _panel(app)

    asyncio.run(run())


def test_d_says_when_no_point_meets_every_constraint_and_which_binds(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, IMPOSSIBLE))
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await ready(app, pilot)
            decision = app.model.summary.decision
            assert not decision.feasible and decision.binding is not None
            await pilot.press("d")
            await pilot.pause()
            severity, text = notifications(app)[-1]
            assert severity == "warning"
            assert text.startswith("No plan meets the constraints\nNo plan meets the constraints: the ")
            assert " binds" in text and "The nearest point, which misses:" in text
            assert "no plan meets the constraints: nearest point" in _status(app)
            assert "★" not in _panel(app) and "✗ nearest: no plan meets the constraints" in _panel(app)
            assert app.threshold == decision.threshold

    asyncio.run(run())


def test_the_report_summary_json_run_json_and_the_dashboard_show_the_same_decision(tmp_path, capsys):
    source = scenario_file(tmp_path, SCENARIO)
    scenario, base = load_scenario(source)
    result = run_scenario(scenario, base)
    write_outputs(result, tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    decision = summary["decision"]
    quality = next(c["value"] for c in decision["constraints"] if c["name"] == "quality")
    assert decision["feasible"] and decision["cost"]["per"] == "day"
    assert quality == pytest.approx(decision["point"]["metric"])

    status, out, err = run_cli(capsys, "run", source, "--format", "json")
    assert (status, err) == (0, "")
    assert json.loads(out)["decision"] == decision

    html = render_report(result)
    lead = re.search(r'id="decision-text">Run (\S+) at <a [^>]*>τ</a> = (\S+)\.', html)
    assert lead.groups() == (decision["policy"], num(decision["threshold"]))
    cost = re.search(r'<p id="decision-cost">(.*?)</p>', html, re.DOTALL).group(1)
    assert f"{money(decision['cost']['total'])} EUR a day" in cost
    assert num(quality) in html

    async def run() -> None:
        app = DashboardApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(app, pilot)
            assert app.model.summary.decision == decoded(Decision, decision, "decision")
            # the comparison's least cost is for the data, under no constraint; the decision's a day: both said
            explanation = app.model.compare_explanation()
            assert "least cost: each policy's cheapest τ swept, for the whole data (80 documents), under no " \
                   "constraint" in explanation
            assert "the decision (d) keeps to the scenario's constraints, its cost per day" in explanation
            await pilot.press("d")
            assert _panel(app).startswith(f"{decision['policy']} at τ = {decision['threshold']:.4f} ★ decision")
            assert _panel_value(app, "cost a day, this team") == money(decision["cost"]["total"])
            assert _panel_value(app, "cost for the data (EUR)") == money(decision["point"]["cost"])
            assert _panel_value(app, "KIEval_Aligned^τ") == number(decision["point"]["metric"])
            assert _panel_value(app, "quality ≥ 0.9000") == f"{number(quality)} ✓"

    asyncio.run(run())


def test_the_cost_a_day_is_said_once_in_the_figures_panel(tmp_path):
    # with a budget a day the decided point's cost a day is the headline and the budget's value: the panel leads
    # with it and gives the budget only its mark
    budget = SCENARIO + "decision:\n  max_cost_per_day: 100000\n"

    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, budget))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(app, pilot)
            decision = app.model.summary.decision
            assert decision.feasible and decision.cost is not None and decision.cost.per == "day"
            await pilot.press("d")
            await pilot.pause()
            headline = money(decision.cost.total)
            assert _panel_value(app, FiguresPanel.HEADLINE) == headline
            assert _panel_value(app, "cost a day ≤ 100,000.00") == "✓"
            assert _panel(app).count(headline) == 1

    asyncio.run(run())

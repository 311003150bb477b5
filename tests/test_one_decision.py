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
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(app, pilot)
            assert app.model.staffed
            for index, entry in enumerate(app.model.summary.policies):
                await pilot.press(str(index + 1), "t", "o")
                best = entry.cost_optimum
                shown = money(best.cost)
                assert app.threshold == best.threshold
                assert _panel_value(app, "cost (EUR)") == shown
                assert f"least cost {shown} EUR" in _status(app)
                assert _panel_value(app, "staffing cost") == money(best.breakdown.staffing)
                assert _panel_value(app, "error cost") == money(best.breakdown.errors)
                # the study prices review time by the roster: that part is nothing at every τ, and is left out
                assert best.breakdown.review == 0.0 and "review cost" not in _panel(app)
                await pilot.press("dollar_sign")
                note = str(app.query_one("#costs-note").render())
                assert f"cost {shown} EUR (staffing included) at τ = {best.threshold:.4f}" in note
                assert f"least {shown} EUR at τ = {best.threshold:.4f}" in note
            # the export carries the same cost, split by kind
            await pilot.press("t")
            row = app.model.figures_rows(app.policy, app.threshold)[0]
            best = app.model.summary.policies[app.policy].cost_optimum
            assert row["cost"] == pytest.approx(best.cost, abs=1e-9)
            assert row["staffing_cost"] == pytest.approx(best.breakdown.staffing, abs=1e-9)

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
            assert _panel_value(app, "cost (EUR)") == money(point.cost)
            assert _panel_value(app, "team's cost/day") == money(decision.cost.total)
            assert f"decision, cost {money(point.cost)} EUR (d)" in _status(app)
            heads = sum(shift[2] for shift in decision.reviewers.shifts)
            severity, text = notifications(app)[-1]
            title, message = text.split("\n", 1)
            assert (severity, title) == ("information", "Decision")
            assert message.startswith(f"{decision.policy} at τ = {decision.threshold:.4f} with {heads} reviewers (")
            assert f"cost {money(point.cost)} EUR for the data" in message
            assert f"{money(decision.cost.total)} EUR per day with this team" in message
            # each constraint, met or not, at the decided point: the decision's own figures
            for constraint in decision.constraints:
                label = {"quality": "quality ≥", "service_level": "service level ≥"}[constraint.name]
                mark = "✓" if constraint.met else "✗"
                assert _panel_value(app, f"{label} {constraint.target:g}") == f"{number(constraint.value)} {mark}"
            # elsewhere the quality comes from the curve; the service level from the Operations grid on its τ
            await pilot.press("1")
            app.set_threshold(0.3)
            await pilot.pause()
            quality = app.model.figures(0, 0.3)["kieval_aligned"]
            assert _panel_value(app, "quality ≥ 0.9") == ("✓" if quality >= 0.9 else "✗")  # the metric is above it
            assert _panel_value(app, "KIEval_Aligned^τ") == number(quality)
            grid = next(row for row in app.model.summary.operations.policies[0].grid
                        if row.threshold == pytest.approx(0.3))
            level = grid.simulated.service_level
            assert _panel_value(app, "service level ≥ 0.9 (grid)") == \
                f"{number(level)} {'✓' if level >= 0.9 else '✗'}"
            app.set_threshold(0.33)  # off the grid: known at the decision only
            await pilot.pause()
            assert _panel_value(app, "service level ≥ 0.9") == "at d"
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
            assert text.startswith(
                f"Decision: no point meets every constraint\nno point meets every constraint ({decision.binding} "
                f"binds): {decision.reason}. Nearest: {decision.policy} at τ = {decision.threshold:.4f}")
            assert f"no point meets every constraint ({decision.binding} binds)" in _status(app)
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
    lead = re.search(r"<strong>(.*?)</strong> at <strong>τ = (.*?)</strong>", html)
    assert lead.groups() == (decision["policy"], num(decision["threshold"]))
    cost_table = re.search(r'<table[^>]*id="decision-cost".*?</table>', html, re.DOTALL).group(0)
    assert re.search(rf"total</t[dh]>\s*<td[^>]*>{re.escape(money(decision['cost']['total']))}", cost_table)
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
            assert _panel_value(app, "team's cost/day") == money(decision["cost"]["total"])
            assert _panel_value(app, "cost (EUR)") == money(decision["point"]["cost"])
            assert _panel_value(app, "KIEval_Aligned^τ") == number(decision["point"]["metric"])
            assert _panel_value(app, "quality ≥ 0.9") == f"{number(quality)} ✓"

    asyncio.run(run())

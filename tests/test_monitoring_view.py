"""The dashboard's Monitoring view (issue 14): Pilot tests of its keys and its worker, and its snapshots."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from rpa_sim.operate.monitoring.results import NarrowerAudit
from rpa_sim.operate.monitoring.summary import MonitoringSpec, policy_monitoring
from rpa_sim.tui.app import DashboardApp
from rpa_sim.tui.views.monitoring import MonitoringView
from tests.support_tui import SCENARIO, ready, scenario_file, shown

QUICK = "monitoring:\n  days: 40\n  width_days: 10\n"


def note(app) -> str:
    return str(app.query_one("#monitoring-note").render())


def test_m_computes_the_policy_at_tau_with_the_default_settings(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO, "monitored.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("plus", "plus", "m")
            view = app.query_one(MonitoringView)
            assert app.query_one("#views").active == "monitoring"
            await shown(view, pilot)
            model, threshold = app.model, app.threshold
            expected = policy_monitoring(MonitoringSpec(), model.table, model.policies[0], threshold=threshold,
                                         reviewer=model.sweepers[0].reviewer)
            rows = view.rows()
            assert [row["method"] for row in rows] == ["classical", "stratified", "ppi"]
            for row in rows:
                assert row["coverage"] == expected.methods[row["method"]].coverage
                assert row["mean_width"] == expected.methods[row["method"]].mean_width
                assert row["threshold"] == threshold
            assert f"confidence at τ = {threshold:.4f} · {expected.auto_accepted:,} auto-accepted" in note(app)
            assert "200 days, 95%" in note(app)
            assert "audits: a second, careful check" in note(app)

    asyncio.run(run())


def test_tau_moves_never_wait_for_the_computation(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO, "monitored.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("m")
            view = app.query_one(MonitoringView)
            await shown(view, pilot)
            before = app.threshold
            await pilot.press("plus")
            await pilot.pause()
            # τ moved at once; the view says it is computing for the new τ and computes after τ rests
            assert app.threshold > before and f"τ = {app.threshold:.4f}" in str(app.query_one("#status").render())
            assert "computing 200 replayed production days" in note(app)
            await pilot.press("plus", "minus")
            await shown(view, pilot)
            assert view.rows()[0]["threshold"] == app.threshold
            assert (0, before, app.model_version) in view.results  # the first τ stays computed

    asyncio.run(run())


def test_the_scenarios_section_is_shown_from_the_summary_and_n_cycles_the_methods(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO + QUICK, "monitored.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("o", "m")  # the least cost: the section's threshold for every policy
            view = app.query_one(MonitoringView)
            await pilot.pause()
            entry = app.model.summary.monitoring.policies[0]
            assert view.shown_key == view.key() and view.computing is None
            assert view.results[view.key()] is entry
            assert "40 days" in note(app)
            assert view.shown_method == "classical"
            await pilot.press("n")
            await pilot.pause()
            assert view.shown_method == "stratified"
            await pilot.press("2")  # another policy at another τ: computed with the section's settings
            await shown(view, pilot)
            assert note(app).startswith(f"document-escalation at τ = {app.threshold:.4f}")
            assert view.results[view.key()].policy == "document-escalation"

    asyncio.run(run())


def test_an_interval_far_wider_than_its_rate_says_the_audit_that_narrows_it_as_the_report_does(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO + QUICK, "monitored.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("o", "m")
            view = app.query_one(MonitoringView)
            await pilot.pause()
            key = view.key()
            entry = view.results[key]
            proposed = entry.proposed_method()
            assert proposed is not None and entry.methods is not None
            # the proposed interval 12 times wider than the rate: the audit that would narrow it, as planned
            wide = replace(entry, true_auto_error=entry.methods[proposed].mean_width / 12,
                           narrower=NarrowerAudit(target_width=0.004, audits=38, audit_rate=0.04))
            view.results[key] = wide
            view.show(key)
            words, command = wide.narrowing()
            assert words.startswith("12 times wider than the error rate it estimates (")
            assert words.endswith("auditing 4.0% of the auto-accepted items (38 a day, Neyman allocation over "
                                  "confidence bands) would bring it to about 0.0040 wide")
            assert command == (f"rpa-sim plan-audit DATA --policy confidence --threshold {entry.threshold} "
                               f"--target-width 0.004")
            assert f"\n⚠ {proposed}'s interval is {words} ({command})" in note(app)

    asyncio.run(run())


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda size: f"{size[0]}x{size[1]}")
def test_snapshot_monitoring_view(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        await ready(pilot.app, pilot)
        await pilot.press("plus", "plus", "m")
        await shown(pilot.app.query_one(MonitoringView), pilot)

    assert snap_compare(DashboardApp(scenario_file(tmp_path, SCENARIO + QUICK, "monitored.yaml")), terminal_size=size,
                        run_before=run_before)

"""The dashboard's Operations view (issue 12): shown only with an ``operations:`` section, its figures equal the
study's, ``r``/``R`` change the team, moves never wait for the worker, and its snapshots."""

from __future__ import annotations

import asyncio
import html
import re
import time

import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from rpa_sim.common.ticks import amount_labels, round_ticks
from rpa_sim.operate.queue.summary import Workload
from rpa_sim.tui.app import DashboardApp
from rpa_sim.tui.model import operation_of
from rpa_sim.tui.views.operations import OperationsView
from tests.support_tui import OPERATIONS, ready, scenario_file, shown
from tests.support_tui import STAFFED_SCENARIO as SCENARIO


def screen_text(app) -> str:
    """The screen's text, row by row, from its SVG screenshot."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, text in re.findall(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>',
                                 app.export_screenshot()):
        rows.setdefault(float(y), []).append((float(x), html.unescape(text)))
    return "\n".join("".join(text for _, text in sorted(row)) for _, row in sorted(rows.items()))


def note(app) -> str:
    return str(app.query_one("#operations-note").render())


def test_w_shows_the_study_figures_and_r_changes_the_team(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO + OPERATIONS, "ops.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("plus", "plus", "w")
            assert app.query_one("#views").active == "operations"
            view = app.query_one(OperationsView)
            await shown(view, pilot)
            operation = operation_of(app.model.summary, app.model.table)
            at = app.model.sweepers[0].at(app.threshold)
            work = Workload.from_point(at, documents=operation.documents)
            quality = {"threshold": app.threshold, "quality": at["kieval_aligned"],
                       "unreviewed": app.model.table.counts.kieval_aligned}
            expected = operation.at(work, **quality)
            assert view.results[view.key()] == expected
            assert expected.released_share == 0.0 and expected.quality_with_releases == at["kieval_aligned"]
            assert f"confidence at τ = {app.threshold:.4f} · the scenario's team (08-12 h 2, 12-17 h 2" in note(app)
            rows = view.rows()
            assert [row["scheduled_needed"] for row in rows] == list(expected.scheduled_needed_per_hour)
            assert [row["team_scheduled"] for row in rows] == [0] * 8 + [2] * 9 + [0] * 7
            await pilot.press("r")
            assert view.extra == 1
            await shown(view, pilot)
            assert view.results[view.key()] == operation.at(work, extra=1, **quality)
            assert "the team +1 a shift (08-12 h 3, 12-17 h 3" in note(app)
            await pilot.press("R", "R", "R")  # never below one reviewer a shift
            assert view.extra == -1
            await shown(view, pilot)
            assert "08-12 h 1, 12-17 h 1" in note(app)

    asyncio.run(run())


def test_tau_moves_never_wait_and_come_back_from_the_cache(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO + OPERATIONS, "ops.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("w")
            view = app.query_one(OperationsView)
            await shown(view, pilot)
            first = view.key()
            start = time.monotonic()
            await pilot.press(*["plus"] * 8)
            assert time.monotonic() - start < 5.0
            await shown(view, pilot)
            await pilot.press(*["minus"] * 8)
            assert view.key() == first and view.shown_key == first  # from the cache, no worker
            assert "computing" not in note(app)

    asyncio.run(run())


def test_hidden_without_the_section(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO, "ops.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("w")
            assert app.query_one("#views").active != "operations"
            assert app.check_action("show", ("operations",)) is False

    asyncio.run(run())


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda size: f"{size[0]}x{size[1]}")
def test_snapshot_operations_view(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        await ready(pilot.app, pilot)
        await pilot.press("plus", "plus", "w")
        await shown(pilot.app.query_one(OperationsView), pilot)

    assert snap_compare(DashboardApp(scenario_file(tmp_path, SCENARIO + OPERATIONS, "ops.yaml")), terminal_size=size,
                        run_before=run_before)


def test_at_80x24_the_plot_keeps_its_rows_and_the_footer_keeps_d(tmp_path):
    # five simulated days: the backlog of each day, a long figure, has a line of its own and the other figures go
    # side by side, so that the note, the figures, the plot and its legend fit the view
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, SCENARIO + OPERATIONS.replace("days: 2", "days: 5"), "ops.yaml"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(app, pilot)
            await pilot.press("w")
            view = app.query_one(OperationsView)
            await shown(view, pilot)
            plot, legend = view.query_one("#operations-backlog"), view.query_one("#operations-legend")
            assert plot.size.height >= 8
            assert legend.region.bottom <= view.region.bottom  # nothing pushed out of the view
            figures = view.query_one("#operations-figures")
            assert "backlog at day ends: " in str(figures.render())
            assert figures.size.height <= 7  # four rows of figures side by side, the backlog, two of notes
            keys = {key.key: key for key in app.query("FooterKey")}
            assert "d" in keys and keys["d"].region.right <= 80 and keys["d"].region.width >= len("d Decision")
            assert "r" in keys or "R" in keys  # r and R share one place: ±1
            # the backlog's ticks (a mean over the days) are round steps, as many decimals as the step needs
            ticks = re.findall(r"([\d,.]+)┤", screen_text(app))
            values = [float(tick.replace(",", "")) for tick in ticks][::-1]
            assert len(values) >= 2 and values == round_ticks(values[0], values[-1], most=len(values)), ticks
            assert ticks[::-1] == amount_labels(values)

    asyncio.run(run())

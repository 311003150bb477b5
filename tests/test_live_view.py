"""The dashboard's Live view (issue 28, item 4): shown only with a ``stream:`` section, its rows are the summary's
stream on the day shown, its keys step through the days and the segments, and its snapshots."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from rpa_sim.operate.live.result import day_status, segment_name
from rpa_sim.tui.app import DashboardApp
from rpa_sim.tui.views.live import LiveView
from tests.support_stream import SCENARIO
from tests.support_tui import ready, scenario_file

# the planted stream, small: four segments, 24 days, three changes from day 16
STREAMED = (SCENARIO.replace("n: 150", "n: 60").replace("days: 30", "days: 24")
            .replace("documents_per_day: 120", "documents_per_day: 60"))


def text(app, widget: str) -> str:
    return str(app.query_one(widget).render())


def table(app, widget: str) -> tuple[str, list[str]]:
    shown = app.query_one(widget)
    return shown.header, shown.lines


def test_v_shows_the_stream_on_its_last_day_and_the_keys_step_through_days_and_segments(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, STREAMED, "stream.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("v")
            assert app.query_one("#views").active == "live"
            view = app.query_one(LiveView)
            stream = app.model.summary.stream
            watch = stream.watch
            assert text(app, "#live-note") == ("day 24/24 · 2024-01-24 · confidence at τ 0.9 · target 0.05 · "
                                               "δ 0.05")
            header, lines = table(app, "#live-segments")
            assert header.split() == ["segment", "status", "error", "[low,", "high]", "alarms"]
            for line, timeline in zip(lines, watch.segments):
                assert segment_name(timeline.segment) in line and timeline.status in line
            assert lines[0].startswith("▶ x / a") and "above target" in lines[0]
            header, alarms = table(app, "#live-alarms")
            assert header.startswith(f"alarms up to 2024-01-24 ({len(watch.alarms)}) · keys: , . a day")
            assert alarms[0].startswith(watch.alarms[-1].day)  # newest first
            # a day back, then a week back: the day's statuses and the alarms raised by then
            await pilot.press("comma", "less_than_sign")
            assert view.today() == 15
            assert text(app, "#live-note").startswith("day 16/24 · 2024-01-16 ·")
            _, lines = table(app, "#live-segments")
            for line, timeline in zip(lines, watch.segments):
                assert day_status(timeline.days[15], max_error=watch.max_error) in line
            raised = [alarm for alarm in watch.alarms if alarm.day <= "2024-01-16"]
            assert table(app, "#live-alarms")[0].startswith(f"alarms up to 2024-01-16 ({len(raised)})")
            # the days end where the stream does
            await pilot.press(*["less_than_sign"] * 5)
            assert view.today() == 0
            await pilot.press(*["greater_than_sign"] * 5, "full_stop")
            assert view.today() == 23
            # n, N: the next and previous segment, whose timeline the plot shows
            await pilot.press("n")
            assert view.segment == 1 and table(app, "#live-segments")[1][1].startswith("▶ x / b")
            await pilot.press("N", "N")
            assert table(app, "#live-segments")[1][-1].startswith("▶ y / b")
            # export: every segment's days up to the day shown
            await pilot.press("comma")
            rows = view.rows()
            assert len(rows) == 4 * 23 and {row["day"] for row in rows} == set(watch.days[:23])
            assert rows[0]["document_type"] == "x" and rows[0]["estimate"] == watch.segments[0].days[0].estimate

    asyncio.run(run())


def test_hidden_without_the_section(tmp_path):
    async def run() -> None:
        app = DashboardApp(scenario_file(tmp_path, STREAMED[:STREAMED.index("stream:")], "plain.yaml"))
        async with app.run_test(size=(100, 30)) as pilot:
            await ready(app, pilot)
            await pilot.press("v")
            assert app.query_one("#views").active != "live"
            assert app.check_action("show", ("live",)) is False

    asyncio.run(run())


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda size: f"{size[0]}x{size[1]}")
def test_snapshot_live_view(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        await ready(pilot.app, pilot)
        await pilot.press("v", "comma", "comma", "n")

    assert snap_compare(DashboardApp(scenario_file(tmp_path, STREAMED, "stream.yaml")), terminal_size=size,
                        run_before=run_before)

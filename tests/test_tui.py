"""The Textual dashboard: Pilot tests of the threshold controls, views, export and errors, and SVG snapshots."""

from __future__ import annotations

import asyncio
import csv
import functools
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from textual.widgets import TabbedContent  # noqa: E402

from rpa_sim.tui.app import DashboardApp  # noqa: E402
from rpa_sim.tui.plot import MarkedPlot  # noqa: E402
from rpa_sim.tui.views import FiguresPanel, Readout, cell  # noqa: E402

SIZE = (120, 40)
SCENARIO = """\
name: tui-small
data:
  generate: receipts
  n: 60
  seed: 3
policies: [confidence, document-escalation]
costs:
  hourly_rate: 30
  per_residual_error: 1.5
targets: [0.9]
"""
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


async def _ready(app, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


def _panel_numbers(app) -> dict[str, str]:
    """The figures panel as shown: label -> the number's text."""
    text = str(app.query_one(FiguresPanel).render())
    found = {}
    for line in text.splitlines()[2:]:
        match = re.match(r"(.+?)\s+(-?[\d.]+|nan)$", line)
        if match:
            found[match.group(1).strip()] = match.group(2)
    return found


def _expected(app, threshold: float) -> dict[str, str]:
    at = app.model.sweepers[app.policy].at(threshold)
    return {"auto-rate": f"{at['auto_rate']:.4f}", "reviews needed": f"{at['reviewed']:.0f}",
            "KIEval_Aligned^τ": f"{at['kieval_aligned']:.4f}",
            "residual substitutions": f"{at['residual_substitutions']:.0f}",
            "residual deletions": f"{at['residual_deletions']:.0f}", "residual additions": f"{at['additions']:.0f}",
            "documents straight through": f"{at['documents_straight_through']:.0f}", "cost": f"{at['cost']:.2f}"}


@run_async
async def test_keys_move_threshold_and_figures_match_sweeper(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        assert app.error is None and app.threshold == 0.5
        assert _panel_numbers(app) == _expected(app, 0.5)
        await pilot.press("plus", "plus")
        assert app.threshold == pytest.approx(0.52)
        assert _panel_numbers(app) == _expected(app, app.threshold)
        await pilot.press("minus")
        assert app.threshold == pytest.approx(0.51)
        await pilot.press("right_square_bracket")
        assert app.threshold == pytest.approx(0.56)
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.threshold == pytest.approx(0.46)
        assert _panel_numbers(app) == _expected(app, app.threshold)
        await pilot.press("2")
        assert app.policy == 1
        assert _panel_numbers(app) == _expected(app, app.threshold)


def _cell_of(plot, x: float, y: float) -> tuple[int, int]:
    where = plot.cell(x, y)
    assert where is not None, f"({x}, {y}) outside the plot's limits"
    return where


@run_async
async def test_plot_marks_follow_the_threshold_and_the_policy(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        plot = app.query_one("#tradeoff-plot", MarkedPlot)
        for keys in [(), ("plus", "plus"), ("right_square_bracket", "2"), ("left_square_bracket",) * 12]:
            await pilot.press(*keys)
            await pilot.pause()
            points = app.model.points(app.threshold)
            expected = {_cell_of(plot, x, y): "●" for x, y in points}
            expected[_cell_of(plot, *points[app.policy])] = "◆"
            assert plot.marked_cells == expected
        await pilot.press("dollar_sign")
        await pilot.pause()
        costs = app.query_one("#costs-plot", MarkedPlot)
        best = app.model.cost_optimum(app.policy)
        now = app.model.figures(app.policy, app.threshold)["cost"]
        expected = {_cell_of(costs, best["threshold"], best["cost"]): "★"}
        expected[_cell_of(costs, app.threshold, now)] = "●"
        assert costs.marked_cells == expected


@run_async
async def test_threshold_moves_repaint_text_without_a_layout_pass(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
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


@run_async
async def test_slider_keys_and_click(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        assert app.focused.id == "threshold-slider"
        await pilot.press("right")
        assert app.threshold == pytest.approx(0.51)
        await pilot.click("#threshold-slider", offset=(1, 0))
        assert app.threshold == pytest.approx(0.0)
        assert _panel_numbers(app) == _expected(app, 0.0)


@run_async
async def test_typed_threshold(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        await pilot.click("#threshold-input")
        await pilot.press(*"0.83", "enter")
        assert app.threshold == pytest.approx(0.83)
        assert _panel_numbers(app) == _expected(app, 0.83)
        await pilot.press(*"abc", "enter")
        await pilot.pause()
        assert app.threshold == pytest.approx(0.83)
        assert any("not a threshold" in n.message for n in app._notifications)


@run_async
async def test_switch_views(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        tabs = app.query_one(TabbedContent)
        for key, view in [("c", "compare"), ("f", "fields"), ("l", "calibration"), ("dollar_sign", "costs"),
                          ("s", "smudge"), ("t", "tradeoff")]:
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == view


@run_async
async def test_fields_view_follows_the_threshold_and_the_policy(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        await pilot.press("f", "plus", "2")
        await pilot.pause()
        lines = str(app.query_one("#fields-table").render()).splitlines()
        assert lines[0].split() == ["field", "predictions", "substitutions", "deletions", "additions", "auto_rate",
                                    "suggested_threshold"]
        rows = app.model.field_rows(1, 0.51)
        assert [line.split() for line in lines[1:]] == [
            [row["field"], *(cell(row[k]) for k in list(row)[1:])] for row in rows]
        assert "document-escalation at τ = 0.5100" in str(app.query_one("#fields-title").render())


@run_async
async def test_compare_sorts_by_column(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        await pilot.press("c")
        view = app.query_one("#compare-view")
        view.sort_by("auc")
        aucs = [row["auc"] for row in view.rows()]
        assert aucs == sorted(aucs)
        view.sort_by("auc")
        assert [row["auc"] for row in view.rows()] == sorted(aucs, reverse=True)


@run_async
async def test_export_csv_and_json(scenario, tmp_path):
    out = tmp_path / "exports"
    app = DashboardApp(scenario, export_dir=out)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        await pilot.press("plus", "e", "j")
        await pilot.pause()
        rows = json.loads((out / "rpa-sim-tradeoff.json").read_text())
        assert [r["policy"] for r in rows] == app.model.policy_names
        for i, row in enumerate(rows):
            at = app.model.sweepers[i].at(0.51)
            assert row["auto_rate"] == at["auto_rate"] and row["kieval_aligned"] == at["kieval_aligned"]
        with (out / "rpa-sim-tradeoff.csv").open() as handle:
            table = list(csv.DictReader(handle))
        assert float(table[0]["cost"]) == app.model.sweepers[0].at(0.51)["cost"]
        await pilot.press("f", "e")
        await pilot.pause()
        fields = list(csv.DictReader((out / "rpa-sim-fields.csv").open()))
        assert [r["field"] for r in fields] == list(app.model.table.keys)
        await pilot.press("p")
        await pilot.pause()
        assert (out / "rpa-sim-fields.svg").read_text().startswith("<svg")
        assert any("rpa-sim-fields.csv" in n.message for n in app._notifications)
        assert not list(out.glob(".*.tmp"))


@run_async
async def test_missing_file_shows_error(tmp_path):
    app = DashboardApp(str(tmp_path / "nope.yaml"))
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        assert app.error is not None and "nope.yaml" in app.error
        assert app.query_one("#error-panel").display
        await pilot.press("plus", "c", "e")  # nothing loaded: no crash
        await pilot.press("q")
    assert app.return_code == 0


@run_async
async def test_invalid_scenario_shows_error(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ndata: {generate: receipts}\n", encoding="utf-8")
    app = DashboardApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        assert app.error is not None and "policies" in app.error


@run_async
async def test_help_and_quit(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        await pilot.press("f1")
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
        assert app.screen.__class__.__name__ != "HelpScreen"
        await pilot.press("q")
        await pilot.pause()
    assert not app.is_running


@run_async
async def test_question_mark_opens_help_and_ctrl_q_quits(scenario):
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        await pilot.press("question_mark")
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape", "ctrl+q")
        await pilot.pause()
    assert not app.is_running


@run_async
async def test_command_palette_exports_the_current_view(scenario, tmp_path):
    app = DashboardApp(scenario, export_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
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
        rows = json.loads((tmp_path / "rpa-sim-costs.json").read_text())
        assert [r["threshold"] for r in rows] == app.model.plot_curves[0].threshold.tolist()


@run_async
async def test_loading_runs_in_a_worker_behind_an_indicator(scenario, monkeypatch):
    import threading

    from rpa_sim.tui import app as app_module

    release = threading.Event()
    real_load = app_module.load_model

    def slow_load(source):
        release.wait(10)
        return real_load(source)

    monkeypatch.setattr(app_module, "load_model", slow_load)
    app = DashboardApp(scenario)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one("#loading").display and not app.query_one("#views").display
        await pilot.press("question_mark")  # the interface answers while loading
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
        release.set()
        await _ready(app, pilot)
        assert app.model is not None and not app.query_one("#loading").display and app.query_one("#views").display


@run_async
async def test_vqa_smudge_view(vqa_scenario):
    app = DashboardApp(vqa_scenario)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        assert app.error is None and app.model.task == "vqa"
        at = app.model.sweepers[0].at(0.5)
        assert _panel_numbers(app)["ANLS"] == f"{at['anls']:.4f}"
        await pilot.press("s")
        await pilot.press("right")
        assert app.alpha == pytest.approx(0.30)
        note = str(app.query_one("#smudge-note").render())
        assert f"{app.model.smudge_at(0.3):.4f}" in note
        await pilot.pause()
        plot = app.query_one("#smudge-plot", MarkedPlot)
        assert plot.marked_cells == {_cell_of(plot, 0.3, app.model.smudge_at(0.3)): "●"}


@run_async
async def test_records_without_predictions_open_in_every_view(tmp_path):
    from rpa_sim.readers import write_records
    from rpa_sim.records import KIERecord

    path = tmp_path / "missed.jsonl"
    write_records([KIERecord.model_validate({
        "id": f"r{i}", "prediction": {"entities": []},
        "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"}]}})
        for i in range(2)], path)
    out = tmp_path / "exports"
    app = DashboardApp(str(path), export_dir=out)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        assert app.error is None and len(app.model.table) == 0
        numbers = _panel_numbers(app)
        # no prediction: no auto-rate; the four missed values stay, so KIEval_Aligned^τ = 1 - 4 / 4
        assert (numbers["auto-rate"], numbers["KIEval_Aligned^τ"], numbers["residual additions"]) == (
            "nan", "0.0000", "4")
        for key in ("c", "f", "l", "dollar_sign", "s", "t", "plus", "2"):
            await pilot.press(key)
            await pilot.pause()
        await pilot.press("e", "f", "e")
        await pilot.pause()
        assert [row["auto_rate"] for row in json.loads(json.dumps(app.model.figures_rows(1, app.threshold)))] == [None]
        assert list(csv.DictReader((out / "rpa-sim-tradeoff.csv").open()))[0]["auto_rate"] == ""
        fields = list(csv.DictReader((out / "rpa-sim-fields.csv").open()))
        assert [(r["field"], r["predictions"], r["additions"]) for r in fields] == [("total", "0", "2"),
                                                                                     ("date", "0", "2")]


# -- snapshots --------------------------------------------------------------------------------------------

def _snapshot_app(tmp_path: Path, text: str = SCENARIO) -> str:
    path = tmp_path / "snap.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


async def _settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("keys", [(), ("c",), ("f",), ("l",), ("dollar_sign",), ("f1",)],
                         ids=["tradeoff", "compare", "fields", "calibration", "costs", "help"])
def test_snapshot_kie_views(snap_compare, tmp_path, keys):
    async def run_before(pilot) -> None:
        await _settle(pilot)
        await pilot.press("plus", "plus", *keys)
        await pilot.pause()

    assert snap_compare(DashboardApp(_snapshot_app(tmp_path)), terminal_size=SIZE, run_before=run_before)


@pytest.mark.parametrize("keys", [(), ("f",), ("s",)], ids=["tradeoff", "fields", "smudge"])
def test_snapshot_vqa_views(snap_compare, tmp_path, keys):
    async def run_before(pilot) -> None:
        await _settle(pilot)
        await pilot.press(*keys)
        await pilot.pause()

    assert snap_compare(DashboardApp(_snapshot_app(tmp_path, VQA_SCENARIO)), terminal_size=SIZE,
                        run_before=run_before)


def test_snapshot_error(snap_compare, tmp_path):
    async def run_before(pilot) -> None:
        await _settle(pilot)

    assert snap_compare(DashboardApp("missing-scenario.yaml"), terminal_size=SIZE, run_before=run_before)

"""The dashboard's Signals view (``i``) and ``s``, which routes the trade-off view on one signal after another."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("textual")
pytest.importorskip("textual_plotext")

from textual.widgets import TabbedContent

from rpa_sim.tui.app import DashboardApp
from rpa_sim.tui.views.tradeoff import TradeoffView
from rpa_sim.tui.widgets.legend import Legend
from tests.support_tui import SCENARIO, ready, run_async, scenario_file

SIGNALS = SCENARIO.replace("  seed: 3\n", "  seed: 3\n  settings:\n    signals:\n"
                                          "      - {kind: agreement, name: agreement}\n"
                                          "      - {kind: degenerate, name: logprob}\n")


@run_async
async def test_the_signals_view_and_s_which_routes_the_tradeoff_view_on_one_signal_after_another(tmp_path):
    app = DashboardApp(scenario_file(tmp_path, SIGNALS))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        assert app.model.signal_names == ["confidence", "agreement", "logprob", "fused"]
        view = app.query_one(TradeoffView)
        assert view.signal_curve() is None
        await pilot.press("s")
        await pilot.pause()
        assert app.signal == "confidence" and view.drawn_signal == "confidence"
        legend = str(app.query_one("#tradeoff-legend", Legend).render())
        assert "s: routing on confidence" in legend
        # routing on the confidence alone is the bundled confidence policy's curve
        x, y = view.signal_curve()
        curve = app.model.plot_curves[0]
        assert np.allclose(x, curve.auto_rate) and np.allclose(y, curve.metric)
        # the Signals view: a row per signal, the one s routes on marked
        await pilot.press("i")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "signals"
        table = app.query_one("#signals-table")
        assert [line[2:].split()[0] for line in table.lines] == ["confidence", "agreement", "logprob", "fused"]
        assert [line[0] for line in table.lines] == ["▶", " ", " ", " "]
        summary = app.model.signals
        assert f"{summary['fused'].auroc:.4f}" in table.lines[3]
        await pilot.press("s")
        await pilot.pause()
        assert app.signal == "agreement" and table.lines[1].startswith("▶ agreement")
        note = str(app.query_one("#signals-note").render())
        assert summary["agreement"].words in note.replace("\n", " ")
        rows = app.query_one("#signals-view").rows()
        assert [row["signal"] for row in rows] == ["confidence", "agreement", "logprob", "fused"]
        # back in the trade-off view, the curve follows: after the last signal, none
        await pilot.press("t")
        for expected in ("logprob", "fused", None, "confidence"):
            await pilot.press("s")
            await pilot.pause()
            assert app.signal == expected and view.drawn_signal == expected


@run_async
async def test_without_named_signals_there_is_no_signals_view_and_s_does_nothing(tmp_path):
    app = DashboardApp(scenario_file(tmp_path, SCENARIO))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        tabs = app.query_one(TabbedContent)
        assert not tabs.get_tab("signals").display
        await pilot.press("i", "s")
        await pilot.pause()
        assert tabs.active == "tradeoff" and app.signal is None

"""The Trade-off view (``t``): every policy's auto-rate against the metric, the selected one's figures at τ,
and τ's slider and box; with ``s``, the curve of routing on one signal beside them."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Label, OptionList
from textual_plotext.plot import Plot

from rpa_sim.tui.export import export_stem
from rpa_sim.tui.model import PLOT_GRID
from rpa_sim.tui.scale import ThresholdScale
from rpa_sim.tui.views.base import View
from rpa_sim.tui.views.palette import TARGET_COLOR, policy_marker
from rpa_sim.tui.widgets.figures import FiguresPanel
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import MarkedPlot, Marker
from rpa_sim.tui.widgets.slider import Slider
from rpa_sim.tui.widgets.threshold_input import ThresholdInput

__all__ = ["TradeoffView", "axis_ticks"]


def axis_ticks(low: float, high: float, marks: Sequence[float], rows: int) -> list[float]:
    """Ticks for an axis of ``rows`` rows from ``low`` to ``high``: each of ``marks`` (targets) exactly, the
    ends unless a mark would share their row, and evenly spaced ticks between, three rows apart or more.

    >>> axis_ticks(0.7, 1.0, [0.9], 16)
    [0.7, 0.766667, 0.833333, 0.9, 1.0]
    >>> axis_ticks(0.0, 1.0, [], 4)
    [0.0, 1.0]
    """
    per_row = (high - low) / max(rows - 1, 1)
    inside = sorted({m for m in marks if low <= m <= high})
    ends = [end for end in (low, high) if all(abs(end - m) >= per_row for m in inside)]
    anchors = sorted({*inside, *ends})
    ticks = [anchors[0]]
    for a, b in itertools.pairwise(anchors):
        between = int((b - a) / per_row // 3)
        ticks += [a + (b - a) * i / between for i in range(1, between)] + [b]
    return [round(t, 6) for t in ticks]


class TradeoffView(View):
    stem = "tradeoff"
    #: the policy the legend highlights
    legend_policy: int | None = None
    #: the signal whose curve is drawn (``s``), None for none
    drawn_signal: str | None = None
    #: the look of that curve and of its point at τ
    SIGNAL = Marker("◇", "white")

    def compose(self) -> ComposeResult:
        with Horizontal(id="tradeoff-main"):
            with Vertical(id="tradeoff-left"):
                yield MarkedPlot(id="tradeoff-plot")
                yield Legend(id="tradeoff-legend")
            with VerticalScroll(id="tradeoff-side"):
                yield Label("Policies (1-9)", classes="side-title")
                yield OptionList(id="policy-list")
                yield FiguresPanel(id="figures")
        with Horizontal(id="threshold-bar"):
            yield Label("τ", id="threshold-label")
            yield Slider(0.5, scale=ThresholdScale(), id="threshold-slider")
            yield ThresholdInput(placeholder="type τ, Enter", id="threshold-input")

    def load(self) -> None:
        options = self.query_one("#policy-list", OptionList)
        options.clear_options()
        options.add_options([f"{i + 1}  {name}" for i, name in enumerate(self.model.policy_names)])
        options.highlighted = self.state.policy
        self.draw_curves()
        self.legend_policy = None
        self.redraw()

    def signal_curve(self) -> tuple[list[float], list[float]] | None:
        """The auto-rate and metric of routing on the state's signal (``s``), where defined; None without one."""
        if self.state.signal is None:
            return None
        curve = self.model.routing_sweeper(self.state.signal).curve(PLOT_GRID)
        defined = ~(np.isnan(curve.auto_rate) | np.isnan(curve.metric))
        return curve.auto_rate[defined].tolist(), curve.metric[defined].tolist()

    def draw_curves(self) -> None:
        model = self.model
        targets = model.target_values
        plot = self.query_one("#tradeoff-plot", MarkedPlot)
        ylim = model.plot_limits(model.metric_name, extra=tuple(targets))

        def curves(plt: Plot) -> None:
            plt.xlabel("auto-rate")
            plt.ylabel(model.metric_label)
            # the targets are ticks: a target's line is read against its own value
            ticks = axis_ticks(*ylim, targets, plot.size.height - 4)  # less the frame and the x axis
            plt.yticks(ticks, [f"{tick:.3f}" for tick in ticks])
            for target in targets:  # first, so that the curves are drawn over them
                plt.hline(target, TARGET_COLOR)
            for i, curve in enumerate(model.plot_curves):
                # without predictions there is no auto-rate: nothing to draw (plotext fails on all-NaN lines)
                defined = ~(np.isnan(curve.auto_rate) | np.isnan(curve.metric))
                if defined.any():
                    plt.plot(curve.auto_rate[defined].tolist(), curve.metric[defined].tolist(), marker="braille",
                             color=policy_marker(i).color)
            if signal is not None and signal[0]:
                plt.plot(*signal, marker="braille", color=self.SIGNAL.color)

        signal = self.signal_curve()
        self.drawn_signal = self.state.signal
        plot.draw(curves, xlim=(0.0, 1.0), ylim=ylim)

    def draw_legend(self) -> None:
        model, selected = self.model, self.state.policy
        entries = [(policy_marker(i, selected=i == selected), f"{i + 1} {name}")
                   for i, name in enumerate(model.policy_names)]
        if model.target_values:
            entries.append((Marker("─", TARGET_COLOR),
                            f"target{'s' if len(model.target_values) > 1 else ''} "
                            + ", ".join(f"{t:g}" for t in model.target_values)))
        if self.state.signal is not None:
            entries.append((self.SIGNAL, f"s: routing on {self.state.signal}"))
        self.query_one("#tradeoff-legend", Legend).show_entries(entries)
        self.legend_policy = selected

    def redraw(self) -> None:
        model, state = self.state.model, self.state
        if model is None:
            return
        self.query_one(FiguresPanel).show(model, state.policy, state.threshold)
        slider = self.query_one("#threshold-slider", Slider)
        slider.set_reactive(Slider.value, state.threshold)
        slider.refresh()
        if self.drawn_signal != state.signal:
            self.draw_curves()
            self.legend_policy = None
        if self.legend_policy != state.policy:
            self.draw_legend()
        points = model.points(state.threshold)
        marks = [(x, y, policy_marker(i)) for i, (x, y) in enumerate(points)]
        if state.signal is not None:
            at = model.routing_sweeper(state.signal).at(state.threshold)
            marks.append((at["auto_rate"], at[model.metric_name], self.SIGNAL))
        self.query_one("#tradeoff-plot", MarkedPlot).mark(
            marks + [(*points[state.policy], policy_marker(state.policy, selected=True))])

    def rows(self) -> list[dict[str, Any]]:
        model = self.model
        return [row for i in range(len(model.policies)) for row in model.figures_rows(i, self.state.threshold)]

    def export_name(self) -> str:
        return export_stem(self.stem, threshold=self.state.threshold)

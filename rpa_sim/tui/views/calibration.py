"""The Calibration view (``l``): the reliability diagram, ECE and AURC, and ECE per document type and field."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.widgets import Static
from textual_plotext import PlotextPlot

from rpa_sim.tui.texts import cell
from rpa_sim.tui.views.base import View
from rpa_sim.tui.views.palette import TARGET_COLOR
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import Marker
from rpa_sim.tui.widgets.text_table import TextTable

if TYPE_CHECKING:
    from rpa_sim.study.result import GroupCalibration

__all__ = ["CalibrationView"]


class CalibrationView(View):
    """The reliability diagram: each confidence bin's accuracy against its mean confidence, over the
    predictions per bin (bars, right axis)."""

    stem = "calibration"
    POINTS = Marker("●", "cyan+")
    DIAGONAL = Marker("⠔", TARGET_COLOR)
    COUNTS = Marker("█", "gray")

    def compose(self) -> ComposeResult:
        yield Static(id="calibration-ece", markup=False)
        yield PlotextPlot(id="calibration-plot")
        yield Legend(id="calibration-legend")
        yield TextTable(id="calibration-groups")

    def load(self) -> None:
        model = self.model
        note = self.query_one("#calibration-ece", Static)
        plot, legend = self.query_one(PlotextPlot), self.query_one("#calibration-legend", Legend)
        rows = self.rows()
        plot.display = legend.display = bool(rows)
        if not model.summarised:
            note.update("Calibration: computing…")
            return
        calibration = model.calibration  # None when no prediction has a confidence: nothing is measured
        width, mass, aurc = (None, None, None) if calibration is None else (
            calibration.ece_equal_width, calibration.ece_equal_mass, calibration.aurc)
        note.update(f"ECE {cell(width)} (equal-width bins), {cell(mass)} (equal-mass bins) · AURC {cell(aurc)}"
                    + ("" if rows else " · no predictions to bin"))
        self.show_groups(model.calibration_groups())
        if not rows:
            return
        plt = plot.plt
        plt.clear_figure()
        middles = [(r["lower"] + r["upper"]) / 2 for r in rows]
        counts = [r["count"] for r in rows]
        plt.bar(middles, counts, yside="right", color=self.COUNTS.color, width=0.3 / len(rows))
        most = max(counts)
        # textual-plotext's stub types yside as a number; plotext takes "left" or "right"
        plt.yticks([most * i / 4 for i in range(5)], [f"{round(most * i / 4):,}" for i in range(5)],
                   yside="right")  # type: ignore[arg-type]
        plt.plot([0, 1], [0, 1], color=self.DIAGONAL.color, marker="braille")
        confidence, accuracy = [r["mean_confidence"] for r in rows], [r["accuracy"] for r in rows]
        plt.plot(confidence, accuracy, color=self.POINTS.color, marker="braille")
        plt.scatter(confidence, accuracy, color=self.POINTS.color, marker=self.POINTS.symbol)
        ticks = [i / 5 for i in range(6)]
        plt.xticks(ticks, [f"{t:.1f}" for t in ticks])
        plt.yticks(ticks, [f"{t:.1f}" for t in ticks])
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        plt.xlabel("mean confidence of the bin")
        plt.ylabel("accuracy")
        plot.refresh()
        legend.show_entries([(self.POINTS, "a bin's accuracy at its mean confidence"),
                             (self.DIAGONAL, "perfect calibration"),
                             (self.COUNTS, "predictions in the bin (right axis)")])

    def show_groups(self, groups: list[tuple[str, tuple[GroupCalibration, ...]]]) -> None:
        """ECE per document type, then per field, the worst first: a few lines under the plot that scroll,
        however many fields there are."""
        table = self.query_one("#calibration-groups", TextTable)
        table.display = bool(groups)
        lines: list[str] = []
        for by, rows in groups:
            worst_first = sorted(rows, key=lambda row: -math.inf if row.ece_equal_width is None
                                 else -row.ece_equal_width)
            lines.extend(f"{by:<13}  {row.name or '(none)':<28}  {cell(row.ece_equal_width):>7}  "
                         f"{row.predictions:>11,}" for row in worst_first)
        table.show(f"{'ECE by':<13}  {'name':<28}  {'ECE':>7}  {'predictions':>11}", lines)

    def rows(self) -> list[dict[str, Any]]:
        return self.model.calibration_rows()

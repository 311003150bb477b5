"""The six views: each a container that draws itself from the model and the app's threshold, policy and alpha."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual_plotext import PlotextPlot

from rpa_sim.tui.model import padded_limits
from rpa_sim.tui.plot import MarkedPlot, Marker
from rpa_sim.tui.slider import Slider

if TYPE_CHECKING:
    from rpa_sim.tui.app import DashboardApp
    from rpa_sim.tui.model import DashboardModel


def cell(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


class View(Vertical):
    """A view: ``rows()`` is what export writes, ``redraw()`` follows the threshold, policy and alpha."""

    stem = "view"

    @property
    def dash(self) -> DashboardApp:
        return self.app  # type: ignore[return-value]

    @property
    def model(self) -> DashboardModel | None:
        return self.dash.model

    def load(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        pass

    def rows(self) -> list[dict[str, Any]]:
        return []


class Readout(Static):
    """A Static whose updates skip the screen's layout pass while the text keeps its shape.

    A threshold move changes numbers, not sizes, so repainting the widget is enough.
    """

    shape: tuple[int, ...] | None = None

    def show_text(self, text: str | Content) -> None:
        self.update(text, layout=False)
        visual = self.visual
        shape = tuple(cell_len(line) for line in visual.plain.split("\n")) if isinstance(visual, Content) else None
        if shape is None or shape != self.shape:
            self.refresh(layout=True)
        self.shape = shape


# -- trade-off ------------------------------------------------------------------------------------------

EACH_POLICY = Marker("●", "red", "each policy at τ")
SELECTED_POLICY = Marker("◆", "orange+", "selected policy at τ")


class FiguresPanel(Readout):
    """The selected policy's figures at the threshold (exactly ``Sweeper.at``)."""

    LABELS = [("auto_rate", "auto-rate", 4), ("reviewed", "reviews needed", 0), ("metric", "", 4),
              ("residual_substitutions", "residual substitutions", 0), ("residual_deletions", "residual deletions", 0),
              ("additions", "residual additions", 0), ("accuracy", "accuracy", 4), ("smudge", "SMuDGE", 4),
              ("documents_straight_through", "documents straight through", 0), ("cost", "cost", 2)]

    def show(self, policy: str, threshold: float, figures: dict[str, float], metric: str, label: str) -> None:
        self.figures = figures
        lines = [f"[b]{policy}[/b] at τ = {threshold:.4f}", ""]
        for key, name, digits in self.LABELS:
            key = metric if key == "metric" else key
            name = name or label
            if key in figures:
                lines.append(f"{name:<27}{figures[key]:>12.{digits}f}")
        self.show_text("\n".join(lines))


class TradeoffView(View):
    stem = "tradeoff"

    def compose(self) -> ComposeResult:
        with Horizontal(id="tradeoff-main"):
            yield MarkedPlot(id="tradeoff-plot")
            with Vertical(id="tradeoff-side"):
                yield Label("Policies (1-9)", classes="side-title")
                yield OptionList(id="policy-list")
                yield FiguresPanel(id="figures")
        with Horizontal(id="threshold-bar"):
            yield Label("τ", id="threshold-label")
            yield Slider(0.5, step=0.01, id="threshold-slider")
            yield Input(placeholder="type τ, Enter", id="threshold-input")

    def load(self) -> None:
        options = self.query_one("#policy-list", OptionList)
        options.clear_options()
        options.add_options([f"{i + 1}  {name}" for i, name in enumerate(self.model.policy_names)])
        options.highlighted = self.dash.policy
        self.draw_curves()
        self.redraw()

    def draw_curves(self) -> None:
        model = self.model

        def curves(plt) -> None:
            plt.title(f"{model.name}: auto-rate vs {model.metric_label} after review")
            plt.xlabel("auto-rate")
            plt.ylabel(model.metric_label)
            for curve in model.plot_curves:
                # without predictions there is no auto-rate: nothing to draw (plotext fails on all-NaN lines)
                defined = ~(np.isnan(curve.auto_rate) | np.isnan(curve.metric))
                if defined.any():
                    plt.plot(curve.auto_rate[defined].tolist(), curve.metric[defined].tolist(), label=curve.policy,
                             marker="braille")

        self.query_one("#tradeoff-plot", MarkedPlot).draw(
            curves, xlim=(0.0, 1.0), ylim=model.plot_limits(model.metric_name),
            markers=(EACH_POLICY, SELECTED_POLICY))

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        figures = model.figures(dash.policy, dash.threshold)
        self.query_one(FiguresPanel).show(model.policy_names[dash.policy], dash.threshold, figures,
                                          model.metric_name, model.metric_label)
        slider = self.query_one("#threshold-slider", Slider)
        slider.set_reactive(Slider.value, dash.threshold)
        slider.refresh()
        points = model.points(dash.threshold)
        self.query_one("#tradeoff-plot", MarkedPlot).mark(
            [(x, y, EACH_POLICY) for x, y in points] + [(*points[dash.policy], SELECTED_POLICY)])

    def rows(self) -> list[dict[str, Any]]:
        model = self.model
        return [row for i in range(len(model.policies)) for row in model.figures_rows(i, self.dash.threshold)]


# -- compare --------------------------------------------------------------------------------------------

class CompareView(View):
    stem = "compare"

    def compose(self) -> ComposeResult:
        yield Label("Policies side by side (select a column header to sort)", id="compare-title")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.sort_column: str | None = None
        self.reverse = False

    def load(self) -> None:
        self.sort_column, self.reverse = None, False
        self.fill()

    def sorted_rows(self) -> list[dict[str, Any]]:
        rows = self.model.compare_rows()
        if self.sort_column is None:
            return rows
        present = [r for r in rows if r.get(self.sort_column) not in (None, "")]
        absent = [r for r in rows if r.get(self.sort_column) in (None, "")]
        present.sort(key=lambda r: r[self.sort_column], reverse=self.reverse)
        return present + absent

    def fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for name in self.model.compare_columns():
            arrow = "" if name != self.sort_column else (" ▼" if self.reverse else " ▲")
            table.add_column(name + arrow, key=name)
        for row in self.sorted_rows():
            table.add_row(*(cell(v) for v in row.values()), key=row["policy"])

    def sort_by(self, column: str) -> None:
        if self.sort_column == column:
            self.reverse = not self.reverse
        else:
            self.sort_column, self.reverse = column, False
        self.fill()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

    def rows(self) -> list[dict[str, Any]]:
        return self.sorted_rows()


# -- fields ---------------------------------------------------------------------------------------------

class FieldsView(View):
    """Per-field figures as a text table: a threshold move repaints its text, without a DataTable's
    re-render of every cell."""

    stem = "fields"
    #: each column's width, fixed at load so a threshold move keeps the table's shape
    widths: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield Readout(id="fields-title")
        with VerticalScroll(id="fields-scroll"):
            yield Readout(id="fields-table")

    def load(self) -> None:
        rows = self.rows()
        self.widths = {name: max([cell_len(name)] + [cell_len(cell(row[name])) for row in rows] + [6]) for name in
                       (rows[0] if rows else {})}
        self.redraw()

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        kind = " and ".join(grouping.by for grouping in model.groupings)
        targets = model.targets
        source = f"optimized for {targets[0]}" if targets else "no target in the scenario"
        self.query_one("#fields-title", Readout).show_text(
            f"Per {kind}: {model.policy_names[dash.policy]} at τ = {dash.threshold:.4f}; suggested threshold {source}")
        self.query_one("#fields-table", Readout).show_text(self.table_text(self.rows()))

    def table_text(self, rows: list[dict[str, Any]]) -> Content:
        def line(values: dict[str, str]) -> str:
            padded = []
            for name, value in values.items():
                gap = " " * (self.widths[name] - cell_len(value))  # names may hold wide characters
                padded.append(value + gap if name in ("by", "field") else gap + value)
            return "  ".join(padded)

        header = line({name: name for name in self.widths})
        body = [line({name: cell(row[name]) for name in self.widths}) for row in rows]
        return Content("\n".join([header, *body])).stylize("bold underline", 0, len(header))

    def rows(self) -> list[dict[str, Any]]:
        return self.model.field_rows(self.dash.policy, self.dash.threshold)


# -- calibration ----------------------------------------------------------------------------------------

class CalibrationView(View):
    stem = "calibration"

    def compose(self) -> ComposeResult:
        yield Static(id="calibration-ece")
        yield PlotextPlot(id="calibration-plot")

    def load(self) -> None:
        calibration = self.model.summary.get("calibration", {})
        self.query_one("#calibration-ece", Static).update(
            f"ECE equal-width {cell(calibration.get('ece_equal_width'))}   "
            f"ECE equal-mass {cell(calibration.get('ece_equal_mass'))}   AURC {cell(calibration.get('aurc'))}")
        rows = self.rows()
        plt = self.query_one(PlotextPlot).plt
        plt.clear_figure()
        plt.title("Reliability: accuracy per confidence bin (equal width)")
        plt.xlabel("confidence bin")
        plt.ylabel("accuracy")
        if rows:
            middles = [(r["lower"] + r["upper"]) / 2 for r in rows]
            plt.bar(middles, [r["accuracy"] for r in rows], label="accuracy", width=0.8 / max(len(rows), 1))
            plt.plot([0, 1], [0, 1], label="perfect calibration", color="green")
            plt.scatter(middles, [r["mean_confidence"] for r in rows], label="mean confidence", color="red")
            ticks = [i / 5 for i in range(6)]
            plt.xticks(ticks, [f"{t:.1f}" for t in ticks])
            plt.yticks(ticks, [f"{t:.1f}" for t in ticks])
            plt.xlim(0, 1)
            plt.ylim(0, 1)
        self.query_one(PlotextPlot).refresh()

    def rows(self) -> list[dict[str, Any]]:
        return self.model.calibration_rows()


# -- costs ----------------------------------------------------------------------------------------------

COST_OPTIMUM = Marker("★", "green", "optimum")
CURRENT_THRESHOLD = Marker("●", "red", "current τ")


class CostsView(View):
    stem = "costs"
    #: the policy whose cost curve is drawn (the figure is redrawn only when the policy changes)
    drawn_policy: int | None = None

    def compose(self) -> ComposeResult:
        yield Readout(id="costs-note")
        yield MarkedPlot(id="costs-plot")

    def load(self) -> None:
        self.drawn_policy = None
        self.redraw()

    def draw_curve(self) -> None:
        model, policy = self.model, self.dash.policy
        curve = model.plot_curves[policy]
        best = model.cost_optimum(policy)

        def cost_curve(plt) -> None:
            plt.title("Cost against threshold")
            plt.xlabel("threshold τ")
            plt.ylabel("cost")
            plt.plot(curve.threshold.tolist(), curve.columns["cost"].tolist(), label=curve.policy, marker="braille")

        optimum = (best["cost"],) if best else ()
        self.query_one("#costs-plot", MarkedPlot).draw(
            cost_curve, xlim=(0.0, 1.0), ylim=model.plot_limits("cost", [policy], optimum),
            markers=(COST_OPTIMUM, CURRENT_THRESHOLD) if best else (CURRENT_THRESHOLD,))
        self.drawn_policy = policy

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        note = self.query_one("#costs-note", Readout)
        plot = self.query_one("#costs-plot", MarkedPlot)
        if model.costs is None:
            note.show_text("This scenario has no costs: add a `costs:` section (hourly_rate, per_residual_error).")
            plot.display = False
            return
        plot.display = True
        if self.drawn_policy != dash.policy:
            self.draw_curve()
        best = model.cost_optimum(dash.policy)
        now = model.figures(dash.policy, dash.threshold)["cost"]
        text = f"{model.policy_names[dash.policy]}: cost {now:.2f} at τ = {dash.threshold:.4f}"
        if best:
            text += (f"   optimum {best['cost']:.2f} at τ = {best['threshold']:.4f}"
                     f"   saves {best['savings_vs_review_all']:.2f} vs review-all")
        note.show_text(text)
        marks = [(best["threshold"], best["cost"], COST_OPTIMUM)] if best else []
        plot.mark(marks + [(dash.threshold, now, CURRENT_THRESHOLD)])

    def rows(self) -> list[dict[str, Any]]:
        return self.model.cost_rows(self.dash.policy)


# -- SMuDGE ---------------------------------------------------------------------------------------------

ALPHA = Marker("●", "red", "α")


class SmudgeView(View):
    stem = "smudge"

    def compose(self) -> ComposeResult:
        yield Readout(id="smudge-note")
        yield MarkedPlot(id="smudge-plot")
        with Horizontal(id="alpha-bar"):
            yield Label("α", id="alpha-label")
            yield Slider(0.25, step=0.05, id="alpha-slider")

    def load(self) -> None:
        model = self.model
        pairs = [(r["alpha"], r["mean_smudge"]) for r in self.rows() if r["mean_smudge"] is not None]

        def alpha_curve(plt) -> None:
            plt.title("Mean SMuDGE against α")
            plt.xlabel("α")
            plt.ylabel("mean SMuDGE")
            if pairs:
                plt.plot([p[0] for p in pairs], [p[1] for p in pairs], marker="braille", label="mean SMuDGE")

        if model.has_smudge:
            self.query_one("#smudge-plot", MarkedPlot).draw(
                alpha_curve, xlim=(0.0, 1.0), ylim=padded_limits([p[1] for p in pairs]), markers=(ALPHA,))
        self.redraw()

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        note = self.query_one("#smudge-note", Readout)
        plot = self.query_one("#smudge-plot", MarkedPlot)
        if not model.has_smudge:
            note.show_text("SMuDGE is a VQA metric: open a VQA scenario (e.g. docvqa-demo).")
            plot.display = False
            self.query_one("#alpha-bar").display = False
            return
        value = model.smudge_at(dash.alpha)
        note.show_text(f"mean SMuDGE {cell(value)} at α = {dash.alpha:.2f} (α weighs the match against grounding)")
        self.query_one("#alpha-slider", Slider).set_reactive(Slider.value, dash.alpha)
        self.query_one("#alpha-slider", Slider).refresh()
        plot.mark([] if value is None else [(dash.alpha, value, ALPHA)])

    def rows(self) -> list[dict[str, Any]]:
        return self.model.smudge_rows()

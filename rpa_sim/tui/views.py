"""The six views: each a container that draws itself from the model and the app's threshold, policy and alpha."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Label, OptionList, Static
from textual_plotext import PlotextPlot

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


# -- trade-off ------------------------------------------------------------------------------------------

class FiguresPanel(Static):
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
        self.update("\n".join(lines))


class TradeoffView(View):
    stem = "tradeoff"

    def compose(self) -> ComposeResult:
        with Horizontal(id="tradeoff-main"):
            yield PlotextPlot(id="tradeoff-plot")
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
        plot = self.query_one("#tradeoff-plot", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        plt.title(f"{model.name}: auto-rate vs {model.metric_label} after review")
        plt.xlabel("auto-rate")
        plt.ylabel(model.metric_label)
        for curve in model.plot_curves:
            plt.plot(curve.auto_rate.tolist(), curve.metric.tolist(), label=curve.policy, marker="braille")
        self._static_layers = len(model.plot_curves)

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
        plot = self.query_one("#tradeoff-plot", PlotextPlot)
        plt = plot.plt
        self.draw_curves()
        points = model.points(dash.threshold)
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        plt.scatter(xs, ys, marker="●", color="red", label=f"τ = {dash.threshold:.2f}")
        sx, sy = points[dash.policy]
        plt.scatter([sx], [sy], marker="◆", color="yellow")
        plot.refresh()

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
    stem = "fields"

    def compose(self) -> ComposeResult:
        yield Label("", id="fields-title")
        yield DataTable(id="fields-table", cursor_type="row", zebra_stripes=True)

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        kind = "key" if model.task == "kie" else "question type"
        targets = model.targets
        source = f"optimised for {targets[0]}" if targets else "no target in the scenario"
        self.query_one("#fields-title", Label).update(
            f"Per {kind}: {model.policy_names[dash.policy]} at τ = {dash.threshold:.4f}; suggested threshold {source}")
        table = self.query_one(DataTable)
        rows = self.rows()
        table.clear(columns=True)
        if rows:
            for name in rows[0]:
                table.add_column(name, key=name)
            for row in rows:
                table.add_row(*(cell(v) for v in row.values()))

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

class CostsView(View):
    stem = "costs"

    def compose(self) -> ComposeResult:
        yield Static(id="costs-note")
        yield PlotextPlot(id="costs-plot")

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        note = self.query_one("#costs-note", Static)
        plot = self.query_one("#costs-plot", PlotextPlot)
        if model.costs is None:
            note.update("This scenario has no costs: add a `costs:` section (hourly_rate, per_residual_error).")
            plot.display = False
            return
        plot.display = True
        curve = model.plot_curves[dash.policy]
        best = model.cost_optimum(dash.policy)
        now = model.figures(dash.policy, dash.threshold)["cost"]
        text = f"{curve.policy}: cost {now:.2f} at τ = {dash.threshold:.4f}"
        if best:
            text += (f"   optimum {best['cost']:.2f} at τ = {best['threshold']:.4f}"
                     f"   saves {best['savings_vs_review_all']:.2f} vs review-all")
        note.update(text)
        plt = plot.plt
        plt.clear_figure()
        plt.title("Cost against threshold")
        plt.xlabel("threshold τ")
        plt.ylabel("cost")
        plt.plot(curve.threshold.tolist(), curve.columns["cost"].tolist(), label=curve.policy, marker="braille")
        if best:
            plt.scatter([best["threshold"]], [best["cost"]], marker="★", color="green", label="optimum")
        plt.scatter([dash.threshold], [now], marker="●", color="red", label="current τ")
        plot.refresh()

    def rows(self) -> list[dict[str, Any]]:
        return self.model.cost_rows(self.dash.policy)


# -- SMuDGE ---------------------------------------------------------------------------------------------

class SmudgeView(View):
    stem = "smudge"

    def compose(self) -> ComposeResult:
        yield Static(id="smudge-note")
        yield PlotextPlot(id="smudge-plot")
        with Horizontal(id="alpha-bar"):
            yield Label("α", id="alpha-label")
            yield Slider(0.25, step=0.05, id="alpha-slider")

    def redraw(self) -> None:
        model, dash = self.model, self.dash
        if model is None:
            return
        note = self.query_one("#smudge-note", Static)
        plot = self.query_one("#smudge-plot", PlotextPlot)
        if model.task != "vqa":
            note.update("SMuDGE is a VQA metric: open a VQA scenario (e.g. docvqa-demo).")
            plot.display = False
            self.query_one("#alpha-bar").display = False
            return
        rows = self.rows()
        value = model.smudge_at(dash.alpha)
        note.update(f"mean SMuDGE {cell(value)} at α = {dash.alpha:.2f} (α weighs the match against grounding)")
        self.query_one("#alpha-slider", Slider).set_reactive(Slider.value, dash.alpha)
        self.query_one("#alpha-slider", Slider).refresh()
        plt = plot.plt
        plt.clear_figure()
        plt.title("Mean SMuDGE against α")
        plt.xlabel("α")
        plt.ylabel("mean SMuDGE")
        pairs = [(r["alpha"], r["mean_smudge"]) for r in rows if r["mean_smudge"] is not None]
        if pairs:
            plt.plot([p[0] for p in pairs], [p[1] for p in pairs], marker="braille", label="mean SMuDGE")
        if value is not None:
            plt.scatter([dash.alpha], [value], marker="●", color="red", label="α")
        plot.refresh()

    def rows(self) -> list[dict[str, Any]]:
        return self.model.smudge_rows()

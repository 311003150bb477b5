"""The Signals view (``i``): every confidence signal as a row (AUROC with its interval, ECE, certified automation,
verdicts), and the selected one's ROC curve and reliability; ``s`` selects the next (``docs/signals.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static
from textual_plotext import PlotextPlot

from rpa_sim.tui.texts import cell
from rpa_sim.tui.views.base import View
from rpa_sim.tui.views.palette import TARGET_COLOR
from rpa_sim.tui.widgets.text_table import TextTable

if TYPE_CHECKING:
    from rpa_sim.route.signals.results import SignalFigures

__all__ = ["SignalsView"]


class SignalsView(View):
    """The signals measured by the study, one row each; the selected signal (the one ``s`` routes the trade-off
    view on, else the first) marked ▶ with its ROC curve and reliability drawn below."""

    stem = "signals"
    CURVE = "cyan+"

    def compose(self) -> ComposeResult:
        yield Static(id="signals-note", markup=False)
        yield TextTable(id="signals-table")
        with Horizontal(id="signals-plots"):
            yield PlotextPlot(id="signals-roc")
            yield PlotextPlot(id="signals-reliability")

    def selected(self) -> SignalFigures | None:
        """The signal ``s`` chose (or the first), among those the study measured."""
        signals = self.model.signals
        if signals is None or not signals.signals:
            return None
        names = [signal.name for signal in signals.signals]
        return signals.signals[names.index(self.state.signal) if self.state.signal in names else 0]

    def redraw(self) -> None:
        model = self.state.model
        if model is None:
            return
        note = self.query_one("#signals-note", Static)
        table, plots = self.query_one("#signals-table", TextTable), self.query_one("#signals-plots")
        signals = model.signals
        if signals is None:
            table.display = plots.display = False
            note.update("Signals: computing…" if not model.summarised else
                        "The values carry no named signal beside their confidence (a record's signals: "
                        "{name: number}; rpa-sim generate receipts --signals llm makes some).")
            return
        table.display = plots.display = True
        chosen = self.selected()
        certified = "" if signals.max_error is None else (
            f" · automation certified at max error {signals.max_error:g}, delta {signals.delta:g}")
        note.update(f"{signals.values:,} values, {signals.errors:,} errors{certified} · s: next signal "
                    f"(the trade-off view routes on it)"
                    + ("" if chosen is None else f"\n{chosen.name}: {chosen.words}"))
        lines = []
        for signal in signals.signals:
            mark = "▶" if chosen is not None and signal.name == chosen.name else " "
            interval = "" if signal.auroc_low is None else f"{signal.auroc_low:.2f}-{signal.auroc_high:.2f}"
            automation = "" if signal.certified_automation is None else f"{signal.certified_automation:.0%}"
            lines.append(f"{mark} {signal.name[:16]:<16} {cell(signal.auroc):>7} {interval:>9} {cell(signal.ece):>7} "
                         f"{automation:>5}  {', '.join(signal.verdicts) or '-'}")
        table.show(f"  {'signal':<16} {'AUROC':>7} {'95% int.':>9} {'ECE':>7} {'auto':>5}  verdicts", lines)
        if chosen is not None:
            self.draw(chosen)

    def draw(self, signal: SignalFigures) -> None:
        """The signal's ROC curve and its reliability, each over the diagonal."""
        self.plot("#signals-roc", f"ROC {signal.name}", "errors auto-accepted", "right auto-accepted",
                  signal.roc_errors, signal.roc_correct)
        table = signal.reliability
        self.plot("#signals-reliability", f"reliability (ECE {cell(signal.ece)})", "mean signal of the bin",
                  "share right", table.mean_signal, table.share_right, dots=True)

    def plot(self, selector: str, title: str, xlabel: str, ylabel: str, x: tuple[float, ...], y: tuple[float, ...],
             *, dots: bool = False) -> None:
        """A unit square with its diagonal and the line (and ``dots``) through ``x``, ``y``."""
        widget = self.query_one(selector, PlotextPlot)
        plt = widget.plt
        plt.clear_figure()
        plt.plot([0, 1], [0, 1], color=TARGET_COLOR, marker="braille")
        if x:
            plt.plot(list(x), list(y), color=self.CURVE, marker="braille")
            if dots:
                plt.scatter(list(x), list(y), color=self.CURVE, marker="●")
        plt.xlim(0, 1)
        plt.ylim(0, 1)
        plt.title(title)
        plt.xlabel(xlabel)
        plt.ylabel(ylabel)
        widget.refresh()

    def rows(self) -> list[dict[str, Any]]:
        signals = self.model.signals
        if signals is None:
            return []
        return [{"signal": s.name, "values": s.values, "carried": s.carried, "auroc": s.auroc,
                 "auroc_low": s.auroc_low, "auroc_high": s.auroc_high, "ece": s.ece, "brier": s.brier,
                 "certified_automation": s.certified_automation, "threshold": s.threshold, "cost": s.cost,
                 "verdicts": " ".join(s.verdicts)} for s in signals.signals]

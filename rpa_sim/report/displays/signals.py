"""The confidence signals' figures: their ROC curves on one panel, their reliability, and the automation each
certifies with what it costs (``docs/signals.md``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.report.displays.base import SummaryDisplay
from rpa_sim.report.style import PALETTE, style

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.route.signals.results import SignalFigures, SignalsResult
    from rpa_sim.study.result import StudySummary

__all__ = ["SignalsRocDisplay", "SignalsReliabilityDisplay", "SignalsAutomationDisplay"]


def _signals_of(summary: StudySummary) -> SignalsResult:
    if summary.signals is None:
        raise ValueError("the summary has no signals: no value carries a named signal")
    return summary.signals


class SignalsRocDisplay(SummaryDisplay):
    """Each signal's ROC curve on one panel: as its threshold is lowered, the share of correct values it
    auto-accepts (up) against the share of errors it lets through (right); the diagonal is chance.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    signals : sequence of SignalFigures
        The signals, in the order drawn (the fused one last).
    """

    def __init__(self, *, signals: Sequence[SignalFigures]) -> None:
        self.signals = tuple(signals)

    @classmethod
    def from_summary(cls, summary: StudySummary) -> SignalsRocDisplay:
        """The ROC curves of a study's signals (``signals``).

        Raises
        ------
        ValueError
            When the summary has no signals.
        """
        return cls(signals=_signals_of(summary).signals)

    def plot(self, ax: Axes | None = None) -> SignalsRocDisplay:
        """Draw the display, with its legend (each signal with its AUROC); ``self``, ``figure_`` and ``ax_`` set."""
        axes = self.panel(ax, "Telling errors from correct values", "share of errors auto-accepted",
                          "share of correct values auto-accepted")
        axes.plot([0, 1], [0, 1], color="gray", linestyle=":", linewidth=1, label="chance (AUROC 0.5)")
        for index, signal in enumerate(self.signals):
            if not signal.roc_errors:
                continue
            look = style(index)
            auroc = "n/a" if signal.auroc is None else f"{signal.auroc:.2f}"
            axes.plot(signal.roc_errors, signal.roc_correct, color=look["color"], linestyle=look["linestyle"],
                      linewidth=2.4 if signal.name == "fused" else 1.6, label=f"{signal.name} (AUROC {auroc})")
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1.02)
        axes.legend(fontsize=8, loc="lower right")
        return self


class SignalsReliabilityDisplay(SummaryDisplay):
    """Each signal's reliability, a panel each: the share right of each bin of the signal against its mean
    signal, the diagonal being a signal whose number is the chance of being right.

    Parameters
    ----------
    signals : sequence of SignalFigures
    columns : int, default=2
        Panels per row.
    """

    def __init__(self, *, signals: Sequence[SignalFigures], columns: int = 2) -> None:
        self.signals = tuple(signals)
        self.columns = columns

    @classmethod
    def from_summary(cls, summary: StudySummary) -> SignalsReliabilityDisplay:
        """The reliability of a study's signals (``signals``).

        Raises
        ------
        ValueError
            When the summary has no signals.
        """
        return cls(signals=_signals_of(summary).signals)

    def plot(self, ax: Axes | Sequence[Axes] | np.ndarray | None = None) -> SignalsReliabilityDisplay:
        """Draw a panel per signal, in rows of :attr:`columns` (``ax``: that many axes, in row order);
        ``self``, ``figure_`` and ``axes_`` (shape rows x columns) set."""
        rows = max(1, math.ceil(len(self.signals) / self.columns))
        grid = self.panels(ax, rows, self.columns, size=(7.5, 2.6 * rows + 0.6), sharex=True, sharey=True)
        for index, axes in enumerate(grid.flat):
            if index >= len(self.signals):
                axes.set_visible(False)
                continue
            signal = self.signals[index]
            table = signal.reliability
            axes.plot([0, 1], [0, 1], color="gray", linestyle=":", linewidth=1)
            if table.count:
                sizes = 20 + 180 * np.asarray(table.count) / max(table.count)  # a dot's area grows with its bin
                axes.scatter(table.mean_signal, table.share_right, s=sizes, color=PALETTE[index % len(PALETTE)],
                             edgecolor="black", linewidth=0.5)
                axes.plot(table.mean_signal, table.share_right, color=PALETTE[index % len(PALETTE)], linewidth=1)
            ece = "n/a" if signal.ece is None else f"{signal.ece:.3f}"
            axes.set_title(f"{signal.name}: ECE {ece}", fontsize=10)
            axes.set_xlim(0, 1)
            axes.set_ylim(0, 1.02)
        for axes in grid[-1, :]:
            axes.set_xlabel("mean signal of the bin")
        for axes in grid[:, 0]:
            axes.set_ylabel("share right")
        self.axes_ = grid
        return self


class SignalsAutomationDisplay(SummaryDisplay):
    """The automation each signal's certified threshold gives (bars), with what the signal costs per value.

    Parameters
    ----------
    signals : sequence of SignalFigures
        Each with its ``certified_automation``.
    max_error, delta : float
        The certification's, for the title.
    currency : str, optional
        The costs' unit, for the labels.
    """

    def __init__(self, *, signals: Sequence[SignalFigures], max_error: float, delta: float,
                 currency: str | None = None) -> None:
        self.signals = tuple(signals)
        self.max_error, self.delta, self.currency = max_error, delta, currency

    @classmethod
    def from_summary(cls, summary: StudySummary) -> SignalsAutomationDisplay:
        """The certified automation of a study's signals.

        Raises
        ------
        ValueError
            When the summary has no signals, or they were not certified (no ``certify:`` in the scenario).
        """
        signals = _signals_of(summary)
        if signals.max_error is None or signals.delta is None:
            raise ValueError("the signals were not certified: the scenario has no certify section")
        return cls(signals=signals.signals, max_error=signals.max_error, delta=signals.delta,
                   currency=None if summary.costs is None else summary.costs.currency)

    def plot(self, ax: Axes | None = None) -> SignalsAutomationDisplay:
        """Draw the bars, the best on top, each labelled with its automation and cost; ``self``, ``figure_`` and
        ``ax_`` set."""
        axes = self.panel(ax, f"Automation certified at max error {self.max_error:g}, delta {self.delta:g}",
                          "share of values auto-accepted (held-out documents)", "")
        names = [signal.name for signal in self.signals][::-1]
        shares = [signal.certified_automation or 0.0 for signal in self.signals][::-1]
        colors = [PALETTE[(len(names) - 1 - i) % len(PALETTE)] for i in range(len(names))]
        axes.barh(names, shares, color=colors, edgecolor="black", linewidth=0.5)
        unit = f" {self.currency}" if self.currency else ""
        for row, signal in enumerate(self.signals[::-1]):
            cost = "" if signal.cost is None else f", {signal.cost:g}{unit}/value"
            axes.text(shares[row] + 0.01, row, f"{shares[row]:.0%}{cost}", va="center", fontsize=9)
        axes.set_xlim(0, 1.25)
        axes.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
        return self

"""What audits tell about the auto-accepted error rate: the daily intervals against the truth, and how the
intervals narrow as the audit rate grows (the summary's ``monitoring``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.lines import Line2D

from rpa_sim.common.formatting import setting_share
from rpa_sim.report.displays.base import SummaryDisplay
from rpa_sim.report.style import PALETTE, label, style

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.study.result import MonitoredPolicy, StudySummary

__all__ = ["MonitoringIntervalsDisplay", "MonitoringWidthsDisplay", "monitored_policies"]

_COVERED, _MISSED = PALETTE[0], PALETTE[3]


def monitored_policies(summary: StudySummary) -> list[tuple[int, MonitoredPolicy]]:
    """The policies the study monitored with figures, each with its place in the scenario (which gives its style);
    none without the scenario's ``monitoring`` section."""
    if summary.monitoring is None:
        return []
    places = {policy.policy: index for index, policy in enumerate(summary.policies)}
    return [(places[entry.policy], entry) for entry in summary.monitoring.policies if entry.note is None]


def _methods(monitored: Sequence[tuple[int, MonitoredPolicy]]) -> list[str]:
    """Every method any policy was estimated with, in order of first appearance."""
    return list(dict.fromkeys(method for _, entry in monitored for method in entry.methods or {}))


class MonitoringIntervalsDisplay(SummaryDisplay):
    """The intervals of the first replayed days per policy (rows) and method (columns), each day's estimate a
    dot, against the true auto-accepted error rate (a black line); intervals that miss it in vermilion.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    monitored : sequence of (int, MonitoredPolicy)
        The policies with figures and their places in the scenario (:func:`monitored_policies`).
    confidence_level : float
        The intervals' nominal coverage.

    Attributes
    ----------
    figure_ : Figure
    axes_ : ndarray of Axes
        The panels, one row per policy and one column per method.
    """

    def __init__(self, *, monitored: Sequence[tuple[int, MonitoredPolicy]], confidence_level: float) -> None:
        self.monitored = tuple(monitored)
        self.methods = _methods(self.monitored)
        self.confidence_level = confidence_level

    @classmethod
    def from_summary(cls, summary: StudySummary) -> MonitoringIntervalsDisplay:
        """The monitored policies of a study with a ``monitoring`` section.

        Raises
        ------
        ValueError
            When the study monitored no policy with figures.
        """
        monitored = monitored_policies(summary)
        monitoring = summary.monitoring
        if monitoring is None or not monitored:
            raise ValueError("the run monitored no policy: add a monitoring section to the scenario")
        return cls(monitored=monitored, confidence_level=monitoring.confidence_level)

    def plot(self, ax: np.ndarray | None = None) -> MonitoringIntervalsDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : ndarray of Axes, optional
            The panels, of shape (policies, methods). Without them a figure is made, with a title over the
            panels and a legend under them.

        Returns
        -------
        MonitoringIntervalsDisplay
            ``self``, with ``figure_`` and ``axes_`` set.
        """
        rows, columns = len(self.monitored), len(self.methods)
        grid = self.panels(ax, rows, columns, size=(7.5, 1.0 + 2.1 * rows), sharex=True)
        figure = self.figure_
        for row, (_, entry) in enumerate(self.monitored):
            days, truth = entry.first_days, entry.true_auto_error
            for column, method in enumerate(self.methods):
                axes = grid[row, column]
                label(axes, f"{entry.policy}: {method}", "replayed day" if row == rows - 1 else "",
                      "auto-accepted error" if column == 0 else "")
                axes.title.set_fontsize(9)
                if method not in (entry.methods or {}) or days is None:
                    axes.set_axis_off()
                    continue
                low, high = np.array(days.low[method]), np.array(days.high[method])
                estimate = np.array([np.nan if v is None else v for v in days.estimate[method]])
                covered = (low <= truth) & (truth <= high)
                day = np.arange(1, len(low) + 1)
                for mask, color in ((covered, _COVERED), (~covered, _MISSED)):
                    axes.vlines(day[mask], low[mask], high[mask], color=color, linewidth=1.6)
                    axes.plot(day[mask], estimate[mask], "o", color=color, markersize=2.5)
                axes.axhline(truth, color="black", linewidth=1)
        if ax is None:
            figure.legend(handles=[
                Line2D([], [], color=_COVERED, marker="o", markersize=4, label="interval holds the truth"),
                Line2D([], [], color=_MISSED, marker="o", markersize=4, label="interval misses it"),
                Line2D([], [], color="black", label="true auto-accepted error rate")],
                loc="outside lower center", ncols=2, fontsize=8, frameon=False)
            figure.suptitle(f"{setting_share(self.confidence_level)} intervals of the first replayed days against "
                            "the truth", fontsize=11)
        self.axes_: np.ndarray = grid
        return self


class MonitoringWidthsDisplay(SummaryDisplay):
    """The mean interval width against a uniform audit rate (log scale), one panel per method, one line per
    policy.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    monitored : sequence of (int, MonitoredPolicy)
        The policies with figures and their places in the scenario (:func:`monitored_policies`); those
        without widths are left out of the panels.

    Attributes
    ----------
    figure_ : Figure
    axes_ : list of Axes
        One panel per method.
    lines_ : list of Line2D
        The policies' lines on the first panel, labelled.
    """

    def __init__(self, *, monitored: Sequence[tuple[int, MonitoredPolicy]]) -> None:
        self.monitored = tuple(monitored)
        self.methods = _methods(self.monitored)

    @classmethod
    def from_summary(cls, summary: StudySummary) -> MonitoringWidthsDisplay:
        """The monitored policies of a study with a ``monitoring`` section that swept audit rates.

        Raises
        ------
        ValueError
            When no monitored policy has widths.
        """
        monitored = monitored_policies(summary)
        if not any(entry.widths is not None for _, entry in monitored):
            raise ValueError("no monitored policy has interval widths against the audit rate")
        return cls(monitored=monitored)

    def plot(self, ax: Sequence[Axes] | None = None) -> MonitoringWidthsDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : sequence of Axes, optional
            One panel per method. Without them a figure is made, with the legend under the panels.

        Returns
        -------
        MonitoringWidthsDisplay
            ``self``, with ``figure_``, ``axes_`` and ``lines_`` set.
        """
        panels = list(self.panels(ax, 1, len(self.methods), size=(7.5, 3.8), sharey=True)[0])
        figure = self.figure_
        rates = sorted({rate for _, entry in self.monitored if entry.widths is not None
                        for rate in entry.widths.audit_rates})
        self.lines_: list[Line2D] = []
        for axes, method in zip(panels, self.methods):
            label(axes, method, "audit rate of auto-accepted items", "mean interval width" if axes is panels[0] else "")
            axes.title.set_fontsize(10)
            axes.set_xscale("log")
            axes.set_xticks(rates, [setting_share(rate) for rate in rates], minor=False)
            axes.set_xticks([], minor=True)
            for place, entry in self.monitored:
                widths = entry.widths
                if widths is None or method not in widths.mean_width:
                    continue
                line, = axes.plot(widths.audit_rates, widths.mean_width[method], markersize=4, label=entry.policy,
                                  **style(place))
                if axes is panels[0]:
                    self.lines_.append(line)
        if ax is None:
            figure.legend(handles=self.lines_, loc="outside lower center", ncols=min(len(self.lines_), 2), fontsize=8,
                          frameon=False)
        self.axes_: list[Axes] = panels
        return self

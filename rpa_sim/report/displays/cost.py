"""Total cost against threshold, one line per policy: the report's cost figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.report.decided import decided_point
from rpa_sim.report.displays.base import CurvesDisplay, policies_curves
from rpa_sim.report.displays.lines import MarkedPoint, PolicyLine
from rpa_sim.report.displays.zoom import Window, outline, padded, window_of, zoom_to
from rpa_sim.report.style import amounts, figure_legend, label, star
from rpa_sim.report.wording import cost_basis, cost_optimum, currency_of
from rpa_sim.study.recommend import decision_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

    from rpa_sim.route.sweep import Curve
    from rpa_sim.study.result import StudySummary

__all__ = ["CostDisplay"]


class CostDisplay(CurvesDisplay):
    """Total cost (reviews plus the errors left) against the threshold, one line per policy, each policy's
    cheapest τ marked.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    lines : sequence of PolicyLine
        Per policy, in the scenario's order (which gives its style): threshold (x) against total cost (y), and
        its cheapest threshold as its one point.
    star : tuple of float, optional
        The decided point (threshold, cost), starred when the decision is the cheapest point.
    ylabel : str
        The cost axis' label, with its currency and basis.
    window : tuple of float, optional
        The zoom panel's range ``(x0, x1, y0, y1)``.

    Attributes
    ----------
    figure_ : Figure
    ax_ : Axes
        The full panel.
    zoom_ax_ : Axes or None
        The zoom panel, when one was drawn.
    lines_ : list of Line2D
        The policies' lines on the full panel, labelled.
    """

    def __init__(self, *, lines: Sequence[PolicyLine], star: tuple[float, float] | None = None, ylabel: str,
                 window: Window | None = None) -> None:
        self.lines = tuple(lines)
        self.star = star
        self.ylabel = ylabel
        self.window = window

    @classmethod
    def from_summary(cls, summary: StudySummary, curves: Sequence[Curve]) -> CostDisplay:
        """The cost curves of a study with costs, the decided point starred when it was chosen on cost, and the
        zoom: the thresholds around the cost optima within 25% of the cheapest, and costs up to half again the
        cheapest (or the dearest optimum shown), so that a steep end does not flatten the rest.

        The parameters are those of :meth:`CurvesDisplay.from_summary
        <rpa_sim.report.displays.base.CurvesDisplay.from_summary>`.

        Returns
        -------
        CostDisplay

        Raises
        ------
        ValueError
            When the scenario sets no costs.
        """
        if summary.costs is None:
            raise ValueError("the scenario sets no costs, so there is no cost to draw")
        decision = decision_of(summary)
        point = decided_point(decision)
        star = (None if decision.basis != "cost" or not decision.feasible or point is None
                or decision.threshold is None or point.cost is None else (decision.threshold, point.cost))
        lines = []
        for policy, curve in policies_curves(summary, curves):
            finite = np.isfinite(curve.threshold)  # an open-ended grid point has no place on the axis
            best = cost_optimum(policy)
            points = () if best.cost is None else (MarkedPoint(best.threshold, best.threshold, best.cost),)
            lines.append(PolicyLine(curve.policy, curve.threshold[finite], curve.columns["cost"][finite], points))
        unit, size, _ = cost_basis(summary)
        currency = currency_of(summary)
        basis = f"{size:,} {unit}"
        ylabel = f"total cost ({basis})" if currency is None else f"total cost ({currency}, {basis})"
        return cls(lines=lines, star=star, ylabel=ylabel, window=_window(summary, curves))

    def plot(self, ax: Axes | None = None, *, zoom_ax: Axes | None = None) -> CostDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : Axes, optional
            The panel for the whole range of thresholds. Without it a figure is made: the full panel, the zoom
            panel below it when the display has a window, and one legend under both.
        zoom_ax : Axes, optional
            With ``ax``: a panel for the zoom window, whose range ``ax`` then outlines. Without it the cheapest
            points are labelled with their τ on ``ax``.

        Returns
        -------
        CostDisplay
            ``self``, with ``figure_``, ``ax_``, ``zoom_ax_`` and ``lines_`` set.

        Raises
        ------
        ValueError
            When ``zoom_ax`` is given but the display has no window, or without ``ax``.
        """
        panels = self.zoom_panels(ax, zoom_ax, zoomable=self.window is not None, why_not="no cheapest point")
        window = self.window if len(panels) == 2 else None
        self.lines_: list[Line2D] = []
        for panel_index, axes in enumerate(panels):
            self._draw(axes, window, zoomed=panel_index == 1)
        if ax is None:
            figure_legend(self.figure_, self.lines_, points="cheapest τ (policy's marker)", targets=False,
                          baselines=False, starred=None if self.star is None else "the decision")
        return self

    def _draw(self, axes: Axes, window: Window | None, *, zoomed: bool) -> None:
        for index, line in enumerate(self.lines):
            # the points are labelled on one panel: the zoom when there is one
            between: tuple[float, float] | None = None
            if window is None:
                between = (float(np.nanmin(line.x)), float(np.nanmax(line.x)))
            elif zoomed:
                between = (window[0], window[1])
            drawn = line.draw(axes, index, labels_between=between)
            if not zoomed:
                self.lines_.append(drawn)
        star(axes, self.star)
        amounts(axes.yaxis)
        if zoomed and window is not None:
            x0, x1 = window[:2]
            zoom_to(axes, window)
            label(axes, f"Zoom: τ {x0:.2f} to {x1:.2f}", "threshold τ", self.ylabel)
        else:
            label(axes, "Total cost against threshold", "threshold τ", self.ylabel)
            if window is not None:
                outline(axes, window)


def _window(summary: StudySummary, curves: Sequence[Curve]) -> Window | None:
    """The range of the cost zoom (see :meth:`CostDisplay.from_summary`); None without a finite cheapest point."""
    optima = [(best.threshold, best.cost) for best in map(cost_optimum, summary.policies)
              if best.cost is not None and np.isfinite(best.threshold)]
    thresholds = np.concatenate([c.threshold[np.isfinite(c.threshold)] for c in curves])
    if not optima or len(thresholds) == 0:
        return None
    cheapest = min(cost for _, cost in optima)
    near = [threshold for threshold, cost in optima if cost <= cheapest + 0.25 * abs(cheapest)]
    lowest, highest = float(thresholds.min()), float(thresholds.max())
    start, end = padded(min(near), max(near), lowest=lowest, highest=highest, minimum=0.1 * (highest - lowest))
    shown = [cost for threshold, cost in optima if start <= threshold <= end]
    x0, x1, y0, y1 = window_of([(c.threshold, c.columns["cost"]) for c in curves], start, end, shown)
    ceiling = max(cheapest + 0.5 * abs(cheapest), *shown)
    return x0, x1, y0, min(y1, ceiling + 0.05 * (ceiling - y0))

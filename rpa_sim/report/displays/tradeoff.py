"""Quality after review against automation, one line per policy: the report's trade-off figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.evaluate.outcomes import table_type
from rpa_sim.report.decided import chosen_point
from rpa_sim.report.displays.base import CurvesDisplay, policies_curves
from rpa_sim.report.displays.lines import MarkedPoint, PolicyLine
from rpa_sim.report.displays.zoom import Window, outline, padded, window_of, zoom_to
from rpa_sim.report.style import figure_legend, label, star
from rpa_sim.study.recommend import decision_of, spans_all_auto_rates

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

    from rpa_sim.route.sweep import Curve
    from rpa_sim.study.result import StudySummary

__all__ = ["TradeoffDisplay"]


class TradeoffDisplay(CurvesDisplay):
    """Quality after review against auto-rate, one line per policy as its threshold moves.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`: the figure of
    the report's "Trade-off curves", or one panel of a figure of your own.

    Parameters
    ----------
    lines : sequence of PolicyLine
        Per policy, in the scenario's order (which gives its style): auto-rate (x) against quality (y), and its
        operating points (the most automation that still meets each target).
    targets : sequence of float
        The quality targets, drawn dashed.
    review_all, review_none : float or None
        The quality of reviewing everything (drawn at auto-rate 0) and nothing (at 1); None: not drawn.
    star : tuple of float, optional
        The decided point (auto-rate, quality), starred.
    metric_label : str
        The quality's name, e.g. ``KIEval_Aligned^τ``.
    window : tuple of float, optional
        The zoom panel's range ``(x0, x1, y0, y1)``.

    Attributes
    ----------
    figure_ : Figure
        The figure drawn on.
    ax_ : Axes
        The full panel.
    zoom_ax_ : Axes or None
        The zoom panel, when one was drawn.
    lines_ : list of Line2D
        The policies' lines on the full panel, labelled.
    """

    def __init__(self, *, lines: Sequence[PolicyLine], targets: Sequence[float], review_all: float | None,
                 review_none: float | None, star: tuple[float, float] | None = None, metric_label: str,
                 window: Window | None = None) -> None:
        self.lines = tuple(lines)
        self.targets = tuple(targets)
        self.review_all, self.review_none = review_all, review_none
        self.star = star
        self.metric_label = metric_label
        self.window = window

    @classmethod
    def from_summary(cls, summary: StudySummary, curves: Sequence[Curve]) -> TradeoffDisplay:
        """The trade-off of a study: every policy's curve and operating points, the baselines, the targets, the
        decided point starred, and the zoom: around each target's best operating point (the most automation
        reaching it, over all policies), else around the decided point, else none.

        The parameters are those of :meth:`CurvesDisplay.from_summary
        <rpa_sim.report.displays.base.CurvesDisplay.from_summary>`.

        Returns
        -------
        TradeoffDisplay
        """
        star = chosen_point(decision_of(summary))
        lines = []
        for policy, curve in policies_curves(summary, curves):
            order = np.argsort(curve.auto_rate, kind="stable")
            points = tuple(MarkedPoint(p.threshold, p.auto_rate, p.metric) for p in policy.operating_points.values()
                           if p is not None and p.auto_rate is not None and p.metric is not None)
            partial = "" if spans_all_auto_rates(policy.auto_rate_range) else " (partial)"
            lines.append(PolicyLine(curve.policy + partial, curve.auto_rate[order], curve.metric[order], points))
        xs = []
        for target in summary.targets:
            rates = [point.auto_rate for point in (p.operating_points[f"{target:g}"] for p in summary.policies)
                     if point is not None and point.auto_rate is not None]
            xs += [max(rates)] if rates else []
        if not xs and star is not None:
            xs = [star[0]]
        window = None
        if xs:
            start, end = padded(min(xs), max(xs), lowest=0.0, highest=1.0, minimum=0.1)
            marked = [p.y for line in lines for p in line.points if start <= p.x <= end]
            window = window_of([(c.auto_rate, c.metric) for c in curves], start, end, marked)
        baselines = summary.baselines
        return cls(lines=lines, targets=summary.targets, review_all=baselines.review_all.metric,
                   review_none=baselines.review_none.metric, star=star,
                   metric_label=table_type(summary.task).metric_label,
                   window=window)

    def plot(self, ax: Axes | None = None, *, zoom_ax: Axes | None = None) -> TradeoffDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : Axes, optional
            The panel for the whole range of auto-rates. Without it a figure is made: the full panel, the zoom
            panel below it when the display has a window, and one legend under both (the policies, then what
            the marks mean).
        zoom_ax : Axes, optional
            With ``ax``: a panel for the zoom window, whose range ``ax`` then outlines. Without it the
            operating points are labelled with their τ on ``ax``.

        Returns
        -------
        TradeoffDisplay
            ``self``, with ``figure_``, ``ax_``, ``zoom_ax_`` and ``lines_`` set.

        Raises
        ------
        ValueError
            When ``zoom_ax`` is given but the display has no window, or without ``ax``.
        """
        panels = self.zoom_panels(ax, zoom_ax, zoomable=self.window is not None,
                                  why_not="no target reached and no decided point")
        window = self.window if len(panels) == 2 else None
        self.lines_: list[Line2D] = []
        for panel_index, axes in enumerate(panels):
            self._draw(axes, window, zoomed=panel_index == 1)
        if ax is None:
            figure_legend(self.figure_, self.lines_, points="operating point (policy's marker)",
                          targets=bool(self.targets), baselines=True,
                          starred=None if self.star is None else "the decision")
        return self

    def _draw(self, axes: Axes, window: Window | None, *, zoomed: bool) -> None:
        """One panel: the full range, with the zoom's range outlined when there is a zoom panel, or the zoom."""
        metric = self.metric_label
        # the points are labelled on one panel: the zoom when there is one
        between: tuple[float, float] | None = None
        if window is None:
            between = (0.0, 1.0)
        elif zoomed:
            between = (window[0], window[1])
        for index, line in enumerate(self.lines):
            drawn = line.draw(axes, index, labels_between=between)
            if not zoomed:
                self.lines_.append(drawn)
        for target in self.targets:
            axes.axhline(target, color="grey", linestyle="--", linewidth=1)
            # a target outside the panel's range (the zoom's) is not labelled: a label drawn beyond the panel
            # would take the figure's room from the panels
            axes.annotate(f"target {target:g}", (1.0, target), xycoords=("axes fraction", "data"), xytext=(-3, 2),
                          textcoords="offset points", fontsize=8, color="dimgrey", ha="right", annotation_clip=True)
        for value, at, marker, text in ((self.review_all, 0.0, "s", "review everything"),
                                        (self.review_none, 1.0, "^", "review nothing")):
            if value is not None:
                axes.scatter([at], [value], marker=marker, s=70, color="black", zorder=4)
                axes.annotate(text, (at, value), xytext=(6 if at == 0.0 else -6, -12), textcoords="offset points",
                              fontsize=8, ha="left" if at == 0.0 else "right")
        star(axes, self.star)
        if zoomed and window is not None:
            x0, x1 = window[:2]
            zoom_to(axes, window)
            label(axes, f"Zoom: auto-rate {x0:.2f} to {x1:.2f}", "auto-rate (share not reviewed)",
                  f"{metric} after review")
        else:
            axes.set_xlim(-0.02, 1.02)
            label(axes, "Trade-off: automation against quality", "auto-rate (share not reviewed)",
                  f"{metric} after review")
            if window is not None:
                outline(axes, window)

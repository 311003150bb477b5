"""The decision's one figure: every policy's trade-off with the decided point starred, drawn for a phone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.lines import Line2D

from rpa_sim.evaluate.outcomes import table_type
from rpa_sim.report.decided import chosen_point
from rpa_sim.report.displays.base import CurvesDisplay, policies_curves
from rpa_sim.report.displays.lines import PolicyLine
from rpa_sim.report.style import PALETTE, star, style
from rpa_sim.study.recommend import decision_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from rpa_sim.route.sweep import Curve
    from rpa_sim.study.result import StudySummary

__all__ = ["FIGURE_INCHES", "DecisionDisplay"]

#: The decision figure's width and height (inches). Its text is 10 pt: in the decision's box at 390 CSS px
#: (about 348 px) its 360 pt scale to 0.97 px a point, so no text renders below 9.6 px.
FIGURE_INCHES = (5.0, 3.9)
_FONT_POINTS = 10


class DecisionDisplay(CurvesDisplay):
    """Quality after review against auto-rate per policy, the targets dashed and the decided point starred and
    labelled with its τ: the figure that opens the report.

    Build it with :meth:`from_summary` (or :meth:`from_result`), then draw it with :meth:`plot`.

    Parameters
    ----------
    lines : sequence of PolicyLine
        Per policy, in the scenario's order (which gives its style): auto-rate (x) against quality (y).
    targets : sequence of float
        The quality targets.
    star : tuple of float, optional
        The decided point (auto-rate, quality).
    threshold : float, optional
        The decided τ, the star's label.
    metric_label : str
        The quality's name, e.g. ``KIEval_Aligned^τ``.

    Attributes
    ----------
    figure_ : Figure
    ax_ : Axes
    lines_ : list of Line2D
        The policies' lines, labelled.
    """

    def __init__(self, *, lines: Sequence[PolicyLine], targets: Sequence[float],
                 star: tuple[float, float] | None = None, threshold: float | None = None, metric_label: str) -> None:
        self.lines = tuple(lines)
        self.targets = tuple(targets)
        self.star, self.threshold = star, threshold
        self.metric_label = metric_label

    @classmethod
    def from_summary(cls, summary: StudySummary, curves: Sequence[Curve]) -> DecisionDisplay:
        """Every policy's trade-off of a study, and its decision's point (the recommendation's in a summary
        written before decisions: :func:`rpa_sim.study.recommend.decision_of`).

        The parameters are those of :meth:`CurvesDisplay.from_summary
        <rpa_sim.report.displays.base.CurvesDisplay.from_summary>`.

        Returns
        -------
        DecisionDisplay
        """
        decision = decision_of(summary)
        lines = []
        for _, curve in policies_curves(summary, curves):
            order = np.argsort(curve.auto_rate, kind="stable")
            lines.append(PolicyLine(curve.policy, curve.auto_rate[order], curve.metric[order]))
        return cls(lines=lines, targets=summary.targets, star=chosen_point(decision), threshold=decision.threshold,
                   metric_label=table_type(summary.task).metric_label)

    def plot(self, ax: Axes | None = None) -> DecisionDisplay:
        """Draw the display.

        Parameters
        ----------
        ax : Axes, optional
            Where to draw. Without it a figure of :data:`FIGURE_INCHES` is made, with the legend under the
            panel: the policies, the target, the decision.

        Returns
        -------
        DecisionDisplay
            ``self``, with ``figure_``, ``ax_`` and ``lines_`` set.
        """
        axes = self.ax_ = self.panels(ax, 1, 1, size=FIGURE_INCHES)[0, 0]
        self.lines_: list[Line2D] = []
        for index, line in enumerate(self.lines):
            drawn, = axes.plot(line.x, line.y, label=line.label, markevery=0.2, markersize=5, linewidth=1.6,
                               **style(index))
            self.lines_.append(drawn)
        for target in self.targets:
            axes.axhline(target, color="grey", linestyle="--", linewidth=1)
        star(axes, self.star, size=300)
        if self.star is not None:
            left = self.star[0] > 0.5  # the label points towards the middle, so that it stays inside the panel
            axes.annotate(f"τ {self.threshold:.4f}", self.star, xytext=(-9 if left else 9, -16),
                          textcoords="offset points", ha="right" if left else "left", fontsize=_FONT_POINTS)
        axes.set_xlim(-0.02, 1.02)
        axes.set_xlabel("auto-rate (share not reviewed)", fontsize=_FONT_POINTS)
        axes.set_ylabel(f"{self.metric_label} after review", fontsize=_FONT_POINTS)
        axes.tick_params(labelsize=_FONT_POINTS)
        axes.grid(True, alpha=0.3)
        if ax is None:
            keys = [Line2D([], [], color="grey", linestyle="--", label="target")] if self.targets else []
            if self.star is not None:
                keys.append(Line2D([], [], color=PALETTE[-1], marker="*", markersize=13, markeredgecolor="black",
                                   linestyle="none", label="decision"))
            self.figure_.legend(handles=[*self.lines_, *keys], loc="outside lower center", ncols=2,
                                fontsize=_FONT_POINTS, frameon=False)
        return self

"""What a display draws for one policy: its line over the swept thresholds, and the points marked on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rpa_sim.report.style import label_point, style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D

__all__ = ["MarkedPoint", "PolicyLine"]


@dataclass(frozen=True)
class MarkedPoint:
    """A point marked on a policy's line, labelled with its threshold.

    Attributes
    ----------
    threshold : float
        The τ the point is at.
    x, y : float
        Where it is drawn.
    """

    threshold: float
    x: float
    y: float


@dataclass(frozen=True)
class PolicyLine:
    """One policy on a display, drawn in the policy's style (its place in the scenario).

    Attributes
    ----------
    label : str
        The legend's label.
    x, y : ndarray
        The line's points, in drawing order.
    points : tuple of MarkedPoint
        The points marked with the policy's marker (operating points, the cheapest τ); may be empty.
    """

    label: str
    x: np.ndarray
    y: np.ndarray
    points: tuple[MarkedPoint, ...] = ()

    def draw(self, axes: Axes, index: int, *, labels_between: tuple[float, float] | None) -> Line2D:
        """Draw the line and its marked points in the style of the scenario's ``index``-th policy, and label each
        point with its τ (towards the middle of a panel whose x runs ``labels_between``) unless that is None.

        Returns
        -------
        Line2D
            The line drawn, for a legend.
        """
        line_style = style(index)
        drawn, = axes.plot(self.x, self.y, label=self.label, markevery=0.12, markersize=5, linewidth=1.6,
                           **line_style)
        axes.scatter([p.x for p in self.points], [p.y for p in self.points], color=line_style["color"],
                     marker=line_style["marker"], s=60, edgecolor="black", zorder=3)
        if labels_between is not None:
            for point in self.points:
                label_point(axes, f"τ {point.threshold:.4f}", point.x, point.y, index=index, between=labels_between)
        return drawn

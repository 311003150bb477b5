"""The zoom panel of the trade-off and cost displays: the range it shows, and how the full panel outlines it.

A zoom window is ``(x0, x1, y0, y1)``: x over the range of interest (widened by
:func:`padded`), y over the curve points inside it (:func:`window_of`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

__all__ = ["Window", "padded", "window_of", "zoom_to", "outline"]

#: A zoom panel's range: ``(x0, x1, y0, y1)``.
Window = tuple[float, float, float, float]


def padded(low: float, high: float, *, lowest: float, highest: float, minimum: float) -> tuple[float, float]:
    """``[low, high]`` widened by a tenth of its span on each side, to at least ``minimum``, kept within
    ``[lowest, highest]`` by shifting before cutting.

    Examples
    --------
    >>> padded(0.985, 1.0, lowest=0.0, highest=1.0, minimum=0.1)
    (0.9, 1.0)
    """
    span = high - low
    pad = max(0.1 * span, (minimum - span) / 2.0)
    start, end = low - pad, high + pad
    if start < lowest:
        start, end = lowest, end + (lowest - start)
    if end > highest:
        start, end = start - (end - highest), highest
    return max(start, lowest), end


def window_of(curves: list[tuple[np.ndarray, np.ndarray]], start: float, end: float,
              extra: Iterable[float] = ()) -> Window:
    """The zoom rectangle: x from ``start`` to ``end``, y over the curves' points there (and ``extra``), with a
    twentieth of that span (at least a thousandth of its size) above and below.

    Examples
    --------
    >>> window_of([(np.array([0.0, 0.5, 1.0]), np.array([0.2, 0.6, 0.9]))], 0.4, 1.0)
    (0.4, 1.0, 0.585, 0.915)
    """
    inside = [y[(x >= start) & (x <= end) & ~np.isnan(y)] for x, y in curves]
    values = np.concatenate([*inside, np.asarray(list(extra), dtype=float)])
    values = values[~np.isnan(values)]
    bottom, top = float(values.min()), float(values.max())
    pad = max(0.05 * (top - bottom), 1e-3 * max(abs(top), 1.0))
    return start, end, bottom - pad, top + pad


def zoom_to(axes: Axes, window: Window) -> None:
    """Show the window, with a sliver of margin so that markers on its edges are whole."""
    x0, x1, y0, y1 = window
    margin = 0.02 * (x1 - x0)
    axes.set_xlim(x0 - margin, x1 + margin)
    axes.set_ylim(y0, y1)


def outline(axes: Axes, window: Window) -> None:
    """The window's range as a dotted grey box on the full panel."""
    x0, x1, y0, y1 = window
    axes.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor="grey", linestyle=":", linewidth=1.2))

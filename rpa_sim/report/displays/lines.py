"""What a display draws for one policy: its line over the swept thresholds, and the points marked on it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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

"""Whether the end of a swept grid may hide a better point beyond it (the ``edge_of_range`` warning)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rpa_sim.route.sweep import Sweeper

__all__ = ["at_edge"]


def at_edge(sweeper: Sweeper, threshold: float, thresholds: np.ndarray) -> bool:
    """Whether ``threshold``, an end of the grid ``thresholds``, may hide a better point beyond it.

    A threshold beyond routes differently from the end and from the policy's own extreme (everything it
    can route, or nothing) only with two distinct item entries beyond the end (below the lowest τ; at or
    above the highest): with one, a τ beyond gives the end's routing or the extreme's. At τ = 1 with
    confidences of at most 1, say, widening the grid changes nothing.
    """
    compiled = sweeper.compiled
    entry = compiled.entry[~compiled.rejected & np.isfinite(compiled.entry)]
    low, high = float(np.min(thresholds)), float(np.max(thresholds))
    beyond = entry[entry < low] if threshold <= low else entry[entry >= high] if threshold >= high else entry[:0]
    return len(np.unique(beyond)) >= 2

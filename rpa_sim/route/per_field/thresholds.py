"""The solver's answer for one budget: a threshold per field, and what it buys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["PerFieldThresholds"]


@dataclass(frozen=True)
class PerFieldThresholds:
    """One threshold per field and what it buys.

    Attributes
    ----------
    thresholds : dict
        Field key -> threshold: items of that field with confidence ``>=`` it are
        auto-accepted, the rest reviewed. ``inf`` reviews the whole field. Every
        value is one of the field's :attr:`FieldCurve.thresholds`.
    accepted : int
        Auto-accepted items.
    cost : float
        Total cost of all items under these thresholds.
    budget : float
        The budget asked for.
    feasible : bool
        Whether any choice of thresholds costs at most ``budget`` (plus the
        tolerance). When not, the thresholds are the cheapest choice.
    upper_bound : int or None
        An upper bound on the largest achievable ``accepted``: the Lagrangian
        (LP-relaxation) bound, tightened by the refinement; equal to
        ``accepted`` when the answer is proved optimal (:attr:`optimal`).
        None when infeasible.
    items : int
        All items, accepted or not.
    """

    thresholds: dict[Any, float]  # keyed by the caller's keys, whatever they are
    accepted: int
    cost: float
    budget: float
    feasible: bool
    upper_bound: int | None = None
    items: int = 0

    @property
    def auto_rate(self) -> float | None:
        """``accepted / items``; None when there are no items."""
        return self.accepted / self.items if self.items else None

    @property
    def optimal(self) -> bool:
        """Whether ``accepted`` is proved the largest achievable within the budget."""
        return self.feasible and self.accepted == self.upper_bound

    def reviewed(self, keys: ArrayLike, confidence: ArrayLike, *, default: float = np.inf) -> np.ndarray:
        """Which items these thresholds route to review (``confidence < threshold``).

        ``default`` is the threshold of a key these thresholds do not know
        (``inf``: review it).

        Examples
        --------
        >>> PerFieldThresholds({"a": 0.5}, 1, 0.0, 0.0, True).reviewed(["a", "a", "b"], [0.5, 0.4, 0.9]).tolist()
        [False, True, True]
        """
        confidence = np.asarray(confidence, dtype=np.float64)
        keys = np.asarray(keys)
        if keys.shape != confidence.shape or keys.ndim != 1:
            raise ValueError("keys and confidence must be one-dimensional and of equal length")
        if len(keys) == 0:
            return np.zeros(0, dtype=bool)
        names, code = np.unique(keys, return_inverse=True)
        limits = np.array([self.thresholds.get(name, default) for name in names.tolist()], dtype=np.float64)
        return confidence < limits[code]

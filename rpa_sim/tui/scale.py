"""Scales for the dashboard's sliders: where a value sits on the bar, and the steps the keys take.

τ matters most near 1, where a confidence threshold separates the predictions a
model is sure of, so :class:`ThresholdScale` gives [0.9, 1] half the bar and
steps ten times finer there; :class:`LinearScale` is an even bar with even steps
(α). No Textual here.

Examples
--------
>>> scale = ThresholdScale()
>>> scale.position(0.9), scale.position(0.95)
(0.5, 0.75)
>>> scale.step(0.5, 1), scale.step(0.895, 1), scale.step(0.9, -1), scale.step(0.9, 1, coarse=True)
(0.51, 0.9, 0.89, 0.905)
"""

from __future__ import annotations

import numpy as np

__all__ = ["FINE_FROM", "LinearScale", "ThresholdScale"]

#: where τ's steps become ten times finer
FINE_FROM = 0.9
_DECIMALS = 6


def _rounded(value: float) -> float:
    return round(float(value), _DECIMALS)


class LinearScale:
    """Values in ``[minimum, maximum]`` spread evenly along the bar, stepped by ``step`` (``5 * step`` coarse).

    Examples
    --------
    >>> alpha = LinearScale(step=0.05)
    >>> alpha.step(0.25, 1), alpha.step(0.0, -1), alpha.value_at(0.5)
    (0.3, 0.0, 0.5)
    """

    def __init__(self, *, minimum: float = 0.0, maximum: float = 1.0, step: float = 0.01) -> None:
        if not (minimum < maximum and step > 0):
            raise ValueError(f"a scale needs minimum < maximum and step > 0, got {minimum!r}, {maximum!r}, {step!r}")
        self.minimum, self.maximum, self.fine = minimum, maximum, step

    def clamp(self, value: float) -> float:
        return _rounded(min(self.maximum, max(self.minimum, value)))

    def position(self, value: float) -> float:
        """Where ``value`` sits on the bar, from 0 (left end) to 1 (right end)."""
        return (self.clamp(value) - self.minimum) / (self.maximum - self.minimum)

    def value_at(self, position: float) -> float:
        """The value at ``position`` on the bar, on the grid of fine steps."""
        raw = self.minimum + min(max(position, 0.0), 1.0) * (self.maximum - self.minimum)
        return self.clamp(round((raw - self.minimum) / self.fine) * self.fine + self.minimum)

    def step(self, value: float, direction: int, *, coarse: bool = False) -> float:
        """``value`` moved ``direction`` steps (fine, or five times larger when ``coarse``)."""
        return self.clamp(value + direction * self.fine * (5 if coarse else 1))

    @property
    def ticks(self) -> tuple[float, ...]:
        """Positions on the bar worth a tick (none on an even bar)."""
        return ()


class ThresholdScale(LinearScale):
    """τ in [0, 1]: steps of 0.01 (coarse 0.05) below 0.9 and 0.001 (coarse 0.005) from 0.9, where [0.9, 1]
    takes half the bar.

    A step goes to the next point of the grid of its size, so a threshold typed
    or jumped to off the grid (0.8609) steps back onto it (0.87, 0.86).
    """

    #: the bar's share below FINE_FROM: the other half is [FINE_FROM, 1]
    SPLIT = 0.5

    def __init__(self) -> None:
        super().__init__(step=0.01)
        below = np.arange(0, round(FINE_FROM / 0.01)) * 0.01
        above = FINE_FROM + np.arange(0, round((1 - FINE_FROM) / 0.001) + 1) * 0.001
        coarse_below = np.arange(0, round(FINE_FROM / 0.05)) * 0.05
        coarse_above = FINE_FROM + np.arange(0, round((1 - FINE_FROM) / 0.005) + 1) * 0.005
        self._ladders = {False: np.round(np.concatenate([below, above]), _DECIMALS),
                         True: np.round(np.concatenate([coarse_below, coarse_above]), _DECIMALS)}

    def position(self, value: float) -> float:
        return round(float(np.interp(self.clamp(value), [0.0, FINE_FROM, 1.0], [0.0, self.SPLIT, 1.0])), 12)

    def value_at(self, position: float) -> float:
        raw = float(np.interp(min(max(position, 0.0), 1.0), [0.0, self.SPLIT, 1.0], [0.0, FINE_FROM, 1.0]))
        ladder = self._ladders[False]
        return float(ladder[np.abs(ladder - raw).argmin()])

    def step(self, value: float, direction: int, *, coarse: bool = False) -> float:
        """The ``direction``-th grid point above (positive) or below (negative) ``value``, clamped to [0, 1].

        Examples
        --------
        >>> scale = ThresholdScale()
        >>> scale.step(0.8609, 1), scale.step(0.8609, -1), scale.step(1.0, 1), scale.step(0.999, 3)
        (0.87, 0.86, 1.0, 1.0)
        """
        ladder = self._ladders[coarse]
        value = self.clamp(value)
        if direction > 0:
            index = int(np.searchsorted(ladder, value, side="right")) + direction - 1
        else:
            index = int(np.searchsorted(ladder, value, side="left")) + direction
        return float(ladder[min(max(index, 0), len(ladder) - 1)])

    def step_size(self, value: float, *, coarse: bool = False) -> float:
        """The size of a step up from ``value`` (what the status line shows)."""
        fine = 0.001 if self.clamp(value) >= FINE_FROM else 0.01
        return fine * (5 if coarse else 1)

    @property
    def ticks(self) -> tuple[float, ...]:
        return (self.SPLIT,)

"""Axis ticks of counts and money, shared by the report's figures and the dashboard's plots: round steps (1, 2,
2.5 or 5 times a power of ten), labelled with thousands separators and no more decimals than the steps need
(``10,000`` and ``10,500``, never ``10848.1``).

Examples
--------
>>> ticks = round_ticks(3795.3, 10848.1)
>>> ticks
[4000.0, 6000.0, 8000.0, 10000.0]
>>> amount_labels(ticks)
['4,000', '6,000', '8,000', '10,000']
>>> amount_labels([0.0, 0.25, 0.5])
['0.00', '0.25', '0.50']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

__all__ = ["round_ticks", "decimals_of", "amount", "amount_labels"]

_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def round_ticks(low: float, high: float, *, most: int = 5) -> list[float]:
    """At most ``most`` (>= 2) ticks within ``[low, high]`` at the multiples of the smallest round step that
    leaves no more than that many; ``[low]`` when the range is empty."""
    if not high > low:
        return [low]
    rough = (high - low) / max(most - 1, 1)
    power = 10.0 ** math.floor(math.log10(rough))
    for factor in _STEPS:
        step = factor * power
        first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
        if last - first + 1 <= most:
            return [round(index * step, 12) + 0.0 for index in range(first, last + 1)]
    raise AssertionError("unreachable: a step of ten times the rough one leaves at most most ticks")


def decimals_of(ticks: Sequence[float]) -> int:
    """The fewest decimals (up to 6) at which the step between ``ticks`` prints exactly."""
    step = min((abs(b - a) for a, b in pairwise(ticks) if b != a), default=1.0)
    return next((d for d in range(7) if abs(round(step, d) - step) <= 1e-9 * max(1.0, abs(step))), 6)


def amount(value: float, decimals: int) -> str:
    """``value`` with thousands separators and ``decimals`` decimals; never ``-0``."""
    text = f"{value:,.{decimals}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text


def amount_labels(ticks: Sequence[float]) -> list[str]:
    """The labels of ``ticks``: :func:`amount` at :func:`decimals_of` them."""
    decimals = decimals_of(ticks)
    return [amount(tick, decimals) for tick in ticks]

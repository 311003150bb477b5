"""Checks of the numbers a queue is described by, raising ``ValueError`` that quote the bad value.

>>> positive("handle_seconds", 0)
Traceback (most recent call last):
...
ValueError: handle_seconds must be a finite number > 0, got 0
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["positive", "non_negative", "reviewer_count", "queue_inputs"]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def positive(name: str, value: float) -> float:
    """``value`` as a float when it is a finite number > 0."""
    if not (_is_number(value) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def non_negative(name: str, value: float) -> float:
    """``value`` as a float when it is a finite number >= 0."""
    if not (_is_number(value) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def reviewer_count(value: int) -> int:
    """``value`` when it is a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"reviewers must be a whole number >= 1, got {value!r}")
    return int(value)


def queue_inputs(arrivals_per_hour: float, handle_seconds: float,
                 answer_within_seconds: float) -> tuple[float, float, float]:
    """``(arrivals per second, handling seconds, target wait)``, checked; the offered load must be finite
    and > 0 too (two extreme numbers can multiply to 0 or infinity)."""
    rate = positive("arrivals_per_hour", arrivals_per_hour) / 3600.0
    handle = positive("handle_seconds", handle_seconds)
    load = rate * handle
    if not (math.isfinite(load) and load > 0):
        raise ValueError(f"the offered load (arrivals_per_hour x handle_seconds / 3600) must be a finite number > 0, "
                         f"got {load!r} from {arrivals_per_hour!r} and {handle_seconds!r}")
    return rate, handle, non_negative("answer_within_seconds", answer_within_seconds)

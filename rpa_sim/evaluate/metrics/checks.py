"""Checks of array arguments shared by the calibration and certification functions.

Each returns the validated array (or number) and raises ``ValueError``
quoting the first bad value and its position.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["confidences", "binary_labels", "positive_int"]


def confidences(values: ArrayLike, name: str) -> np.ndarray:
    """A one-dimensional float array of numbers in ``[0, 1]``.

    Examples
    --------
    >>> confidences([0.2, 1], "confidence").tolist()
    [0.2, 1.0]
    >>> confidences([0.2, 1.5], "confidence")
    Traceback (most recent call last):
    ...
    ValueError: confidence[1] must be in [0, 1], got 1.5
    """
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.number) or len(array) == 0):
        raise ValueError(f"{name} must hold numbers in [0, 1], got dtype {array.dtype}")
    array = array.astype(np.float64)
    bad = ~(np.isfinite(array) & (array >= 0) & (array <= 1))
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{at}] must be in [0, 1], got {float(array[at])!r}")
    return array


def binary_labels(values: ArrayLike, name: str, length: int) -> np.ndarray:
    """A 0/1 float array of ``length`` values from booleans or numbers that are all 0 or 1.

    Examples
    --------
    >>> binary_labels([True, False], "correct", 2).tolist()
    [1.0, 0.0]
    """
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if len(array) != length:
        raise ValueError(f"{name} must have one value per confidence ({length}), got {len(array)}")
    if array.dtype != bool:
        if len(array) and not np.issubdtype(array.dtype, np.number):
            raise ValueError(f"{name} must be booleans (or 0/1), got dtype {array.dtype}")
        bad = (array != 0) & (array != 1)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name}[{at}] must be a boolean (or 0/1), got {array[at].item()!r}")
    return array.astype(np.float64)


def positive_int(value: object, name: str) -> int:
    """``value`` as an int when it is a whole number of at least 1 (not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)

"""String normalisation and normalised Levenshtein similarity (METRICS.md §0).

All edit distances in rpa-sim go through :mod:`rapidfuzz`; this module holds
the one place where the DocVQA normalisation and the ``NL``/``NLS`` convention
are written down.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

__all__ = ["normalize", "nl", "nls", "nls_pairs", "parse_number"]


def normalize(text: str) -> str:
    """Lower-case, strip and fold inner whitespace (the DocVQA convention).

    Examples
    --------
    >>> normalize("  Coca   COLA \\n")
    'coca cola'
    """
    return " ".join(text.strip().lower().split())


def nl(a: str, b: str) -> float:
    """Normalised Levenshtein distance ``Lev(a, b) / max(|a|, |b|)``; 0 for two empty strings.

    The strings are compared as given: normalise them first where the metric asks for it.

    Examples
    --------
    >>> nl("kitten", "sitting")
    0.42857142857142855
    >>> nl("", "")
    0.0
    """
    return Levenshtein.normalized_distance(a, b)


def nls(a: str, b: str) -> float:
    """Normalised Levenshtein similarity ``1 - nl(a, b)``.

    Examples
    --------
    >>> nls("abcd", "abce")
    0.75
    """
    return 1.0 - Levenshtein.normalized_distance(a, b)


def nls_pairs(a: Sequence[str], b: Sequence[str], *, workers: int = 1) -> np.ndarray:
    """Element-wise NLS of two equally long string sequences, as a float64 array.

    Parameters
    ----------
    a, b : sequence of str
        Strings compared position by position (``a[i]`` with ``b[i]``).
    workers : int, default=1
        Threads rapidfuzz may use; ``-1`` uses every core.

    Examples
    --------
    >>> nls_pairs(["abc", "", "ab"], ["abd", "", "xy"]).round(4).tolist()
    [0.6667, 1.0, 0.0]
    """
    if len(a) != len(b):
        raise ValueError(f"nls_pairs needs sequences of equal length, got {len(a)} and {len(b)}")
    if len(a) == 0:
        return np.zeros(0, dtype=np.float64)
    distance = cpdist(a, b, scorer=Levenshtein.normalized_distance, dtype=np.float64, workers=workers)
    return 1.0 - distance


_IGNORED_IN_NUMBERS = str.maketrans("", "", ",$€£¥₹ \t\n")


def parse_number(text: str) -> float | None:
    """Read a number, ignoring thousands separators, currency signs and a trailing ``%``.

    Commas are always thousands separators and the dot is the decimal point
    (the convention of DocVQA's English documents). Returns ``None`` when the
    rest is not a plain finite number.

    Examples
    --------
    >>> parse_number("$1,700.50")
    1700.5
    >>> parse_number("12 %")
    12.0
    >>> parse_number("(8)") is None
    True
    """
    cleaned = text.translate(_IGNORED_IN_NUMBERS)
    if cleaned.endswith("%"):
        cleaned = cleaned[:-1]
    if not cleaned or not all(c.isdigit() or c in ".+-eE" for c in cleaned) or not any(c.isdigit() for c in cleaned):
        return None
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None

"""String normalisation and normalised Levenshtein similarity (METRICS.md §0).

All edit distances in rpa-sim go through :mod:`rapidfuzz`; this module holds
the one place where the ``NL``/``NLS`` convention is written down, beside the
DocVQA normalisation (:func:`normalize`, :func:`normalize_many`), which lives
in :mod:`rpa_sim.common.text` so that the records' generators use it too.

The edit distance of two strings costs time proportional to the product of
their lengths, which is minutes for two multi-megabyte values. :func:`nl` and
:func:`nls` are the exact definitions; the metrics use :func:`nls_bounded`,
:func:`nls_pairs` and :func:`nls_matrix`, which give the same values except
for pairs of very long strings: a pair whose table of ``len(a) * len(b)``
cells exceeds :data:`EDIT_BUDGET` is compared within a band of edits, and
scores 0 when its distance exceeds the band, unless one string is the other
with characters deleted (``docs/metrics/long-values.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist, cpdist

from rpa_sim.common.text import normalize, normalize_many

__all__ = [
    "EDIT_BUDGET",
    "normalize",
    "normalize_many",
    "nl",
    "nls",
    "nls_bounded",
    "nls_pairs",
    "nls_matrix",
    "parse_number",
]

EDIT_BUDGET = 4 * 10**10
"""Cells of the edit-distance table one pair may cost (about a second of rapidfuzz).

A pair with ``len(a) * len(b)`` above it is compared within a band of
``EDIT_BUDGET // (2 * max(len(a), len(b)))`` edits: exactly when its distance
is within the band or the shorter string is a subsequence of the longer, as
entirely different (NLS 0) otherwise.
"""
_FIRST_BAND = 64


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


def nls_bounded(a: str, b: str, *, threshold: float | None = None) -> float:
    """NLS of two strings within :data:`EDIT_BUDGET`; with ``threshold``, 0 when ``NL > threshold``.

    Equal to ``nls(a, b)`` (or to ANLS's ``1 - NL if NL <= threshold else 0``)
    for every pair whose table of ``len(a) * len(b)`` cells is within the
    budget, and for every pair decided by the length bound ``Lev(a, b) >=
    |len(a) - len(b)|``. A longer pair is exact when the shorter string is the
    longer one with characters deleted (``Lev`` is then the length
    difference) or when its distance is within a band of ``EDIT_BUDGET // (2
    * max(len(a), len(b)))`` edits; otherwise it scores 0.

    Parameters
    ----------
    a, b : str
        The strings, compared as given (normalise them first where the metric asks for it).
    threshold : float, optional
        The largest ``NL`` that still scores (kept at equality, as ANLS does).

    Returns
    -------
    float

    Examples
    --------
    >>> nls_bounded("kitten", "sitting"), nls_bounded("kitten", "sitting", threshold=0.4)
    (0.5714285714285714, 0.0)
    >>> nls_bounded("a" * 3_000_000, "b" * 1_000_000, threshold=0.5)  # NL >= 2/3 by the lengths alone
    0.0
    """
    longer, shorter = (len(a), len(b)) if len(a) >= len(b) else (len(b), len(a))
    # (longer - shorter) / longer is the float NL of a pair at the length bound, and NL is monotone in the distance
    if threshold is not None and longer and (longer - shorter) / longer > threshold:
        return 0.0
    if longer * shorter <= EDIT_BUDGET:
        distance = Levenshtein.normalized_distance(a, b, score_cutoff=threshold)
    else:
        band = EDIT_BUDGET // (2 * longer)
        if _is_subsequence(*((b, a) if len(a) >= len(b) else (a, b))):
            # a truncated or trimmed copy: deleting the extra characters is an optimal edit
            edits = longer - shorter
        else:
            # The hint makes rapidfuzz start with a narrow band and widen it only as
            # needed: a near copy then costs little, an unrelated pair stops early.
            edits = Levenshtein.distance(a, b, score_cutoff=band, score_hint=min(band, _FIRST_BAND))
            if edits > band:
                return 0.0
        distance = edits / longer  # as rapidfuzz normalises
    return 1.0 - distance if threshold is None or distance <= threshold else 0.0


def _is_subsequence(short: str, long: str) -> bool:
    """Whether ``short`` is ``long`` with some characters deleted (one scan of ``long``)."""
    rest = iter(long)
    return all(character in rest for character in short)


def _lengths(texts: Sequence[str] | np.ndarray) -> np.ndarray:
    return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))


def nls_pairs(a: Sequence[str] | np.ndarray, b: Sequence[str] | np.ndarray, *, threshold: float | None = None,
              workers: int = 1) -> np.ndarray:
    """Element-wise :func:`nls_bounded` of two equally long string sequences, as a float64 array.

    Parameters
    ----------
    a, b : sequence of str, or array of str
        Strings compared position by position (``a[i]`` with ``b[i]``).
    threshold : float, optional
        The largest ``NL`` that still scores; a pair past it scores 0.
    workers : int, default=1
        Threads rapidfuzz may use; ``-1`` uses every core.

    Examples
    --------
    >>> nls_pairs(["abc", "", "ab"], ["abd", "", "xy"]).round(4).tolist()
    [0.6667, 1.0, 0.0]
    >>> nls_pairs(["abc", "ab"], ["abd", "ac"], threshold=0.3).tolist()
    [0.0, 0.0]
    """
    if len(a) != len(b):
        raise ValueError(f"nls_pairs needs sequences of equal length, got {len(a)} and {len(b)}")
    if len(a) == 0:
        return np.zeros(0, dtype=np.float64)
    over = np.flatnonzero(_lengths(a) * _lengths(b) > EDIT_BUDGET)
    if len(over):
        within = np.setdiff1d(np.arange(len(a)), over)
        similarity = np.empty(len(a), dtype=np.float64)
        similarity[within] = nls_pairs([a[i] for i in within.tolist()], [b[i] for i in within.tolist()],
                                       threshold=threshold, workers=workers)
        similarity[over] = [nls_bounded(a[i], b[i], threshold=threshold) for i in over.tolist()]
        return similarity
    # The distance itself is thresholded (not 1 - similarity) so that boundary
    # cases such as NL == 0.3 decide as nls_bounded does.
    distance = cpdist(a, b, scorer=Levenshtein.normalized_distance, dtype=np.float64, workers=workers,
                      score_cutoff=threshold)
    if threshold is None:
        return 1.0 - distance
    return np.where(distance <= threshold, 1.0 - distance, 0.0)


def nls_matrix(a: Sequence[str], b: Sequence[str], *, threshold: float | None = None,
               workers: int = 1) -> np.ndarray:
    """:func:`nls_bounded` of every string of ``a`` with every string of ``b``, shape ``(len(a), len(b))``.

    Parameters
    ----------
    a, b : sequence of str
    threshold : float, optional
        The largest ``NL`` that still scores; a pair past it scores 0.
    workers : int, default=1
        Threads rapidfuzz may use; ``-1`` uses every core.

    Examples
    --------
    >>> nls_matrix(["abc", "xy"], ["abd", "xy", ""]).round(4).tolist()
    [[0.6667, 0.0, 0.0], [0.0, 1.0, 0.0]]
    >>> nls_matrix(["abc", "xy"], ["abd", "xy", ""], threshold=0.3).tolist()
    [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if np.any(np.multiply.outer(_lengths(a), _lengths(b)) > EDIT_BUDGET):
        return np.array([[nls_bounded(x, y, threshold=threshold) for y in b] for x in a],
                        dtype=np.float64).reshape(len(a), len(b))
    if threshold is None:
        return cdist(a, b, scorer=Levenshtein.normalized_similarity, dtype=np.float64, workers=workers)
    # thresholded on the distance, as nls_pairs does, so that NL == threshold is kept
    distance = cdist(a, b, scorer=Levenshtein.normalized_distance, dtype=np.float64, workers=workers,
                     score_cutoff=threshold)
    return np.where(distance <= threshold, 1.0 - distance, 0.0)


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

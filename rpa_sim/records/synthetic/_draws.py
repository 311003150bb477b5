"""Random streams for the generators.

Records are generated in blocks of :data:`BLOCK`; each block has its own
:class:`numpy.random.Generator`, seeded from
``SeedSequence(seed, spawn_key=(stream, block))``. Record ``i`` is therefore
the same whatever the number of records asked for (its whole block is always
generated), and the receipts and the pages made from one seed do not share a
stream. Blocks rather than single records because creating a generator and
calling numpy's Beta sampler cost some 60 microseconds each: per block they
are paid once. Scalar draws from numpy cost about a microsecond each, so
:class:`Draws` takes uniforms from the generator in bulk and hands them out
one at a time.

A generated record's id names its seed and its index (:func:`record_id`), so
files generated with different seeds never share an id and can be the shards
of one data set.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from statistics import NormalDist
from typing import TypeVar

import numpy as np

__all__ = ["BLOCK", "Draws", "block_rng", "check_n_seed", "cumulative", "record_id"]

T = TypeVar("T")

BLOCK = 64
"""Records (receipts) or pages (questions) per random stream."""
RECEIPTS_STREAM = 0
DOCVQA_STREAM = 1
SIGNALS_STREAM = 2
_POOL = 1024
_STANDARD_NORMAL = NormalDist()


def block_rng(seed: int, stream: int, block: int) -> np.random.Generator:
    """The generator of block ``block`` of ``stream`` for ``seed``.

    >>> a = block_rng(7, 0, 3).random()
    >>> a == block_rng(7, 0, 3).random(), a == block_rng(7, 0, 4).random()
    (True, False)
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream, block)))


def check_n_seed(n: int, seed: int) -> None:
    """Refuse a negative or non-integer record count or seed, quoting it."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def record_id(kind: str, seed: int, index: int) -> str:
    """The id of the ``index``-th record (from 0) generated with ``seed``: ``<kind>-s<seed>-<index>``.

    The index has at least six digits. Ids are unique within a seed, and two
    seeds never give the same id, so generated files of different seeds can be
    the shards of one data set.

    >>> record_id("receipt", 7, 42), record_id("question", 12, 1_234_567)
    ('receipt-s7-000042', 'question-s12-1234567')
    """
    return f"{kind}-s{seed}-{index:06d}"


def cumulative(weights: Sequence[float]) -> list[float]:
    """Running totals of ``weights``, for :meth:`Draws.weighted`.

    >>> cumulative([1, 2, 1])
    [1, 3, 4]
    """
    return list(accumulate(weights))


class Draws:
    """Uniform numbers from one generator, drawn in blocks.

    Parameters
    ----------
    rng : numpy.random.Generator
        The record's generator; vectorised draws (e.g. confidences) may use it
        directly in between, which keeps the sequence deterministic.

    Examples
    --------
    >>> draws = Draws(block_rng(1, 0, 0))
    >>> 0 <= draws.random() < 1, draws.below(3) in (0, 1, 2), draws.pick("ab") in "ab"
    (True, True, True)
    """

    __slots__ = ("rng", "_pool", "_at")

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._pool: list[float] = []
        self._at = 0

    def random(self) -> float:
        """One uniform number in ``[0, 1)``."""
        if self._at == len(self._pool):
            self._pool = self.rng.random(_POOL).tolist()
            self._at = 0
        value = self._pool[self._at]
        self._at += 1
        return value

    def uniforms(self, k: int) -> list[float]:
        """``k`` uniform numbers in ``[0, 1)`` at once: the next ``k`` of the stream :meth:`random` reads."""
        if self._at + k > len(self._pool):
            self._pool = self._pool[self._at:] + self.rng.random(max(_POOL, k)).tolist()
            self._at = 0
        values = self._pool[self._at:self._at + k]
        self._at += k
        return values

    def chance(self, probability: float) -> bool:
        """True with the given probability."""
        return self.random() < probability

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``; ``n`` must be positive."""
        return min(int(self.random() * n), n - 1)

    def between(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high]``."""
        return low + self.below(high - low + 1)

    def pick(self, items: Sequence[T]) -> T:
        """A uniformly chosen item of a non-empty sequence."""
        return items[self.below(len(items))]

    def weighted(self, totals: Sequence[float]) -> int:
        """An index drawn with probability proportional to its weight (``totals`` from :func:`cumulative`)."""
        return min(bisect_right(totals, self.random() * totals[-1]), len(totals) - 1)

    def normal(self) -> float:
        """A standard normal number (inverse CDF of a uniform)."""
        # random() can return exactly 0, where the inverse CDF is undefined.
        return _STANDARD_NORMAL.inv_cdf(self.random() or 0.5 / 2**53)

"""Text folding: the DocVQA convention of lower case, stripped ends and single spaces.

It sits below every stage: the records' generators fold values to tell them apart, and the metrics
(:mod:`rpa_sim.evaluate.metrics.text`, which re-exports both functions with the edit distances) fold them to
compare.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["normalize", "normalize_many"]


def normalize(text: str) -> str:
    """Lower-case, strip and fold inner whitespace (the DocVQA convention).

    Examples
    --------
    >>> normalize("  Coca   COLA \\n")
    'coca cola'
    """
    return " ".join(text.strip().lower().split())


def normalize_many(texts: Iterable[str]) -> list[str]:
    """:func:`normalize` of each text, without a function call per text.

    Lower-casing cannot create whitespace, nor does whitespace change how a
    neighbouring letter lower-cases (a final sigma stays final), so stripping
    first is not needed.

    Examples
    --------
    >>> normalize_many(["  Coca   COLA ", "", "12,50\\tEUR"])
    ['coca cola', '', '12,50 eur']
    """
    return [" ".join(text.lower().split()) for text in texts]

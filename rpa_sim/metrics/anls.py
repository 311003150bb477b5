"""ANLS, accuracy and absolute deviation for document VQA (METRICS.md §1; seeds 001, 003)."""

from __future__ import annotations

from collections.abc import Sequence

from rpa_sim.text import nl, normalize

__all__ = ["anls_question"]


def anls_question(answers: Sequence[str], prediction: str, *, threshold: float = 0.5) -> float:
    """ANLS of one question: the best ``1 - NL`` over the accepted answers, 0 past ``threshold``.

    Strings are normalised (METRICS.md §0). ``NL == threshold`` is kept, as the
    official RRC/DocVQA evaluator and ANLS* do (the printed formula says ``<``).

    Parameters
    ----------
    answers : sequence of str
        The accepted ground-truth answers (at least one).
    prediction : str
        The predicted answer.
    threshold : float, default=0.5
        The largest normalised distance that still scores.

    Examples
    --------
    >>> anls_question(["Coca Cola"], "coca cola")
    1.0
    >>> anls_question(["ab"], "ac")  # NL = 0.5 = threshold: kept
    0.5
    >>> anls_question(["12"], "8.5")
    0.0
    """
    if not answers:
        raise ValueError("anls_question needs at least one accepted answer, got []")
    predicted = normalize(prediction)
    best = 0.0
    for answer in answers:
        distance = nl(normalize(answer), predicted)
        if distance <= threshold:
            best = max(best, 1.0 - distance)
    return best

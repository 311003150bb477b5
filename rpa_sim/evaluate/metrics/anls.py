"""ANLS, accuracy and absolute deviation for document VQA (METRICS.md §1; seeds 001, 003)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rpa_sim.evaluate.metrics.text import nls_bounded, nls_pairs, normalize, parse_number

__all__ = [
    "AbsoluteDeviation",
    "absolute_deviation",
    "accuracy",
    "accuracy_scores",
    "anls",
    "anls_question",
    "anls_scores",
]


def anls_question(answers: Sequence[str], prediction: str, *, threshold: float = 0.5) -> float:
    """ANLS of one question: the best ``1 - NL`` over the accepted answers, 0 past ``threshold``.

    Strings are normalised (METRICS.md §0). ``NL == threshold`` is kept, as the
    official RRC/DocVQA evaluator and ANLS* do (the printed formula says ``<``).
    A pair whose lengths alone put ``NL`` past the threshold scores 0 without
    an edit distance; very long pairs are bounded (:func:`rpa_sim.evaluate.metrics.text.nls_bounded`).

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
    return max(nls_bounded(normalize(answer), predicted, threshold=threshold) for answer in answers)


def anls_scores(
    answers: Sequence[Sequence[str]], predictions: Sequence[str], *, threshold: float = 0.5
) -> np.ndarray:
    """Per-question ANLS of a corpus, equal to :func:`anls_question` on each question.

    Every string is normalised once and all (answer, prediction) pairs go
    through one :func:`rpa_sim.evaluate.metrics.text.nls_pairs` call (one rapidfuzz ``cpdist``;
    pairs decided by their lengths cost nothing, very long pairs are bounded
    as ``docs/metrics/long-values.md`` says).

    Parameters
    ----------
    answers : sequence of sequences of str
        The accepted answers of each question (at least one per question).
    predictions : sequence of str
        One predicted answer per question.
    threshold : float, default=0.5
        The largest normalised distance that still scores (kept at equality).

    Returns
    -------
    numpy.ndarray
        float64 scores in [0, 1], one per question (empty for an empty corpus).

    Raises
    ------
    ValueError
        When answers and predictions differ in length, a question has no
        accepted answer, or a value is not a string.

    Examples
    --------
    >>> answers = [["Coca Cola", "Coca Cola Company"], ["ab"], ["12"]]
    >>> anls_scores(answers, ["CocaCola", "ac", "8.5"]).round(4).tolist()
    [0.8889, 0.5, 0.0]
    """
    flat_answers, repeated_predictions, starts = _normalised_pairs(answers, predictions)
    if not flat_answers:
        return np.zeros(0, dtype=np.float64)
    similarity = nls_pairs(flat_answers, repeated_predictions, threshold=threshold)
    return np.maximum.reduceat(similarity, starts)


def anls(answers: Sequence[Sequence[str]], predictions: Sequence[str], *, threshold: float = 0.5) -> float:
    """ANLS of a corpus: the mean of :func:`anls_scores`.

    Raises
    ------
    ValueError
        On an empty corpus, and wherever :func:`anls_scores` raises.

    Examples
    --------
    >>> anls([["Coca Cola"], ["ab"]], ["CocaCola", "ac"])
    0.6944444444444444
    """
    return _mean(anls_scores(answers, predictions, threshold=threshold), "anls")


def accuracy_scores(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> np.ndarray:
    """Per-question accuracy: 1 when the normalised prediction equals a normalised answer, else 0.

    Raises
    ------
    ValueError
        As :func:`anls_scores` does.

    Examples
    --------
    >>> accuracy_scores([["Coca Cola", "Coke"], ["12"]], ["  coke ", "12.0"]).tolist()
    [1.0, 0.0]
    """
    flat_answers, repeated_predictions, starts = _normalised_pairs(answers, predictions)
    if not flat_answers:
        return np.zeros(0, dtype=np.float64)
    hits = (np.array(flat_answers, dtype=object) == repeated_predictions).astype(np.float64)
    return np.maximum.reduceat(hits, starts)


def accuracy(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> float:
    """Accuracy of a corpus: the mean of :func:`accuracy_scores`.

    Raises
    ------
    ValueError
        On an empty corpus, and wherever :func:`accuracy_scores` raises.

    Examples
    --------
    >>> accuracy([["a"], ["b"], ["c"], ["d"]], ["A", "b ", "x", "y"])
    0.5
    """
    return _mean(accuracy_scores(answers, predictions), "accuracy")


@dataclass(frozen=True)
class AbsoluteDeviation:
    """Mean absolute deviation over the numeric questions, with what could not be compared.

    Attributes
    ----------
    mean : float or None
        Mean ``|value(prediction) - value(answer)|`` over the compared
        questions; ``None`` when no question was compared.
    compared : int
        Questions whose ground truth and prediction both parse as numbers.
    unparsed : int
        Questions whose ground truth is numeric but whose prediction is not.
    non_numeric : int
        Questions whose ground truth does not parse as a number (not scored).
    """

    mean: float | None
    compared: int
    unparsed: int
    non_numeric: int


def absolute_deviation(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> AbsoluteDeviation:
    """Averaged absolute deviation of the numeric answers (seed 003, METRICS.md §1).

    A question is numeric when at least one accepted answer parses with
    :func:`rpa_sim.evaluate.metrics.text.parse_number`. When several answers parse, the
    deviation is taken to the one closest to the prediction, as ANLS and
    accuracy take the best accepted answer.

    Raises
    ------
    ValueError
        As :func:`anls_scores` does.

    Examples
    --------
    >>> absolute_deviation([["$1,200"], ["12", "12.5"], ["n/a"], ["7"]], ["1,150", "12.4", "x", "seven"])
    AbsoluteDeviation(mean=25.05, compared=2, unparsed=1, non_numeric=1)
    """
    _answer_counts(answers, predictions)
    try:
        numeric = [[v for v in map(parse_number, group) if v is not None] for group in answers]
        predicted = list(map(parse_number, predictions))
    except (AttributeError, TypeError):
        raise _non_string(answers, predictions) from None
    deviations = [min(abs(p - v) for v in values) for values, p in zip(numeric, predicted) if values and p is not None]
    non_numeric = sum(not values for values in numeric)
    return AbsoluteDeviation(
        mean=float(np.mean(deviations)) if deviations else None,
        compared=len(deviations),
        unparsed=len(answers) - non_numeric - len(deviations),
        non_numeric=non_numeric,
    )


def _normalised_pairs(
    answers: Sequence[Sequence[str]], predictions: Sequence[str]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Every normalised answer beside its question's normalised prediction, and where each question starts."""
    counts = _answer_counts(answers, predictions)
    try:
        flat_answers = [normalize(a) for group in answers for a in group]
        normalised_predictions = np.array([normalize(p) for p in predictions], dtype=object)
    except (AttributeError, TypeError):
        # Checking every value up front would double the cost of a large corpus.
        raise _non_string(answers, predictions) from None
    starts = np.zeros(len(counts), dtype=np.intp)
    np.cumsum(counts[:-1], out=starts[1:])
    return flat_answers, np.repeat(normalised_predictions, counts), starts


def _answer_counts(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> np.ndarray:
    """The number of accepted answers of each question, after checking the corpus's shape."""
    if len(answers) != len(predictions):
        raise ValueError(
            f"every question needs one prediction: got {len(answers)} answer lists and {len(predictions)} predictions"
        )
    for i, group in enumerate(answers):
        # A bare string would silently become one accepted answer per character.
        if isinstance(group, str) or not group:
            raise ValueError(f"answers[{i}] must be a non-empty list of accepted answers, got {group!r}")
    return np.fromiter(map(len, answers), dtype=np.intp, count=len(answers))


def _non_string(answers: Sequence[Sequence[str]], predictions: Sequence[str]) -> ValueError:
    """The error naming the first answer or prediction that is not a string."""
    for i, group in enumerate(answers):
        for j, answer in enumerate(group):
            if not isinstance(answer, str):
                return ValueError(f"answers[{i}][{j}] must be a string, got {answer!r}")
    bad = next(i for i, p in enumerate(predictions) if not isinstance(p, str))
    return ValueError(f"predictions[{bad}] must be a string, got {predictions[bad]!r}")


def _mean(scores: np.ndarray, name: str) -> float:
    if scores.size == 0:
        raise ValueError(f"{name} of an empty corpus is undefined: got 0 questions")
    return float(scores.mean())

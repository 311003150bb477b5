"""SMuDGE: type-aware match, multimodal grounding and their composite (METRICS.md §4; seed 000).

A question scores ``s = alpha * m + (1 - alpha) * g``: ``m`` compares the
prediction with the ground truth according to the ground truth's answer type
(numeric, textual or hybrid), ``g`` decays with the distance on the page
between where the ground truth and the prediction are found in the OCR words
(located by :mod:`rpa_sim.evaluate.grounding`). The decisions taken where the paper and the spec are silent are
listed in ``docs/metrics/smudge.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from rpa_sim.evaluate.grounding import LOCATION_THRESHOLD, locate_many
from rpa_sim.evaluate.metrics.anls import anls_question
from rpa_sim.evaluate.metrics.text import nls_bounded, normalize, parse_number

if TYPE_CHECKING:
    from rpa_sim.records.models import Document

__all__ = [
    "AnswerType",
    "Normalization",
    "answer_type",
    "match_score",
    "centroid_distance",
    "grounding_from_distance",
    "QuestionResult",
    "evaluate_question",
    "smudge_scores",
    "alpha_curve",
]

AnswerType = Literal["numeric", "textual", "hybrid"]
Normalization = Literal["page", "gt_box", "mean_box"]

_NORMALIZATIONS = ("page", "gt_box", "mean_box")
_SCALE_EXPONENTS = (0, 2, -2, 3, -3, 6, -6, 9, -9)
# Both numbers are parsed from decimal text (one rounding each) and one is
# scaled by an exactly representable power of ten (one more rounding), so
# equal values differ by at most 3 unit roundoffs; 4 (2**-51 ~ 4.4e-16) covers
# that while two distinct numbers of up to 15 significant digits still differ
# by more (>= 1e-15 relative, minus the same 3 roundoffs).
_RELATIVE_TOLERANCE = 2.0**-51


# --------------------------------------------------------------------------- match


def answer_type(text: str) -> AnswerType:
    """The semantic type of an answer (appendix B.3), whitespace ignored.

    ``numeric`` iff every other character is a decimal digit, ``textual`` iff
    every other character is alphabetic, ``hybrid`` otherwise. A string with
    nothing but whitespace is ``textual``: it is then scored by ANLS, under
    which an empty answer matches only an empty prediction (DUDE's convention
    for unanswerable questions).

    Parameters
    ----------
    text : str
        The answer.

    Returns
    -------
    {"numeric", "textual", "hybrid"}

    Examples
    --------
    >>> answer_type("1894"), answer_type("milligrams"), answer_type("1,700"), answer_type("(8)")
    ('numeric', 'textual', 'hybrid', 'hybrid')
    >>> answer_type("up to 12 milligrams"), answer_type(" ")
    ('hybrid', 'textual')
    """
    characters = [c for c in text if not c.isspace()]
    if all(c.isdecimal() for c in characters) and characters:
        return "numeric"
    if all(c.isalpha() for c in characters):
        return "textual"
    return "hybrid"


def match_score(answers: Sequence[str], prediction: str, *, weight: float = 10.0, threshold: float = 0.5) -> float:
    """Type-aware match ``m`` of a prediction (section 3.2, appendices B.3-B.4).

    Each accepted answer is compared according to its own type and the best
    score is kept (as ANLS keeps the best answer):

    - textual: thresholded ANLS (METRICS.md §1);
    - numeric: 1 iff the prediction's number equals the answer times
      ``10**k``, ``k`` in {0, ±2, ±3, ±6, ±9}, else 0;
    - hybrid: both strings (normalised) are split into their digits and their
      other characters; the digits score as a number, the rest (stripped, its
      inner whitespace kept as the digits left it) as thresholded
      ``1 - NL``; the two combine as ``(w + 1) / (w / num + 1 / str)``, 0 if
      either part is 0. A hybrid answer without any digit (``"U.S.A."``) has
      no number to weigh and scores as textual.

    Parameters
    ----------
    answers : sequence of str
        The accepted ground-truth answers (at least one).
    prediction : str
        The predicted answer.
    weight : float, default=10.0
        ``w``, the weight of the numeric part of a hybrid answer (appendix B.4).
    threshold : float, default=0.5
        The largest normalised distance that still scores for textual parts.

    Returns
    -------
    float
        The match score in [0, 1].

    Examples
    --------
    >>> match_score(["12"], "1,200")  # scaled by 10**2
    1.0
    >>> match_score(["12"], "120")
    0.0
    >>> round(match_score(["up to 12 milligrams"], "up to 12 mgs", weight=1), 4)
    0.7407
    >>> match_score(["up to 12 milligrams"], "up to 1z milligrams")
    0.0
    """
    _check_answers(answers)
    _check_weight(weight)
    _check_threshold(threshold)
    return _best_answer(answers, prediction, weight, threshold)[1]


def _best_answer(answers: Sequence[str], prediction: str, weight: float, threshold: float) -> tuple[int, float]:
    # The first answer wins ties, so the reference answer is deterministic.
    best, best_score = 0, -1.0
    for position, answer in enumerate(answers):
        score = _match_one(answer, prediction, weight, threshold)
        if score > best_score:
            best, best_score = position, score
    return best, best_score


def _match_one(answer: str, prediction: str, weight: float, threshold: float) -> float:
    kind = answer_type(answer)
    if kind == "numeric":
        return float(_same_number(_digits(answer), prediction))
    truth_digits, truth_rest = _hybrid_parts(answer) if kind == "hybrid" else ("", "")
    if not truth_digits:
        return anls_question([answer], prediction, threshold=threshold)
    predicted_digits, predicted_rest = _hybrid_parts(prediction)
    number = float(_same_number(truth_digits, predicted_digits))
    text = _thresholded_similarity(truth_rest, predicted_rest, threshold)
    if number == 0.0 or text == 0.0:
        return 0.0
    return (weight + 1.0) / (weight / number + 1.0 / text)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdecimal())


def _hybrid_parts(text: str) -> tuple[str, str]:
    """Digits and the other characters of the normalised text; the latter stripped only.

    The inner whitespace is deliberately not folded again: ``"up to 12
    milligrams"`` leaves ``"up to  milligrams"`` (two spaces), which is what
    reproduces Table 1's text score of 0.59.
    """
    folded = normalize(text)
    return _digits(folded), "".join(c for c in folded if not c.isdecimal()).strip()


def _thresholded_similarity(truth: str, prediction: str, threshold: float) -> float:
    return nls_bounded(truth, prediction, threshold=threshold)


def _same_number(truth_text: str, predicted_text: str) -> bool:
    truth, value = parse_number(truth_text), parse_number(predicted_text)
    if truth is None or value is None:
        return False
    for exponent in _SCALE_EXPONENTS:
        # Dividing by 10**-k (exact in binary64 up to 10**22) rounds once;
        # multiplying by the inexact literal 10**k would round twice.
        scaled = truth * 10.0**exponent if exponent >= 0 else truth / 10.0**-exponent
        if math.isclose(value, scaled, rel_tol=_RELATIVE_TOLERANCE, abs_tol=0.0):
            return True
    return False


# --------------------------------------------------------------------------- distance, grounding


def centroid_distance(
    truth_box: Sequence[float],
    predicted_box: Sequence[float],
    *,
    page_size: tuple[float, float] | None = None,
    normalization: Normalization = "page",
) -> float:
    """Normalised Manhattan distance between two boxes' centroids, capped at 1 (eq. 2, appendix B.2).

    ``d = min(1, |dx| / sx + |dy| / sy)`` where ``(sx, sy)`` is the page's
    width and height (``"page"``, the paper's choice), the ground-truth box's
    width and height (``"gt_box"``) or the mean of the two boxes' widths and
    heights (``"mean_box"``). An offset along a zero-sized scale counts as the
    full distance 1; no offset counts 0. Any finite coordinates work, up to
    ±1.7e308: the distance is a ratio of lengths, so every length is first
    scaled by one power of two (exact in binary) that brings it into [-1, 1],
    where no sum or difference of coordinates overflows.

    Parameters
    ----------
    truth_box, predicted_box : sequence of float
        ``(x0, y0, x1, y1)`` boxes on the same page.
    page_size : (float, float), optional
        The page's width and height; required when ``normalization="page"``.
    normalization : {"page", "gt_box", "mean_box"}, default="page"
        What the offsets are divided by.

    Returns
    -------
    float
        The distance in [0, 1].

    Examples
    --------
    Appendix B.2's scenario A on a 1000-pixel-wide page:

    >>> a, b = (0, 0, 500, 10), (500, 0, 1000, 10)
    >>> centroid_distance(a, b, page_size=(1000, 1000))
    0.5
    >>> centroid_distance(a, b, normalization="mean_box")
    1.0
    >>> centroid_distance((0, 0, 1e308, 10), (1e308, 0, 1e308, 10), page_size=(1e308, 1000))  # 1e308 + 1e308 overflows
    0.5
    """
    if normalization not in _NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {_NORMALIZATIONS}, got {normalization!r}")
    page = page_size if normalization == "page" else None
    if normalization == "page" and (page is None or len(page) != 2 or not all(v > 0 for v in page)):
        raise ValueError(f'normalization="page" needs page_size=(width, height) > 0, got {page_size!r}')
    lengths = [*truth_box, *predicted_box, *(page or ())]
    exponent = math.frexp(max(abs(v) for v in lengths))[1]
    tx0, ty0, tx1, ty1 = (math.ldexp(v, -exponent) for v in truth_box)
    px0, py0, px1, py1 = (math.ldexp(v, -exponent) for v in predicted_box)
    dx = abs((tx0 + tx1) / 2 - (px0 + px1) / 2)
    dy = abs((ty0 + ty1) / 2 - (py0 + py1) / 2)
    if page is not None:
        scale_x, scale_y = (math.ldexp(v, -exponent) for v in page)
    elif normalization == "gt_box":
        scale_x, scale_y = tx1 - tx0, ty1 - ty0
    else:
        scale_x, scale_y = ((tx1 - tx0) + (px1 - px0)) / 2, ((ty1 - ty0) + (py1 - py0)) / 2
    return min(1.0, _offset_ratio(dx, scale_x) + _offset_ratio(dy, scale_y))


def _offset_ratio(offset: float, scale: float) -> float:
    if offset == 0:
        return 0.0
    return offset / scale if scale > 0 else 1.0


@overload
def grounding_from_distance(distance: float) -> float: ...


@overload
def grounding_from_distance(distance: ArrayLike) -> float | np.ndarray: ...


def grounding_from_distance(distance: ArrayLike) -> float | np.ndarray:
    """Grounding score ``g = exp(-d / (1 - d))`` (section 3.1); ``g = 0`` at ``d = 1``.

    Parameters
    ----------
    distance : float or array-like
        Distances in [0, 1]; NaN passes through.

    Returns
    -------
    float or ndarray
        A float for a scalar input, otherwise an array of the input's shape.

    Examples
    --------
    >>> grounding_from_distance(0.0), grounding_from_distance(1.0)
    (1.0, 0.0)
    >>> grounding_from_distance([0.5, 0.2]).round(4).tolist()
    [0.3679, 0.7788]
    """
    d = np.asarray(distance, dtype=np.float64)
    if np.any((d < 0) | (d > 1)):
        bad = float(d[(d < 0) | (d > 1)].flat[0])
        raise ValueError(f"distance must be in [0, 1], got {bad!r}")
    # At d = 1 the exponent is -1/0 = -inf and exp gives exactly 0.
    with np.errstate(divide="ignore"):
        grounding = np.exp(-d / (1.0 - d))
    return float(grounding) if grounding.ndim == 0 else grounding


# --------------------------------------------------------------------------- per question


@dataclass(frozen=True)
class QuestionResult:
    """SMuDGE's parts for one question.

    Attributes
    ----------
    answer_type : {"numeric", "textual", "hybrid"}
        Type of the reference answer: the accepted answer with the best
        match (the first one on ties).
    match : float
        ``m``, see :func:`match_score`.
    distance : float
        ``d`` between the reference answer's span and the prediction's; NaN without a document.
    grounding : float
        ``g``; NaN without a document.
    locatability : float
        Best-span NLS of the prediction in the document; NaN without a document.
    located : bool or None
        Whether that NLS exceeds :data:`rpa_sim.evaluate.grounding.LOCATION_THRESHOLD`; None without a document.
    """

    answer_type: AnswerType
    match: float
    distance: float
    grounding: float
    locatability: float
    located: bool | None


def evaluate_question(
    answers: Sequence[str],
    prediction: str,
    document: Document | None,
    *,
    weight: float = 10.0,
    threshold: float = 0.5,
    normalization: Normalization = "page",
) -> QuestionResult:
    """Match, distance, grounding and locatability of one question (section 3).

    The reference answer is the accepted answer with the best match (the
    first on ties); its span is the best-NLS span (:func:`rpa_sim.evaluate.grounding.locate`). The
    prediction's span counts only when located (NLS > 0.3). ``d = 1`` when
    the prediction is not located, is located on another page than the
    reference, or the reference cannot be placed at all (it is empty, the
    document has no words, or it is too long to be located:
    :data:`rpa_sim.evaluate.grounding.LONG_TEXT`).

    Parameters
    ----------
    answers : sequence of str
        The accepted ground-truth answers (at least one).
    prediction : str
        The predicted answer.
    document : Document or None
        The OCR words; without them the grounding fields are NaN and ``located`` is None.
    weight : float, default=10.0
        ``w`` of hybrid answers, see :func:`match_score`.
    threshold : float, default=0.5
        ANLS threshold of textual parts.
    normalization : {"page", "gt_box", "mean_box"}, default="page"
        See :func:`centroid_distance`.

    Returns
    -------
    QuestionResult

    Examples
    --------
    >>> from rpa_sim.records.models import Document, Page, Word
    >>> page = Page(width=1000, height=1000, words=[
    ...     Word(text="8.5", bbox=(400, 200, 440, 220)),
    ...     Word(text="12.", bbox=(400, 300, 440, 320))])
    >>> result = evaluate_question(["12"], "8.5", Document(pages=[page]))
    >>> result.answer_type, result.match, result.distance, round(result.grounding, 4), result.located
    ('numeric', 0.0, 0.1, 0.8948, True)
    >>> evaluate_question(["12"], "vanilla", Document(pages=[page])).grounding  # not on the page
    0.0
    >>> evaluate_question(["12"], "12", None).grounding
    nan
    """
    _check_answers(answers)
    _check_weight(weight)
    _check_threshold(threshold)
    if normalization not in _NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {_NORMALIZATIONS}, got {normalization!r}")
    reference, match = _best_answer(answers, prediction, weight, threshold)
    kind = answer_type(answers[reference])
    if document is None:
        return QuestionResult(kind, match, math.nan, math.nan, math.nan, None)
    truth_span, predicted_span = locate_many([answers[reference], prediction], document)
    score = 0.0 if predicted_span is None else predicted_span.nls
    located = score > LOCATION_THRESHOLD
    distance = 1.0
    if located and truth_span is not None and predicted_span is not None and truth_span.page == predicted_span.page:
        page = document.pages[truth_span.page]
        distance = centroid_distance(
            truth_span.bbox, predicted_span.bbox, page_size=(page.width, page.height), normalization=normalization
        )
    return QuestionResult(kind, match, distance, grounding_from_distance(distance), score, located)


# --------------------------------------------------------------------------- composite


def smudge_scores(match: ArrayLike, grounding: ArrayLike, *, alpha: float = 0.25) -> np.ndarray:
    """Composite ``s = alpha * m + (1 - alpha) * g`` per question (section 3.3).

    The result is clipped into ``[min(m, g), max(m, g)]`` so that rounding can
    never put it outside its two parts. NaN (a question without a document)
    passes through.

    Parameters
    ----------
    match, grounding : array-like
        Per-question ``m`` and ``g`` in [0, 1], of the same shape.
    alpha : float, default=0.25
        The weight of the match score.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> smudge_scores([0.0, 1.0], [1.0, 1.0]).tolist()
    [0.75, 1.0]
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    m = _unit_array(match, "match")
    g = _unit_array(grounding, "grounding")
    if m.shape != g.shape:
        raise ValueError(f"match and grounding must have the same shape, got {m.shape} and {g.shape}")
    composite = alpha * m + (1.0 - alpha) * g
    return np.minimum(np.maximum(composite, np.minimum(m, g)), np.maximum(m, g))


def alpha_curve(match: ArrayLike, grounding: ArrayLike, *, step: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Mean composite over questions at ``alpha = 0, step, 2 * step, ..., 1``.

    The grid is ``i / N`` for integer ``i`` (``N = 1 / step``), so it ends
    exactly at 1 and ``0.25`` is on it exactly; at ``alpha = 0`` the curve is
    the mean grounding, at ``alpha = 1`` the mean match.

    Parameters
    ----------
    match, grounding : array-like of shape (n_questions,)
        Per-question ``m`` and ``g``.
    step : float, default=0.05
        The grid step; ``1 / step`` must be a whole number.

    Returns
    -------
    alphas : ndarray of shape (N + 1,)
    means : ndarray of shape (N + 1,)

    Examples
    --------
    >>> alphas, means = alpha_curve([1.0, 0.0], [0.0, 0.0])
    >>> len(alphas), float(alphas[5]), float(means[0]), float(means[-1])
    (21, 0.25, 0.0, 0.5)
    """
    parts = round(1.0 / step) if 0.0 < step <= 1.0 else 0
    if parts == 0 or not math.isclose(parts * step, 1.0, rel_tol=1e-9):
        raise ValueError(f"step must divide [0, 1] into a whole number of steps, got {step!r}")
    if np.size(match) == 0:
        raise ValueError("alpha_curve needs at least one question, got none")
    alphas = np.arange(parts + 1) / parts
    means = np.array([smudge_scores(match, grounding, alpha=float(alpha)).mean() for alpha in alphas])
    return alphas, means


# --------------------------------------------------------------------------- checks


def _check_answers(answers: Sequence[str]) -> None:
    if isinstance(answers, str):
        raise ValueError(f"answers must be a sequence of accepted answers, got the string {answers!r}")
    if len(answers) == 0:
        raise ValueError("at least one accepted answer is needed, got []")


def _check_weight(weight: float) -> None:
    if not (math.isfinite(weight) and weight > 0):
        raise ValueError(f"weight must be a finite number > 0, got {weight!r}")


def _check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")


def _unit_array(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    outside = (array < 0) | (array > 1)
    if np.any(outside):
        raise ValueError(f"{name} must be in [0, 1], got {float(array[outside].flat[0])!r}")
    return array

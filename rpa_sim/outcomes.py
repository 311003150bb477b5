"""Stage 1, evaluate: records -> per-document metrics -> an outcome table of numpy columns.

The outcome table has one row per prediction unit (a predicted KIE entity, or
a VQA question) with everything routing and sweeping need: document, key or
type, confidence, grounding, outcome label and scores. Stage 2 (policies,
reviewers, sweeps) works on these columns alone, never on the records.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from rpa_sim.metrics.anls import absolute_deviation, accuracy_scores, anls_scores
from rpa_sim.metrics.evidence import evidence_iou
from rpa_sim.metrics.kieval import OUTCOME_NAMES, KIEvalCounts, ValueMatch, evaluate_document
from rpa_sim.metrics.smudge import AnswerType, Normalization, evaluate_question, locatability, smudge_scores
from rpa_sim.records import Document, KIERecord, VQARecord
from rpa_sim.text import nls_pairs

__all__ = ["KIEOutcomes", "VQAOutcomes", "evaluate_kie", "evaluate_vqa", "GroundingMode"]

GroundingMode = Literal["auto", "given", "compute"]
ANSWER_TYPES: tuple[str, ...] = get_args(AnswerType)
_STRINGS = np.dtypes.StringDType()


def _column(values: array, dtype: type = np.float64) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype).copy()


class _Vocabulary:
    """Codes for repeated strings (keys, types), in order of first appearance."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def code(self, name: str) -> int:
        return self.codes.setdefault(name, len(self.codes))

    def names(self) -> tuple[str, ...]:
        return tuple(self.codes)


@dataclass(frozen=True, eq=False)
class KIEOutcomes:
    """The KIE outcome table: one row per predicted entity, plus one per missed entity.

    Entity rows (length ``n``): ``document`` (index into ``document_ids``),
    ``group`` (0 = non-grouped), ``key`` (index into ``keys``), ``confidence``,
    ``grounding`` (NaN when unknown), ``outcome`` (0 correct, 1 substitution,
    2 deletion, names in ``OUTCOME_NAMES``), ``similarity`` (NLS between the
    predicted value and its correction: 1 when correct, 0 for a deletion),
    ``value`` and ``correction`` (the value a reviewer writes; empty for a
    deletion). Addition rows: ``addition_document`` and ``addition_key``.
    Per document: ``document_counts``, one row of KIEval counts per document
    (columns named by :meth:`KIEvalCounts.field_names`; see :meth:`document_count`).
    ``counts`` are the corpus KIEval counts, the column sums.
    """

    document_ids: np.ndarray
    keys: tuple[str, ...]
    document: np.ndarray
    group: np.ndarray
    key: np.ndarray
    confidence: np.ndarray
    grounding: np.ndarray
    outcome: np.ndarray
    similarity: np.ndarray
    value: np.ndarray
    correction: np.ndarray
    addition_document: np.ndarray
    addition_key: np.ndarray
    document_counts: np.ndarray
    counts: KIEvalCounts
    value_match: ValueMatch = "exact"

    outcome_names = OUTCOME_NAMES

    def __len__(self) -> int:
        return len(self.confidence)

    @property
    def documents(self) -> int:
        return len(self.document_ids)

    def document_count(self, name: str) -> np.ndarray:
        """One KIEval count per document, e.g. ``"additions"`` or ``"entities_gt"``."""
        names = KIEvalCounts.field_names()
        if name not in names:
            raise ValueError(f"name must be one of {names}, got {name!r}")
        return self.document_counts[:, names.index(name)]


class _KIEColumns:
    """Growing columns, kept as compact arrays while records stream in."""

    def __init__(self) -> None:
        self.document_ids: list[str] = []
        self.keys = _Vocabulary()
        self.document, self.group, self.key = array("i"), array("i"), array("i")
        self.confidence, self.grounding = array("d"), array("d")
        self.outcome = array("b")
        self.values: list[str] = []
        self.corrections: list[str] = []
        self.addition_document, self.addition_key = array("i"), array("i")
        self.document_counts = array("q")


def _grounding(values: list[str], given: list[float | None], document: Document | None,
               mode: GroundingMode) -> list[float]:
    if mode == "given" or document is None:
        return [math.nan if g is None or mode == "compute" else g for g in given]
    return [locatability(v, document) if g is None or mode == "compute" else g for v, g in zip(values, given)]


def evaluate_kie(records: Iterable[KIERecord], *, value_match: ValueMatch = "exact",
                 grounding: GroundingMode = "auto") -> KIEOutcomes:
    """Evaluate KIE records into an outcome table.

    Parameters
    ----------
    records : iterable of KIERecord
        Each with both a ground truth and a prediction (streamed; consumed once).
    value_match : {"exact", "normalized"}, default="exact"
        How values are compared (see :func:`rpa_sim.metrics.kieval.evaluate_document`).
    grounding : {"auto", "given", "compute"}, default="auto"
        ``"given"`` uses the records' ``grounding`` (NaN where absent);
        ``"compute"`` locates every predicted value in the record's OCR
        (best-span NLS, METRICS.md §4); ``"auto"`` uses the given value and
        computes only the missing ones when the record has a document.

    Examples
    --------
    >>> from rpa_sim.records import KIERecord
    >>> record = KIERecord.model_validate({"id": "r1",
    ...     "ground_truth": {"entities": [{"key": "total", "value": "10.00"}]},
    ...     "prediction": {"entities": [{"key": "total", "value": "10.0", "confidence": 0.4}]}})
    >>> table = evaluate_kie([record])
    >>> table.outcome.tolist(), table.correction.tolist(), table.counts.substitutions
    ([1], ['10.00'], 1)
    """
    if grounding not in ("auto", "given", "compute"):
        raise ValueError(f"grounding must be 'auto', 'given' or 'compute', got {grounding!r}")
    columns = _KIEColumns()
    for index, record in enumerate(records):
        if record.ground_truth is None or record.prediction is None:
            raise ValueError(f"record {record.id!r} needs both ground_truth and prediction to be evaluated")
        result = evaluate_document(record.ground_truth, record.prediction, value_match=value_match)
        n = len(result.keys)
        columns.document_ids.append(record.id)
        columns.document.extend([index] * n)
        columns.group.extend(result.groups.tolist())
        columns.key.extend(map(columns.keys.code, result.keys))
        columns.confidence.extend(result.confidences)
        columns.grounding.extend(_grounding(result.values, result.groundings, record.document, grounding))
        columns.outcome.extend(result.labels.tolist())
        columns.values.extend(result.values)
        columns.corrections.extend(c if c is not None else "" for c in result.corrections)
        columns.addition_document.extend([index] * len(result.additions))
        columns.addition_key.extend(columns.keys.code(a.key) for a in result.additions)
        columns.document_counts.extend(result.counts.as_tuple())
    return _finish(columns, value_match)


def _finish(c: _KIEColumns, value_match: ValueMatch) -> KIEOutcomes:
    counts = _column(c.document_counts, np.int64).reshape(-1, len(KIEvalCounts.field_names()))
    outcome = _column(c.outcome, np.int8)
    value = np.array(c.values, dtype=_STRINGS)
    correction = np.array(c.corrections, dtype=_STRINGS)
    similarity = np.where(outcome == 0, 1.0, 0.0)
    substituted = np.flatnonzero(outcome == 1)
    if len(substituted):
        similarity[substituted] = nls_pairs(value[substituted].tolist(), correction[substituted].tolist())
    return KIEOutcomes(
        document_ids=np.array(c.document_ids, dtype=_STRINGS),
        keys=c.keys.names(),
        document=_column(c.document, np.int32),
        group=_column(c.group, np.int32),
        key=_column(c.key, np.int32),
        confidence=_column(c.confidence),
        grounding=_column(c.grounding),
        outcome=outcome,
        similarity=similarity,
        value=value,
        correction=correction,
        addition_document=_column(c.addition_document, np.int32),
        addition_key=_column(c.addition_key, np.int32),
        document_counts=counts,
        counts=KIEvalCounts(*(int(total) for total in counts.sum(axis=0))),
        value_match=value_match,
    )


def _mean_or_none(values: np.ndarray) -> float | None:
    known = values[~np.isnan(values)]
    return float(known.mean()) if len(known) else None


@dataclass(frozen=True, eq=False)
class VQAOutcomes:
    """The VQA outcome table: one row per question.

    Columns: ``confidence``; ``grounding`` for routing (the record's, else the
    prediction's locatability in the OCR, NaN when neither is known);
    ``question_type`` (index into ``question_types``, "" when not given);
    ``answer_type`` (index into :data:`ANSWER_TYPES`);
    the scores ``anls``, ``accuracy``, ``match`` (SMuDGE ``m``),
    ``smudge_grounding`` (SMuDGE ``g``, NaN without OCR), ``distance``,
    ``evidence_iou`` (NaN without ground-truth evidence) and
    ``absolute_deviation`` (NaN unless both answers are numbers);
    ``prediction`` and ``answer`` (the first accepted answer) as strings.
    """

    question_ids: np.ndarray
    question_types: tuple[str, ...]
    question_type: np.ndarray
    answer_type: np.ndarray
    confidence: np.ndarray
    grounding: np.ndarray
    anls: np.ndarray
    accuracy: np.ndarray
    match: np.ndarray
    smudge_grounding: np.ndarray
    distance: np.ndarray
    evidence_iou: np.ndarray
    absolute_deviation: np.ndarray
    prediction: np.ndarray
    answer: np.ndarray
    alpha: float = 0.25
    weight: float = 10.0
    threshold: float = 0.5

    answer_types = ANSWER_TYPES

    def __len__(self) -> int:
        return len(self.confidence)

    def smudge(self, *, alpha: float | None = None) -> np.ndarray:
        """Per-question SMuDGE composite at ``alpha`` (default: the table's), NaN without OCR."""
        return smudge_scores(self.match, self.smudge_grounding, alpha=self.alpha if alpha is None else alpha)

    def summary(self) -> dict[str, float | int | None]:
        """Corpus figures with the ``score --json`` keys of FORMATS.md.

        ``smudge`` and ``grounding`` average the questions that have OCR,
        ``evidence_iou`` those with ground-truth evidence; each is null when
        no question has what it needs.
        """
        deviation = self.absolute_deviation
        return {
            "questions": len(self),
            "anls": float(self.anls.mean()) if len(self) else None,
            "accuracy": float(self.accuracy.mean()) if len(self) else None,
            "smudge": _mean_or_none(self.smudge()),
            "match": float(self.match.mean()) if len(self) else None,
            "grounding": _mean_or_none(self.smudge_grounding),
            "alpha": self.alpha,
            "evidence_iou": _mean_or_none(self.evidence_iou),
            "absolute_deviation": _mean_or_none(deviation),
            "absolute_deviation_compared": int(np.count_nonzero(~np.isnan(deviation))),
        }


def evaluate_vqa(records: Iterable[VQARecord], *, alpha: float = 0.25, weight: float = 10.0,
                 threshold: float = 0.5, normalization: Normalization = "page",
                 grounding: GroundingMode = "auto") -> VQAOutcomes:
    """Evaluate VQA records into an outcome table.

    Parameters
    ----------
    records : iterable of VQARecord
        Each with answers and a prediction (streamed; consumed once).
    alpha : float, default=0.25
        SMuDGE's weight of the match score in the composite.
    weight : float, default=10.0
        SMuDGE's ``w`` for hybrid answers.
    threshold : float, default=0.5
        The ANLS threshold.
    normalization : {"page", "gt_box", "mean_box"}, default="page"
        How SMuDGE normalises the centroid distance.
    grounding : {"auto", "given", "compute"}, default="auto"
        The routing grounding: the record's (``"given"``), the prediction's
        locatability in the OCR (``"compute"``), or the record's where given
        and the locatability otherwise (``"auto"``).

    Examples
    --------
    >>> record = VQARecord.model_validate({"id": "q1", "answers": ["12"],
    ...     "prediction": {"answer": "12", "confidence": 0.8}})
    >>> table = evaluate_vqa([record])
    >>> table.summary()["anls"], table.summary()["smudge"]
    (1.0, None)
    """
    if grounding not in ("auto", "given", "compute"):
        raise ValueError(f"grounding must be 'auto', 'given' or 'compute', got {grounding!r}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    ids, answers, predictions = [], [], []
    question_types = _Vocabulary()
    kind_code = {name: code for code, name in enumerate(ANSWER_TYPES)}
    qtype, atype = array("i"), array("b")
    confidence, routing, match, smudge_g, distance, iou = (array("d") for _ in range(6))
    for record in records:
        if record.answers is None or record.prediction is None:
            raise ValueError(f"record {record.id!r} needs both answers and a prediction to be evaluated")
        predicted = record.prediction
        result = evaluate_question(record.answers, predicted.answer, record.document, weight=weight,
                                   threshold=threshold, normalization=normalization)
        ids.append(record.id)
        answers.append(record.answers)
        predictions.append(predicted.answer)
        qtype.append(question_types.code(record.question_type or ""))
        atype.append(kind_code[result.answer_type])
        confidence.append(predicted.confidence)
        given = predicted.grounding if predicted.grounding is not None and grounding != "compute" else np.nan
        routing.append(result.locatability if np.isnan(given) and grounding != "given" else given)
        match.append(result.match)
        smudge_g.append(result.grounding)
        distance.append(result.distance)
        iou.append(evidence_iou(record.evidence, predicted.evidence) if record.evidence else np.nan)
    deviation = np.full(len(ids), np.nan)
    for i, (truth, predicted_answer) in enumerate(zip(answers, predictions)):
        result = absolute_deviation([truth], [predicted_answer])
        if result.mean is not None:
            deviation[i] = result.mean
    return VQAOutcomes(
        question_ids=np.array(ids, dtype=_STRINGS),
        question_types=question_types.names(),
        question_type=_column(qtype, np.int32),
        answer_type=_column(atype, np.int8),
        confidence=_column(confidence),
        grounding=_column(routing),
        anls=anls_scores(answers, predictions, threshold=threshold) if ids else np.zeros(0),
        accuracy=accuracy_scores(answers, predictions) if ids else np.zeros(0),
        match=_column(match),
        smudge_grounding=_column(smudge_g),
        distance=_column(distance),
        evidence_iou=_column(iou),
        absolute_deviation=deviation,
        prediction=np.array(predictions, dtype=_STRINGS),
        answer=np.array([a[0] for a in answers], dtype=_STRINGS),
        alpha=alpha,
        weight=weight,
        threshold=threshold,
    )

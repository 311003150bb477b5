"""The VQA outcome table: one row per question, and its evaluation.

:func:`evaluate_vqa` (also :meth:`VQAOutcomes.evaluate`) turns VQA records
into a :class:`VQAOutcomes`, which satisfies
:class:`~rpa_sim.evaluate.outcomes.protocol.OutcomeTable`: every task fact of
document visual question answering (ANLS, question types as fields, each
question its own review unit, SMuDGE, its file columns) is a member here.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rpa_sim.common.errors import shown
from rpa_sim.evaluate.outcomes.arrow import (
    AT_LEAST_0,
    FINITE_AT_LEAST_0,
    QUOTE,
    SIGNAL_PREFIX,
    UNIT,
    FileColumn,
    FileLayout,
    FileRows,
    named,
    numbers,
    strings,
)
from rpa_sim.evaluate.outcomes.columns import (
    STRINGS,
    DeferredColumn,
    SignalColumns,
    Vocabulary,
    concatenated,
    epoch_seconds,
    mean_or_none,
    merged_names,
    merged_signals,
    packed,
)
from rpa_sim.evaluate.outcomes.protocol import FieldGrouping, GroundingMode, ReviewValues, ScoreRows

if TYPE_CHECKING:
    import pyarrow as pa

    # evaluation's metrics (grounding, ANLS, SMuDGE; rapidfuzz underneath) are imported by the functions that
    # evaluate: stage 2 on a table read from a file never needs them
    from rpa_sim.evaluate.metrics.smudge import Normalization

    # the records' models (pydantic) are only named here: reading an outcome table file never imports them
    from rpa_sim.records.models import VQARecord

__all__ = ["VQAOutcomes", "evaluate_vqa", "ANSWER_TYPES", "RIGHT_ANLS"]

#: :data:`rpa_sim.evaluate.metrics.smudge.AnswerType`'s values, in its order (tested)
ANSWER_TYPES: tuple[str, ...] = ("numeric", "textual", "hybrid")
#: A question is right iff its ANLS is at least this (METRICS.md §7); below it, it is an error.
RIGHT_ANLS = 0.5
_QUESTION = ("question",)
_FILE_COLUMNS = (
    FileColumn("question_id", "string", _QUESTION),
    FileColumn("question_type", "string", _QUESTION, dictionary=True, coded=True),
    FileColumn("answer_type", "string", _QUESTION, dictionary=True, coded=True),
    FileColumn("confidence", "double", _QUESTION, bounds=UNIT),
    FileColumn("grounding", "double", _QUESTION, nullable=True, bounds=UNIT),
    FileColumn("anls", "double", _QUESTION, bounds=UNIT),
    FileColumn("accuracy", "double", _QUESTION, bounds=UNIT),
    FileColumn("match", "double", _QUESTION, bounds=UNIT),
    FileColumn("smudge_grounding", "double", _QUESTION, nullable=True, bounds=UNIT),
    FileColumn("distance", "double", _QUESTION, nullable=True, bounds=UNIT),
    FileColumn("evidence_iou", "double", _QUESTION, nullable=True, bounds=UNIT),
    # a difference of two huge numbers may overflow to inf
    FileColumn("absolute_deviation", "double", _QUESTION, nullable=True, bounds=AT_LEAST_0),
    FileColumn("prediction", "string", _QUESTION),
    FileColumn("answer", "string", _QUESTION),
    FileColumn("document_type", "string", _QUESTION, dictionary=True, optional=True),
    FileColumn("received_at", "double", _QUESTION, nullable=True, optional=True),
    FileColumn("review_seconds", "double", _QUESTION, nullable=True, optional=True, bounds=FINITE_AT_LEAST_0),
)


@dataclass(frozen=True, eq=False, kw_only=True)
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
    ``prediction`` and ``answer`` (the first accepted answer) as strings;
    ``document_type`` (index into ``document_types``, ``""`` when not given);
    ``received_at`` (seconds since 1970-01-01T00:00Z) and ``review_seconds``, NaN where the record has none;
    ``signals``: a column per named signal of the predictions (NaN where a prediction lacks it).
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
    prediction: DeferredColumn = DeferredColumn()
    answer: DeferredColumn = DeferredColumn()
    document_types: tuple[str, ...]
    document_type: np.ndarray
    received_at: np.ndarray
    review_seconds: np.ndarray
    signals: dict[str, np.ndarray] = field(default_factory=dict)
    alpha: float = 0.25
    weight: float = 10.0
    threshold: float = 0.5

    answer_types = ANSWER_TYPES
    task: ClassVar[str] = "vqa"
    metric_name: ClassVar[str] = "anls"
    metric_label: ClassVar[str] = "ANLS"
    task_description: ClassVar[str] = "visual question answering: answers to questions on documents"
    sweep_columns: ClassVar[tuple[str, ...]] = ("anls", "accuracy", "smudge")
    fraction_columns: ClassVar[frozenset[str]] = frozenset(sweep_columns)
    count_columns: ClassVar[frozenset[str]] = frozenset()
    unit_noun: ClassVar[str] = "question"
    has_review_units: ClassVar[bool] = False
    field_rate_basis: ClassVar[str] = "questions"
    # the curated figures: internal counters (deviation sums) would puzzle a reader
    summary_labels: ClassVar[tuple[tuple[str, str], ...]] = (
        ("predictions", "predictions (what a policy routes)"), ("questions", "questions"),
        ("anls", "ANLS before review"), ("accuracy", "exact-match accuracy"), ("smudge", "SMuDGE before review"),
        ("grounding", "mean grounding"), ("alpha", "SMuDGE alpha"))
    options: ClassVar[tuple[str, ...]] = ("alpha",)
    evaluation_modules: ClassVar[tuple[str, ...]] = ("rpa_sim.evaluate.metrics.anls",
                                                     "rpa_sim.evaluate.metrics.evidence",
                                                     "rpa_sim.evaluate.metrics.smudge")
    has_smudge: ClassVar[bool] = True
    file_layout: ClassVar[FileLayout] = FileLayout(_FILE_COLUMNS, _QUESTION, ("alpha", "weight", "threshold"),
                                                   ("questions",), _QUESTION)

    def __len__(self) -> int:
        return len(self.confidence)

    # -- the OutcomeTable protocol ----------------------------------------------------------------

    @classmethod
    def evaluate(cls, records: Iterable[VQARecord], *, alpha: float = 0.25, weight: float = 10.0,
                 threshold: float = 0.5, normalization: Normalization = "page",
                 grounding: GroundingMode = "auto") -> VQAOutcomes:
        """:func:`evaluate_vqa`."""
        return evaluate_vqa(records, alpha=alpha, weight=weight, threshold=threshold, normalization=normalization,
                            grounding=grounding)

    def unit_ids(self) -> np.ndarray:
        """The questions' ids: each question is its own unit."""
        return self.question_ids

    @property
    def field_names(self) -> tuple[str, ...]:
        """The question types (``""`` for questions without one)."""
        return self.question_types

    @property
    def field_codes(self) -> np.ndarray:
        """Each question's type (index into :attr:`question_types`)."""
        return self.question_type

    @property
    def document_type_codes(self) -> np.ndarray:
        """Each question's document type."""
        return self.document_type

    def field_groupings(self) -> list[FieldGrouping]:
        """By question type (what the optimizer tunes), then by answer type: questions, errors and mean ANLS."""
        errors = self.errors()
        groupings = []
        for by, codes, names in (("question type", self.question_type, self.question_types),
                                 ("answer type", self.answer_type, self.answer_types)):
            count = np.bincount(codes, minlength=len(names))
            anls = np.bincount(codes, weights=self.anls, minlength=len(names))
            groupings.append(FieldGrouping(by, codes, tuple(names), {
                "predictions": count,
                "errors": np.bincount(codes[errors], minlength=len(names)),
                "anls": np.divide(anls, count, out=np.full(len(names), np.nan), where=count > 0)}))
        return groupings

    @property
    def review_units(self) -> None:
        """None: questions have no documents to escalate; each question is its own unit."""
        return None

    @property
    def unit_count(self) -> int:
        """The questions (each its own unit)."""
        return len(self)

    def missed_per_unit(self) -> np.ndarray:
        """Empty: there are no review units to add missed values to."""
        return np.zeros(0, dtype=np.int64)

    def errors(self) -> np.ndarray:
        """Whether each question is an error: its ANLS is below :data:`RIGHT_ANLS` (0.5, METRICS.md §7).

        Examples
        --------
        >>> from rpa_sim.records.models import VQARecord
        >>> records = [VQARecord.model_validate({"id": f"q{i}", "answers": [answer],
        ...            "prediction": {"answer": "abcd", "confidence": 0.6}})
        ...            for i, answer in enumerate(["abxy", "wxyz"])]
        >>> evaluate_vqa(records).errors().tolist()  # ANLS 0.5 and 0
        [False, True]
        """
        return self.anls < RIGHT_ANLS

    def review_values(self) -> ReviewValues:
        """A review replaces every answer short of ANLS 1 with the first accepted answer (METRICS.md §6).

        Examples
        --------
        >>> from rpa_sim.records.models import VQARecord
        >>> records = [VQARecord.model_validate({"id": f"q{i}", "answers": [answer],
        ...            "prediction": {"answer": "abcd", "confidence": 0.6}})
        ...            for i, answer in enumerate(["abcd", "abxy"])]
        >>> review = evaluate_vqa(records).review_values()
        >>> review.corrections.tolist(), review.changed.tolist(), review.breakable.tolist()
        (['abcd', 'abxy'], [False, True], [True, False])
        """
        return ReviewValues(ids=self.question_ids, values=self.prediction, corrections=self.answer,
                            changed=self.anls < 1.0, breakable=self.anls == 1.0)

    @property
    def score_title(self) -> str:
        return "Document VQA"

    def score_rows(self) -> ScoreRows:
        s = self.summary()
        return [("questions", s["questions"]), ("ANLS", s["anls"]), ("accuracy", s["accuracy"]),
                (f"SMuDGE (alpha {self.alpha:g})", s["smudge"]), ("match", s["match"]),
                ("grounding", s["grounding"]), ("evidence IoU", s["evidence_iou"]),
                ("absolute deviation", s["absolute_deviation"])]

    def replay_terms(self, *, miss: float | np.ndarray,
                     false_correction: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ANLS, accuracy, SMuDGE (0 without OCR) and errors, per question (METRICS.md §6).

        A reviewed question takes its ground truth (every score 1) unless the
        reviewer misses it (probability ``miss``: it keeps its scores); a
        reviewed question whose ANLS is 1 is broken (every score 0) with
        probability ``false_correction``. So a reviewed question is an error
        with probability ``false_correction`` if its ANLS is 1, ``miss`` if it
        is an error, 0 otherwise (``docs/errors.md``). Rates are numbers
        (expectations) or one 0/1 draw per question.
        """
        right = self.anls == 1.0
        smudge = self.smudge()
        has_smudge = ~np.isnan(smudge)
        smudge = np.nan_to_num(smudge, nan=0.0)
        wrong = self.errors()

        def reviewed_score(score: np.ndarray, counts: np.ndarray | bool = True) -> np.ndarray:
            value = np.where(right, 1.0 - false_correction, miss * score + (1.0 - miss))
            return np.where(counts, value, 0.0)

        accepted = np.vstack([self.anls, self.accuracy, smudge, wrong]).astype(np.float64)
        reviewed = np.vstack([reviewed_score(self.anls), reviewed_score(self.accuracy),
                              reviewed_score(smudge, has_smudge), np.where(right, false_correction, miss * wrong)])
        return accepted, reviewed

    def replay_figures(self, totals: np.ndarray, added: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Mean ANLS, accuracy and SMuDGE (over questions with OCR), and the expected errors.

        ``added`` is unused: questions have no review units. Means over no
        question are NaN.
        """
        n = len(self)
        valid = np.count_nonzero(~np.isnan(self.smudge()))
        undefined = np.full(len(totals), np.nan)
        return {"anls": totals[:, 0] / n if n else undefined,
                "accuracy": totals[:, 1] / n if n else undefined,
                "smudge": totals[:, 2] / valid if valid else undefined}, totals[:, 3]

    def target_costs(self, target: float, *, miss_rate: float,
                     false_correction_rate: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Mean ANLS >= ``target`` in expectation as a budget on the ANLS shortfall (``docs/optimize.md``).

        Accepted: the shortfall ``1 - s``. Reviewed: ``f`` when ``s = 1``, else
        ``m (1 - s)``. Budget: ``n (1 - target)``. The shortfall is not an error
        count (``docs/errors.md``): a question at ANLS 0.75 is right, yet short by 0.25.
        """
        score = self.anls
        shortfall = 1.0 - score
        reviewed = np.where(score == 1.0, false_correction_rate, miss_rate * shortfall)
        return shortfall, reviewed, len(self) * (1 - target)

    def smudge(self, *, alpha: float | None = None) -> np.ndarray:
        """Per-question SMuDGE composite at ``alpha`` (default: the table's), NaN without OCR."""
        from rpa_sim.evaluate.metrics.smudge import smudge_scores  # noqa: PLC0415

        return smudge_scores(self.match, self.smudge_grounding, alpha=self.alpha if alpha is None else alpha)

    def summary(self) -> dict[str, float | int | None]:
        """Corpus figures with the ``score --json`` keys of docs/formats.md.

        ``smudge`` and ``grounding`` average the questions that have OCR,
        ``evidence_iou`` those with ground-truth evidence; each is null when
        no question has what it needs.
        """
        deviation = self.absolute_deviation
        return {
            "questions": len(self),
            "anls": float(self.anls.mean()) if len(self) else None,
            "accuracy": float(self.accuracy.mean()) if len(self) else None,
            "smudge": mean_or_none(self.smudge()),
            "match": float(self.match.mean()) if len(self) else None,
            "grounding": mean_or_none(self.smudge_grounding),
            "alpha": self.alpha,
            "evidence_iou": mean_or_none(self.evidence_iou),
            "absolute_deviation": mean_or_none(deviation),
            "absolute_deviation_compared": int(np.count_nonzero(~np.isnan(deviation))),
        }


    def smudge_by_alpha(self, *, step: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Mean SMuDGE at ``alpha = 0, step, ..., 1`` over the questions with OCR; None when no question has OCR.

        Examples
        --------
        >>> from rpa_sim.records.models import VQARecord
        >>> record = VQARecord.model_validate({"id": "q1", "answers": ["12"],
        ...     "prediction": {"answer": "12", "confidence": 0.8}})
        >>> print(evaluate_vqa([record]).smudge_by_alpha(step=0.5))  # no OCR, no grounding
        None
        """
        keep = ~(np.isnan(self.match) | np.isnan(self.smudge_grounding))  # questions without OCR have no grounding
        if not keep.any():
            return None
        from rpa_sim.evaluate.metrics.smudge import alpha_curve  # noqa: PLC0415

        return alpha_curve(self.match[keep], self.smudge_grounding[keep], step=step)

    def mean_smudge(self, *, alpha: float) -> float | None:
        """Mean SMuDGE at ``alpha`` over the questions with OCR; None when no question has OCR."""
        values = self.smudge(alpha=alpha)
        values = values[~np.isnan(values)]
        return float(values.mean()) if len(values) else None

    # -- tables of parts, and files -----------------------------------------------------------------

    @classmethod
    def concat(cls, tables: list[VQAOutcomes]) -> VQAOutcomes:
        """Tables joined in order: question types and document types merged in order of first appearance."""
        types, recoded = merged_names([table.question_types for table in tables])
        document_types, type_codes = merged_names([table.document_types for table in tables])
        return cls(**concatenated(tables, {
            "question_types": types,
            "question_type": np.concatenate([codes[table.question_type] for table, codes in zip(tables, recoded)]),
            "document_types": document_types,
            "document_type": np.concatenate([codes[table.document_type]
                                             for table, codes in zip(tables, type_codes)]).astype(np.int32),
            "signals": merged_signals(tables),
        }))

    def evaluation_settings(self) -> dict[str, str | float]:
        return {"alpha": float(self.alpha), "weight": float(self.weight), "threshold": float(self.threshold)}

    @classmethod
    def check_settings(cls, settings: Mapping[str, str | float]) -> None:
        """Every setting is a finite number."""
        if not all(isinstance(value, float) and math.isfinite(value) for value in settings.values()):
            raise ValueError(f"settings of a vqa table must be finite numbers, got {shown(settings, quote=QUOTE)}")

    def row_counts(self) -> dict[str, int]:
        """A row per question."""
        return {"question": len(self)}

    def corpus_counts(self) -> dict[str, int]:
        return {"questions": len(self)}

    def to_arrow(self) -> dict[str, pa.Array]:
        """A row per question; NaN scores are written as null."""
        arrays = {"question_id": strings(self.question_ids),
                  "question_type": named(self.question_type, self.question_types),
                  "answer_type": named(self.answer_type.astype(np.int32), ANSWER_TYPES),
                  "prediction": strings(self.prediction), "answer": strings(self.answer),
                  "document_type": named(self.document_type, self.document_types)}
        for column in _FILE_COLUMNS:
            if column.type == "double":
                arrays[column.name] = numbers(getattr(self, column.name))
        for name, values in self.signals.items():
            arrays[SIGNAL_PREFIX + name] = numbers(values)
        return arrays

    @classmethod
    def from_arrow(cls, rows: FileRows) -> VQAOutcomes:
        """The table of a file's rows; ids are unique."""
        facts = rows.facts
        settings = facts.settings
        # the number columns, read (and checked) in the file's order
        scores: dict[str, Any] = {column.name: rows.optional_numbers(column.name, "question")
                                  for column in _FILE_COLUMNS if column.type == "double"}
        document_types, document_type = rows.document_types("question")
        return cls(
            question_ids=rows.unique_ids("question_id", "question"),
            question_types=facts.fields,
            question_type=rows.codes("question_type", facts.fields),
            answer_type=rows.codes("answer_type", ANSWER_TYPES).astype(np.int8),
            prediction=rows.deferred_strings("prediction", "question"),
            answer=rows.deferred_strings("answer", "question"),
            document_types=document_types,
            document_type=document_type,
            alpha=float(settings["alpha"]), weight=float(settings["weight"]), threshold=float(settings["threshold"]),
            signals=rows.signals("question"),
            **scores,
        )


def _boxes(evidence: Iterable[Any]) -> list[tuple[int, Any]]:
    # (page, bbox) pairs: what evidence_iou reads from Evidence models and from the fast path's structs alike
    return [(item.page, item.bbox) for item in evidence]


def evaluate_vqa(records: Iterable[VQARecord], *, alpha: float = 0.25, weight: float = 10.0,
                 threshold: float = 0.5, normalization: Normalization = "page",
                 grounding: GroundingMode = "auto") -> VQAOutcomes:
    """Evaluate VQA records into an outcome table.

    Parameters
    ----------
    records : iterable of VQARecord
        Each with answers and a prediction (streamed; consumed once); the fast
        path's records (:func:`rpa_sim.records.models.decode_fast`) as well.
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
    >>> from rpa_sim.records.models import VQARecord
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
    from rpa_sim.evaluate.metrics.anls import absolute_deviation, accuracy_scores, anls_scores  # noqa: PLC0415
    from rpa_sim.evaluate.metrics.evidence import evidence_iou  # noqa: PLC0415
    from rpa_sim.evaluate.metrics.smudge import evaluate_question  # noqa: PLC0415

    ids, answers, predictions = [], [], []
    question_types, document_types = Vocabulary(), Vocabulary()
    kind_code = {name: code for code, name in enumerate(ANSWER_TYPES)}
    qtype, atype, dtype = array("i"), array("b"), array("i")
    received_at, review_seconds = array("d"), array("d")
    confidence, routing, match, smudge_g, distance, iou = (array("d") for _ in range(6))
    signals = SignalColumns()
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
        dtype.append(document_types.code(record.document_type or ""))
        received_at.append(epoch_seconds(record.received_at))
        review_seconds.append(math.nan if record.review_seconds is None else record.review_seconds)
        atype.append(kind_code[result.answer_type])
        confidence.append(math.nan if predicted.confidence is None else predicted.confidence)
        if predicted.signals is None:
            signals.pad(1)
        else:
            signals.add([predicted.signals])
        given = predicted.grounding if predicted.grounding is not None and grounding != "compute" else np.nan
        routing.append(result.locatability if np.isnan(given) and grounding != "given" else given)
        match.append(result.match)
        smudge_g.append(result.grounding)
        distance.append(result.distance)
        iou.append(evidence_iou(_boxes(record.evidence), None if predicted.evidence is None else
                                _boxes(predicted.evidence)) if record.evidence else np.nan)
    deviation = np.full(len(ids), np.nan)
    for i, (truth, predicted_answer) in enumerate(zip(answers, predictions)):
        compared = absolute_deviation([truth], [predicted_answer])
        if compared.mean is not None:
            deviation[i] = compared.mean
    return VQAOutcomes(
        question_ids=np.array(ids, dtype=STRINGS),
        question_types=question_types.names(),
        question_type=packed(qtype, np.int32),
        answer_type=packed(atype, np.int8),
        confidence=packed(confidence),
        grounding=packed(routing),
        anls=anls_scores(answers, predictions, threshold=threshold) if ids else np.zeros(0),
        accuracy=accuracy_scores(answers, predictions) if ids else np.zeros(0),
        match=packed(match),
        smudge_grounding=packed(smudge_g),
        distance=packed(distance),
        evidence_iou=packed(iou),
        absolute_deviation=deviation,
        prediction=np.array(predictions, dtype=STRINGS),
        answer=np.array([a[0] for a in answers], dtype=STRINGS),
        document_types=document_types.names(),
        document_type=packed(dtype, np.int32),
        received_at=packed(received_at),
        review_seconds=packed(review_seconds),
        signals=signals.columns(),
        alpha=alpha,
        weight=weight,
        threshold=threshold,
    )

"""Stage 1, evaluate: records -> per-document metrics -> an outcome table of numpy columns.

The outcome table has one row per prediction unit (a predicted KIE entity, or
a VQA question) with everything routing and sweeping need: document, key or
type, confidence, grounding, outcome label and scores. Stage 2 (policies,
reviewers, sweeps) works on these columns alone, never on the records.

Every table satisfies :class:`OutcomeTable`: what differs between tasks (the
metric, the fields, the review units, what an error is, what review does to a
row) is a member of the table, so stage 2 never asks which task it serves.
A new task is a new class satisfying the protocol, listed in :data:`OUTCOME_TABLES`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from rpa_sim.evaluate.metrics.kieval import OUTCOME_NAMES, KIEvalCounts, ValueMatch, evaluate_document

if TYPE_CHECKING:
    from datetime import datetime

    # evaluation's metrics (grounding, ANLS, SMuDGE; rapidfuzz underneath) are imported by the functions that
    # evaluate: stage 2 on a table read from a file never needs them
    from rpa_sim.evaluate.metrics.smudge import Normalization

    # the records' models (pydantic) are only named here: reading an outcome table file never imports them
    from rpa_sim.records.models import Document, KIERecord, VQARecord

__all__ = ["OutcomeTable", "FieldGrouping", "ReviewValues", "KIEOutcomes", "VQAOutcomes", "OUTCOME_TABLES", "table_type",
           "concat_tables", "evaluate_kie", "evaluate_vqa", "GroundingMode", "RIGHT_ANLS"]

GroundingMode = Literal["auto", "given", "compute"]
#: :data:`rpa_sim.evaluate.metrics.smudge.AnswerType`'s values, in its order (tested)
ANSWER_TYPES: tuple[str, ...] = ("numeric", "textual", "hybrid")
#: A question is right iff its ANLS is at least this (METRICS.md §7); below it, it is an error.
RIGHT_ANLS = 0.5
_STRINGS = np.dtypes.StringDType()
ScoreRows = list[tuple[str, float | int | None]]


class DeferredColumn:
    """A text column that may be given as a loader: a zero-argument callable, called on first access.

    Stage 2 reads numbers, not the values' text, so a table read from a file
    (:mod:`rpa_sim.evaluate.tablefile`) converts its text columns only when something
    asks for them (a production log, an export, a file written again). A
    dataclass field whose default is this descriptor has no default
    (``__get__`` on the class raises AttributeError), and the dataclass's
    ``__init__`` stores through :meth:`__set__`, frozen or not.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Texts:
    ...     text: np.ndarray = DeferredColumn()
    >>> Texts(lambda: np.array(["a", "b"])).text.tolist(), Texts(np.array(["c"])).text.tolist()
    (['a', 'b'], ['c'])
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}_column"

    def __get__(self, instance: Any, owner: type | None = None) -> np.ndarray:
        if instance is None:
            raise AttributeError(self.slot)  # no default: the field stays required
        value = instance.__dict__[self.slot]
        if callable(value):
            value = value()
            instance.__dict__[self.slot] = value
        return value

    def __set__(self, instance: Any, value: np.ndarray | Any) -> None:
        instance.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class FieldGrouping:
    """One way of grouping a table's rows into fields, with the per-field figures that do not depend on τ.

    Attributes
    ----------
    by : str
        What the fields are, in words (``"key"``, ``"question type"``, ...).
    codes : ndarray of int
        Each row's field, an index into ``names``.
    names : tuple of str
        The field names.
    figures : dict of str to ndarray
        Per field (aligned with ``names``): ``predictions`` (rows) and the task's
        error counts; integer arrays are counts, float arrays means (NaN for an empty field).
    """

    by: str
    codes: np.ndarray
    names: tuple[str, ...]
    figures: dict[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class ReviewValues:
    """What a review of each row yields, whatever the task: what a production log records (``docs/monitoring.md``).

    Attributes
    ----------
    ids : ndarray of str
        Each row's document id (KIE) or question id (VQA).
    values : ndarray of str
        The value as the model gave it.
    corrections : ndarray of str
        The value a careful reviewer writes in its place (``""``: the value is removed).
    changed : ndarray of bool
        The rows such a reviewer changes (a reviewer's miss leaves them as they are).
    breakable : ndarray of bool
        The rows a reviewer's false correction can break (those already right).
    """

    ids: np.ndarray
    values: np.ndarray
    corrections: np.ndarray
    changed: np.ndarray
    breakable: np.ndarray


@runtime_checkable
class OutcomeTable(Protocol):
    """What every outcome table offers stage 2, whatever its task (the table of ``docs/outcomes.md``).

    Class attributes: ``task`` (``"kie"``, ``"vqa"``), ``metric_name`` (the
    post-correction metric's column), ``metric_label`` (its display name),
    ``task_description`` (the task in words) and ``sweep_columns`` (the
    post-correction columns a sweep reports after the common ones).
    Per row: ``confidence`` and ``grounding`` (NaN when unknown). ``document_types``:
    the records' ``document_type`` names in order of first appearance (``""``: not given).
    """

    task: ClassVar[str]
    metric_name: ClassVar[str]
    metric_label: ClassVar[str]
    task_description: ClassVar[str]
    sweep_columns: ClassVar[tuple[str, ...]]
    confidence: np.ndarray
    grounding: np.ndarray
    document_types: tuple[str, ...]

    def __len__(self) -> int:
        """The rows: prediction units a policy can route."""
        ...

    @property
    def document_type_codes(self) -> np.ndarray:
        """Each row's document type, an index into :attr:`document_types`."""
        ...

    @property
    def field_names(self) -> tuple[str, ...]:
        """The fields a policy's ``fields`` thresholds and the per-field optimizer name."""
        ...

    @property
    def field_codes(self) -> np.ndarray:
        """Each row's field, an index into :attr:`field_names`."""
        ...

    def field_groupings(self) -> list[FieldGrouping]:
        """The groupings the dashboard shows; the first is :attr:`field_names` / :attr:`field_codes`."""
        ...

    @property
    def review_units(self) -> np.ndarray | None:
        """Each row's review unit (escalated and certified together), or None: every row is its own unit."""
        ...

    @property
    def unit_count(self) -> int:
        """How many review units the data has (units without rows included)."""
        ...

    def missed_per_unit(self) -> np.ndarray:
        """Per review unit, the missed values a whole-unit review can add (empty without units)."""
        ...

    def errors(self) -> np.ndarray:
        """Whether each row is an error (``docs/errors.md``)."""
        ...

    def summary(self) -> dict[str, Any]:
        """The corpus figures: the ``score --json`` payload of FORMATS.md."""
        ...

    def review_values(self) -> ReviewValues:
        """Per row: its id, its value, what review writes in its place and which rows review changes or can break."""
        ...

    @property
    def score_title(self) -> str:
        """The first line of ``rpa-sim score``'s text report."""
        ...

    def score_rows(self) -> ScoreRows:
        """The rows (label, value) of ``rpa-sim score``'s text report; None for an undefined figure."""
        ...

    def replay_terms(self, *, miss: float | np.ndarray,
                     false_correction: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per quantity (row) and table row (column): its value when accepted and its expectation when reviewed."""
        ...

    def replay_figures(self, totals: np.ndarray, added: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The :attr:`sweep_columns` and the residual errors, from summed replay quantities."""
        ...

    def target_costs(self, target: float, *, miss_rate: float,
                     false_correction_rate: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Per-row costs when accepted and when reviewed, and the budget within which the metric reaches ``target``."""
        ...


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
    (columns named by :meth:`KIEvalCounts.field_names`; see :meth:`document_count`),
    and ``document_type`` (index into ``document_types``, ``""`` when not given);
    ``received_at`` (seconds since 1970-01-01T00:00Z) and ``review_seconds``, NaN where the record has none.
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
    value: np.ndarray = DeferredColumn()
    correction: np.ndarray = DeferredColumn()
    addition_document: np.ndarray
    addition_key: np.ndarray
    document_counts: np.ndarray
    document_types: tuple[str, ...]
    document_type: np.ndarray
    received_at: np.ndarray
    review_seconds: np.ndarray
    counts: KIEvalCounts
    value_match: ValueMatch = "exact"

    outcome_names = OUTCOME_NAMES
    task: ClassVar[str] = "kie"
    metric_name: ClassVar[str] = "kieval_aligned"
    metric_label: ClassVar[str] = "KIEval_Aligned^τ"
    task_description: ClassVar[str] = "key information extraction: fields read from documents"
    sweep_columns: ClassVar[tuple[str, ...]] = ("kieval_aligned", "residual_substitutions", "residual_deletions",
                                                "additions")

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

    # -- the OutcomeTable protocol ----------------------------------------------------------------

    @property
    def field_names(self) -> tuple[str, ...]:
        """The keys."""
        return self.keys

    @property
    def field_codes(self) -> np.ndarray:
        """Each entity's key (index into :attr:`keys`)."""
        return self.key

    @property
    def document_type_codes(self) -> np.ndarray:
        """Each entity's document type: its document's."""
        return self.document_type[self.document]

    def field_groupings(self) -> list[FieldGrouping]:
        """By key: predictions, substitutions, deletions and additions (missed values) per key."""
        n = len(self.keys)
        return [FieldGrouping("key", self.key, self.keys, {
            "predictions": np.bincount(self.key, minlength=n),
            "substitutions": np.bincount(self.key[self.outcome == 1], minlength=n),
            "deletions": np.bincount(self.key[self.outcome == 2], minlength=n),
            "additions": np.bincount(self.addition_key, minlength=n)})]

    @property
    def review_units(self) -> np.ndarray:
        """The documents: escalation reviews a whole document, certification keeps one in one split."""
        return self.document

    @property
    def unit_count(self) -> int:
        """The documents, those without a predicted entity included."""
        return self.documents

    def missed_per_unit(self) -> np.ndarray:
        """Per document, its additions: what a whole-document review can add."""
        return self.document_count("additions")

    def errors(self) -> np.ndarray:
        """Whether each entity is an error: a substitution or a deletion (additions have no row).

        Examples
        --------
        >>> from rpa_sim.records.models import KIERecord
        >>> record = KIERecord.model_validate({"id": "r1",
        ...     "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"}]},
        ...     "prediction": {"entities": [{"key": "total", "value": "10.0", "confidence": 0.4},
        ...                                 {"key": "date", "value": "1.1", "confidence": 0.9}]}})
        >>> evaluate_kie([record]).errors().tolist()
        [True, False]
        """
        return self.outcome != 0

    def review_values(self) -> ReviewValues:
        """A review writes the ground-truth value of a substitution and removes a deletion's (METRICS.md §3).

        Examples
        --------
        >>> from rpa_sim.records.models import KIERecord
        >>> record = KIERecord.model_validate({"id": "r1",
        ...     "ground_truth": {"entities": [{"key": "total", "value": "10.00"}]},
        ...     "prediction": {"entities": [{"key": "total", "value": "10.0", "confidence": 0.4},
        ...                                 {"key": "date", "value": "1.1", "confidence": 0.9}]}})
        >>> review = evaluate_kie([record]).review_values()
        >>> review.ids.tolist(), review.corrections.tolist(), review.changed.tolist()
        (['r1', 'r1'], ['10.00', ''], [True, True])
        """
        return ReviewValues(ids=self.document_ids[self.document], values=self.value, corrections=self.correction,
                            changed=self.outcome != 0, breakable=self.outcome == 0)

    def summary(self) -> dict[str, Any]:
        """The corpus KIEval counts and ratios (``score --json``) and how values were compared."""
        return {**self.counts.to_dict(), "value_match": self.value_match}

    @property
    def score_title(self) -> str:
        return f"KIE, values compared {self.value_match}ly"

    def score_rows(self) -> ScoreRows:
        c = self.counts
        rows: ScoreRows = [
            ("documents", c.documents), ("entities (ground truth)", c.entities_gt),
            ("entities (predicted)", c.entities_pred), ("correct (TP)", c.tp),
            ("substitutions", c.substitutions), ("additions", c.additions), ("deletions", c.deletions),
            ("KIEval entity F1", c.entity_f1), ("KIEval group F1", c.group_f1),
            ("KIEval_Aligned", c.kieval_aligned), ("group-level aligned", c.group_aligned),
            ("entity F1, grouping-blind", c.grouping_blind_entity_f1),
        ]
        if c.ignored_empty:
            rows.append(("ignored (empty value)", c.ignored_empty))
        return rows

    def replay_terms(self, *, miss: float | np.ndarray,
                     false_correction: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Substitutions left, deletions left and predictions kept (``N(PR*)``), per entity (METRICS.md §3).

        A reviewed substitution or deletion stays with probability ``miss``; a
        reviewed correct value becomes a substitution with probability
        ``false_correction``; a deletion fixed by review is removed. Both rates
        are numbers (expectations) or one 0/1 draw per entity.
        """
        substitution = self.outcome == 1
        deletion = self.outcome == 2
        accepted = np.vstack([substitution, deletion, np.ones(len(self))]).astype(np.float64)
        reviewed = np.vstack([np.where(substitution, miss, np.where(self.outcome == 0, false_correction, 0.0)),
                              np.where(deletion, miss, 0.0),
                              np.where(deletion, miss, 1.0)])
        return accepted, reviewed

    def replay_figures(self, totals: np.ndarray, added: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """KIEval_Aligned^τ and the residual counts; residual errors are substitutions, deletions and additions.

        ``totals`` holds the summed :meth:`replay_terms` (one row per threshold),
        ``added`` the missed values that document reviews added. Undefined
        ratios (no prediction kept, nothing missed) are NaN.
        """
        substitutions, deletions, kept = totals[:, 0], totals[:, 1], totals[:, 2]
        additions = self.counts.additions - added
        errors = substitutions + deletions + additions
        # N(PR*): the predictions kept, plus the missing values a document review added
        denominator = kept + added + additions
        with np.errstate(invalid="ignore", divide="ignore"):
            # (N(PR*) + Add - errors) / (N(PR*) + Add): at τ = 0 exactly TP / (TP + errors)
            aligned = np.where(denominator > 0, (denominator - errors) / denominator, np.nan)
        return {"kieval_aligned": aligned, "residual_substitutions": substitutions,
                "residual_deletions": deletions, "additions": additions}, errors

    def target_costs(self, target: float, *, miss_rate: float,
                     false_correction_rate: float) -> tuple[np.ndarray, np.ndarray, float]:
        """KIEval_Aligned^τ >= ``target`` in expectation as a budget (derivation in ``docs/optimize.md``).

        Accepted: 1 per substitution or deletion. Reviewed: ``f`` per correct
        value, ``m`` per substitution, ``m + (1 - target)(1 - m)`` per deletion.
        Budget: ``(1 - target)(|PR| + Add) - Add``.
        """
        m, f = miss_rate, false_correction_rate
        outcome = self.outcome
        accepted = np.where(outcome == 0, 0.0, 1.0)
        reviewed = np.select([outcome == 0, outcome == 1], [f, m], default=m + (1 - target) * (1 - m))
        additions = self.counts.additions
        return accepted, reviewed, (1 - target) * (len(self) + additions) - additions


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
        self.document_types = _Vocabulary()
        self.document_type = array("i")
        self.received_at, self.review_seconds = array("d"), array("d")


def _grounding(values: list[str], given: list[float | None], document: Document | None,
               mode: GroundingMode) -> list[float]:
    if mode == "given" or document is None:
        return [math.nan if g is None or mode == "compute" else g for g in given]
    from rpa_sim.evaluate.grounding import locatability_many  # noqa: PLC0415

    missing = [i for i, g in enumerate(given) if g is None or mode == "compute"]
    grounding = list(given)
    for i, score in zip(missing, locatability_many([values[i] for i in missing], document).tolist()):
        grounding[i] = score
    return grounding


def evaluate_kie(records: Iterable[KIERecord], *, value_match: ValueMatch = "exact",
                 grounding: GroundingMode = "auto") -> KIEOutcomes:
    """Evaluate KIE records into an outcome table.

    Parameters
    ----------
    records : iterable of KIERecord
        Each with both a ground truth and a prediction (streamed; consumed
        once); the fast path's records (:func:`rpa_sim.records.models.decode_fast`) as well.
    value_match : {"exact", "normalized"}, default="exact"
        How values are compared (see :func:`rpa_sim.evaluate.metrics.kieval.evaluate_document`).
    grounding : {"auto", "given", "compute"}, default="auto"
        ``"given"`` uses the records' ``grounding`` (NaN where absent);
        ``"compute"`` locates every predicted value in the record's OCR
        (best-span NLS, METRICS.md §4); ``"auto"`` uses the given value and
        computes only the missing ones when the record has a document.

    Examples
    --------
    >>> from rpa_sim.records.models import KIERecord
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
        # a null confidence (allowed by a policy's missing_confidence) is unknown: NaN, as grounding
        columns.confidence.extend(result.confidences if None not in result.confidences
                                  else [math.nan if c is None else c for c in result.confidences])
        columns.grounding.extend(_grounding(result.values, result.groundings, record.document, grounding))
        columns.outcome.extend(result.labels.tolist())
        columns.values.extend(result.values)
        columns.corrections.extend(c if c is not None else "" for c in result.corrections)
        columns.addition_document.extend([index] * len(result.additions))
        columns.addition_key.extend(columns.keys.code(a.key) for a in result.additions)
        columns.document_counts.extend(result.counts.as_tuple())
        columns.document_type.append(columns.document_types.code(record.document_type or ""))
        columns.received_at.append(_epoch_seconds(record.received_at))
        columns.review_seconds.append(math.nan if record.review_seconds is None else record.review_seconds)
    return _finish(columns, value_match)


def _finish(c: _KIEColumns, value_match: ValueMatch) -> KIEOutcomes:
    counts = _column(c.document_counts, np.int64).reshape(-1, len(KIEvalCounts.field_names()))
    outcome = _column(c.outcome, np.int8)
    value = np.array(c.values, dtype=_STRINGS)
    correction = np.array(c.corrections, dtype=_STRINGS)
    similarity = np.where(outcome == 0, 1.0, 0.0)
    substituted = np.flatnonzero(outcome == 1)
    if len(substituted):
        from rpa_sim.evaluate.metrics.text import nls_pairs  # noqa: PLC0415

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
        document_types=c.document_types.names(),
        document_type=_column(c.document_type, np.int32),
        received_at=_column(c.received_at),
        review_seconds=_column(c.review_seconds),
        counts=KIEvalCounts(*(int(total) for total in counts.sum(axis=0))),
        value_match=value_match,
    )


def _epoch_seconds(moment: datetime | None) -> float:
    """Seconds since 1970-01-01T00:00:00Z; NaN when unknown."""
    return math.nan if moment is None else moment.timestamp()


def _mean_or_none(values: np.ndarray) -> float | None:
    known = values[~np.isnan(values)]
    if not len(known):
        return None
    with np.errstate(over="ignore"):
        mean = float(known.mean())
    if math.isinf(mean) and np.isfinite(known).all():
        # the sum of huge deviations (answers near 1e308) overflows where their mean does not
        mean = float(np.sum(known / len(known)))
    return mean


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
    ``prediction`` and ``answer`` (the first accepted answer) as strings;
    ``document_type`` (index into ``document_types``, ``""`` when not given);
    ``received_at`` (seconds since 1970-01-01T00:00Z) and ``review_seconds``, NaN where the record has none.
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
    prediction: np.ndarray = DeferredColumn()
    answer: np.ndarray = DeferredColumn()
    document_types: tuple[str, ...]
    document_type: np.ndarray
    received_at: np.ndarray
    review_seconds: np.ndarray
    alpha: float = 0.25
    weight: float = 10.0
    threshold: float = 0.5

    answer_types = ANSWER_TYPES
    task: ClassVar[str] = "vqa"
    metric_name: ClassVar[str] = "anls"
    metric_label: ClassVar[str] = "ANLS"
    task_description: ClassVar[str] = "visual question answering: answers to questions on documents"
    sweep_columns: ClassVar[tuple[str, ...]] = ("anls", "accuracy", "smudge")

    def __len__(self) -> int:
        return len(self.confidence)

    # -- the OutcomeTable protocol ----------------------------------------------------------------

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


OUTCOME_TABLES: dict[str, type[OutcomeTable]] = {table.task: table for table in (KIEOutcomes, VQAOutcomes)}
"""The outcome-table class of each task: the one place that lists the tasks."""


def table_type(task: str) -> type[OutcomeTable]:
    """The outcome-table class of ``task``, for what a task's class knows without a table (e.g. its columns).

    Examples
    --------
    >>> table_type("vqa").metric_name, table_type("kie").metric_label
    ('anls', 'KIEval_Aligned^τ')
    """
    if task not in OUTCOME_TABLES:
        raise ValueError(f"task must be one of {tuple(OUTCOME_TABLES)}, got {task!r}")
    return OUTCOME_TABLES[task]


def concat_tables(tables: Iterable[KIEOutcomes] | Iterable[VQAOutcomes]) -> KIEOutcomes | VQAOutcomes:
    """One outcome table of several, in order: exactly the table of their records evaluated one after the other.

    Rows and documents keep their order; KIE document indices are re-based;
    keys (question types) are merged in order of first appearance, as
    evaluation numbers them; the corpus counts add. This is how the tables of
    the parts of a data set (files, shards) make the table of the whole.

    Parameters
    ----------
    tables : iterable of KIEOutcomes, or of VQAOutcomes
        At least one table, all of one task and evaluated with the same settings.

    Raises
    ------
    ValueError
        When there is no table, when the tables are of several tasks, or
        when their settings (``value_match``; ``alpha``, ``weight``, ``threshold``) differ.

    Examples
    --------
    >>> from rpa_sim.records.models import VQARecord
    >>> records = [VQARecord.model_validate({"id": f"q{i}", "answers": ["12"], "question_type": kind,
    ...            "prediction": {"answer": "12", "confidence": 0.5}}) for i, kind in enumerate("aba")]
    >>> whole = concat_tables([evaluate_vqa(records[:1]), evaluate_vqa(records[1:])])
    >>> whole.question_types, whole.question_type.tolist(), whole.question_ids.tolist()
    (('a', 'b'), [0, 1, 0], ['q0', 'q1', 'q2'])
    """
    tables = list(tables)
    if not tables:
        raise ValueError("concat_tables needs at least one table, got none")
    tasks = [table.task for table in tables]
    if len({type(table) for table in tables}) > 1:
        raise ValueError(f"tables must be of one task, got {tasks}")
    first = tables[0]
    if isinstance(first, KIEOutcomes):
        keys, recoded = _merged_names([table.keys for table in tables])
        offsets = np.cumsum([0, *(table.documents for table in tables)])[:-1]
        merged: dict[str, Any] = {
            "keys": keys,
            "key": np.concatenate([codes[table.key] for table, codes in zip(tables, recoded)]),
            "addition_key": np.concatenate([codes[table.addition_key] for table, codes in zip(tables, recoded)]),
            "document": np.concatenate([table.document + offset for table, offset in zip(tables, offsets)]
                                       ).astype(np.int32),
            "addition_document": np.concatenate([table.addition_document + offset
                                                 for table, offset in zip(tables, offsets)]).astype(np.int32),
            "counts": sum((table.counts for table in tables), KIEvalCounts()),
        }
    else:
        types, recoded = _merged_names([table.question_types for table in tables])
        merged = {"question_types": types,
                  "question_type": np.concatenate([codes[table.question_type]
                                                   for table, codes in zip(tables, recoded)])}
    document_types, recoded = _merged_names([table.document_types for table in tables])
    merged.update(document_types=document_types, document_type=np.concatenate(
        [codes[table.document_type] for table, codes in zip(tables, recoded)]).astype(np.int32))
    return type(first)(**_concatenated(tables, merged))


def _merged_names(vocabularies: list[tuple[str, ...]]) -> tuple[tuple[str, ...], list[np.ndarray]]:
    """Several vocabularies' names in order of first appearance, and each one's codes in the merged vocabulary."""
    merged = _Vocabulary()
    recoded = [np.array([merged.code(name) for name in names], dtype=np.int32) for names in vocabularies]
    return merged.names(), recoded


def _concatenated(tables: list[Any], merged: dict[str, Any]) -> dict[str, Any]:
    """The fields of the tables' concatenation: ``merged`` as given, other arrays joined, settings shared."""
    joined: dict[str, Any] = {}
    for field in fields(tables[0]):
        values = [getattr(table, field.name) for table in tables]
        if field.name in merged:
            joined[field.name] = merged[field.name]
        elif isinstance(values[0], np.ndarray):
            joined[field.name] = np.concatenate(values)
        elif any(value != values[0] for value in values):
            raise ValueError(f"tables must be evaluated with the same {field.name}, got {values}")
        else:
            joined[field.name] = values[0]
    return joined


def _boxes(evidence: Iterable[Any] | None) -> list[tuple[int, Any]] | None:
    # (page, bbox) pairs: what evidence_iou reads from Evidence models and from the fast path's structs alike
    return None if evidence is None else [(item.page, item.bbox) for item in evidence]


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
    question_types, document_types = _Vocabulary(), _Vocabulary()
    kind_code = {name: code for code, name in enumerate(ANSWER_TYPES)}
    qtype, atype, dtype = array("i"), array("b"), array("i")
    received_at, review_seconds = array("d"), array("d")
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
        dtype.append(document_types.code(record.document_type or ""))
        received_at.append(_epoch_seconds(record.received_at))
        review_seconds.append(math.nan if record.review_seconds is None else record.review_seconds)
        atype.append(kind_code[result.answer_type])
        confidence.append(math.nan if predicted.confidence is None else predicted.confidence)
        given = predicted.grounding if predicted.grounding is not None and grounding != "compute" else np.nan
        routing.append(result.locatability if np.isnan(given) and grounding != "given" else given)
        match.append(result.match)
        smudge_g.append(result.grounding)
        distance.append(result.distance)
        iou.append(evidence_iou(_boxes(record.evidence), _boxes(predicted.evidence)) if record.evidence else np.nan)
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
        document_types=document_types.names(),
        document_type=_column(dtype, np.int32),
        received_at=_column(received_at),
        review_seconds=_column(review_seconds),
        alpha=alpha,
        weight=weight,
        threshold=threshold,
    )

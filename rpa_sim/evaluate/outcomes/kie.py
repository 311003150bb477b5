"""The KIE outcome table: one row per predicted entity, plus the missed entities, and its evaluation.

:func:`evaluate_kie` (also :meth:`KIEOutcomes.evaluate`) turns KIE records
into a :class:`KIEOutcomes`, which satisfies
:class:`~rpa_sim.evaluate.outcomes.protocol.OutcomeTable`: every task fact of
key information extraction (KIEval_Aligned, keys as fields, documents as
review units, its file columns) is a member here.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from rpa_sim.common.errors import shown
from rpa_sim.evaluate.metrics.kieval_counts import OUTCOME_NAMES, KIEvalCounts, ValueMatch
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
    spread,
    strings,
    whole_numbers,
)
from rpa_sim.evaluate.outcomes.columns import (
    STRINGS,
    DeferredColumn,
    SignalColumns,
    Vocabulary,
    concatenated,
    epoch_seconds,
    merged_names,
    merged_signals,
    packed,
)
from rpa_sim.evaluate.outcomes.protocol import FieldGrouping, GroundingMode, ReviewValues, ScoreRows

if TYPE_CHECKING:
    import pyarrow as pa

    from rpa_sim.evaluate.metrics.kieval_batch import BatchOutcome

    # the records' models (pydantic) are only named here: reading an outcome table file never imports them
    from rpa_sim.records.models import KIERecord

__all__ = ["KIEOutcomes", "evaluate_kie", "KIE_KINDS", "KIE_OUTCOMES", "DOCUMENT_COUNTS"]

#: The kinds of KIE rows, in the order they come in a file.
KIE_KINDS = ("document", "predicted", "missed")
#: A KIE row's ``outcome`` in a file: the KIEval label of a predicted entity, ``addition`` for a missed one.
KIE_OUTCOMES = (*OUTCOME_NAMES, "addition")
#: The per-document KIEval counts that are file columns; ``documents`` is 1 per document row, so it is the row.
DOCUMENT_COUNTS = tuple(name for name in KIEvalCounts.field_names() if name != "documents")
_ENTITY_ROWS = ("predicted", "missed")
_FILE_COLUMNS = (
    FileColumn("kind", "string", KIE_KINDS, dictionary=True, coded=True),
    FileColumn("document", "int32", KIE_KINDS),
    FileColumn("document_id", "string", KIE_KINDS, dictionary=True, coded=True),
    FileColumn("key", "string", _ENTITY_ROWS, dictionary=True, coded=True),
    FileColumn("group", "int32", ("predicted",), bounds=AT_LEAST_0),
    FileColumn("confidence", "double", ("predicted",), bounds=UNIT),
    FileColumn("grounding", "double", ("predicted",), nullable=True, bounds=UNIT),
    FileColumn("outcome", "string", _ENTITY_ROWS, dictionary=True, coded=True),
    FileColumn("similarity", "double", ("predicted",), bounds=UNIT),
    FileColumn("value", "string", ("predicted",), dictionary=True),
    FileColumn("correction", "string", ("predicted",), dictionary=True),
    *(FileColumn(name, "int64", ("document",), bounds=AT_LEAST_0) for name in DOCUMENT_COUNTS),
    FileColumn("document_type", "string", ("document",), dictionary=True, optional=True),
    FileColumn("received_at", "double", ("document",), nullable=True, optional=True),
    FileColumn("review_seconds", "double", ("document",), nullable=True, optional=True, bounds=FINITE_AT_LEAST_0),
)
_VALUE_MATCHES = ("exact", "normalized")


@dataclass(frozen=True, eq=False, kw_only=True)
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
    ``signals``: a column per named signal of the predicted entities (NaN where an entity lacks it).
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
    value: DeferredColumn = DeferredColumn()
    correction: DeferredColumn = DeferredColumn()
    addition_document: np.ndarray
    addition_key: np.ndarray
    document_counts: np.ndarray
    document_types: tuple[str, ...]
    document_type: np.ndarray
    received_at: np.ndarray
    review_seconds: np.ndarray
    counts: KIEvalCounts
    signals: dict[str, np.ndarray] = field(default_factory=dict)
    value_match: ValueMatch = "exact"

    outcome_names = OUTCOME_NAMES
    task: ClassVar[str] = "kie"
    metric_name: ClassVar[str] = "kieval_aligned"
    metric_label: ClassVar[str] = "KIEval_Aligned^τ"
    task_description: ClassVar[str] = "key information extraction: fields read from documents"
    sweep_columns: ClassVar[tuple[str, ...]] = ("kieval_aligned", "residual_substitutions", "residual_deletions",
                                                "additions")
    fraction_columns: ClassVar[frozenset[str]] = frozenset({"kieval_aligned"})
    count_columns: ClassVar[frozenset[str]] = frozenset({"residual_substitutions", "residual_deletions", "additions"})
    unit_noun: ClassVar[str] = "document"
    has_review_units: ClassVar[bool] = True
    field_rate_basis: ClassVar[str] = "predictions and missed values"
    # the curated figures: internal counters (group pairing) would puzzle a reader
    summary_labels: ClassVar[tuple[tuple[str, str], ...]] = (
        ("documents", "documents"), ("predictions", "predictions (what a policy routes)"),
        ("entities_gt", "fields in the ground truth"), ("kieval_aligned", "KIEval_Aligned before review"),
        ("entity_f1", "entity F1"), ("precision", "precision"), ("recall", "recall"))
    options: ClassVar[tuple[str, ...]] = ("value_match",)
    evaluation_modules: ClassVar[tuple[str, ...]] = ("rpa_sim.evaluate.metrics.text", "rpa_sim.evaluate.grounding",
                                                     "rpa_sim.evaluate.metrics.assignment")
    has_smudge: ClassVar[bool] = False
    file_layout: ClassVar[FileLayout] = FileLayout(_FILE_COLUMNS, KIE_KINDS, ("value_match",),
                                                   KIEvalCounts.field_names(), ("predicted",))

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

    @classmethod
    def evaluate(cls, records: Iterable[KIERecord], *, value_match: ValueMatch = "exact",
                 grounding: GroundingMode = "auto") -> KIEOutcomes:
        """:func:`evaluate_kie`."""
        return evaluate_kie(records, value_match=value_match, grounding=grounding)

    def unit_ids(self) -> np.ndarray:
        """The documents' ids."""
        return self.document_ids

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


    def smudge_by_alpha(self, *, step: float) -> None:
        """None: entities have no SMuDGE scores."""
        return None

    def mean_smudge(self, *, alpha: float) -> None:
        """None: entities have no SMuDGE scores."""
        return None

    # -- tables of parts, and files -----------------------------------------------------------------

    @classmethod
    def concat(cls, tables: list[KIEOutcomes]) -> KIEOutcomes:
        """Tables joined in order: document indices re-based, keys merged, the corpus counts added."""
        keys, recoded = merged_names([table.keys for table in tables])
        offsets = np.cumsum([0, *(table.documents for table in tables)])[:-1]
        document_types, type_codes = merged_names([table.document_types for table in tables])
        return cls(**concatenated(tables, {
            "keys": keys,
            "key": np.concatenate([codes[table.key] for table, codes in zip(tables, recoded)]),
            "addition_key": np.concatenate([codes[table.addition_key] for table, codes in zip(tables, recoded)]),
            "document": np.concatenate([table.document + offset for table, offset in zip(tables, offsets)]
                                       ).astype(np.int32),
            "addition_document": np.concatenate([table.addition_document + offset
                                                 for table, offset in zip(tables, offsets)]).astype(np.int32),
            "counts": sum((table.counts for table in tables), KIEvalCounts()),
            "signals": merged_signals(tables),
            "document_types": document_types,
            "document_type": np.concatenate([codes[table.document_type]
                                             for table, codes in zip(tables, type_codes)]).astype(np.int32),
        }))

    def evaluation_settings(self) -> dict[str, str | float]:
        return {"value_match": self.value_match}

    @classmethod
    def check_settings(cls, settings: Mapping[str, str | float]) -> None:
        """``value_match`` is ``"exact"`` or ``"normalized"``."""
        if settings["value_match"] not in _VALUE_MATCHES:
            raise ValueError(f"settings.value_match must be 'exact' or 'normalized', got "
                             f"{shown(settings['value_match'], quote=QUOTE)}")

    def row_counts(self) -> dict[str, int]:
        """A row per document, then per predicted entity, then per missed entity."""
        return {"document": self.documents, "predicted": len(self), "missed": len(self.addition_document)}

    def corpus_counts(self) -> dict[str, int]:
        """The corpus KIEval counts."""
        return dict(zip(KIEvalCounts.field_names(), self.counts.as_tuple()))

    def to_arrow(self) -> dict[str, pa.Array]:
        """One ``document`` row per document (its KIEval counts), one ``predicted`` row per predicted entity, one
        ``missed`` row per missed ground-truth entity (a KIEval addition), in this order; a column is null in the
        rows that have no value of it. Document indices are local to a file: :meth:`concat` re-bases them."""
        documents, predicted, missed = self.documents, len(self), len(self.addition_document)
        document = np.concatenate([np.arange(documents, dtype=np.int32), self.document, self.addition_document])
        kind = np.repeat(np.arange(len(KIE_KINDS), dtype=np.int32), [documents, predicted, missed])
        outcome = np.concatenate([self.outcome.astype(np.int32),
                                  np.full(missed, KIE_OUTCOMES.index("addition"), dtype=np.int32)])
        key = np.concatenate([self.key, self.addition_key])
        arrays = {
            "kind": named(kind, KIE_KINDS),
            "document": whole_numbers(document, "int32"),
            "document_id": named(document, self.document_ids.tolist()),
            "key": spread("string", documents, named(key, self.keys)),
            "group": spread("int32", documents, whole_numbers(self.group, "int32"), missed),
            "confidence": spread("double", documents, numbers(self.confidence), missed),
            "grounding": spread("double", documents, numbers(self.grounding), missed),
            "outcome": spread("string", documents, named(outcome, KIE_OUTCOMES)),
            "similarity": spread("double", documents, numbers(self.similarity), missed),
            "value": spread("string", documents, strings(self.value), missed),
            "correction": spread("string", documents, strings(self.correction), missed),
        }
        for index, name in enumerate(KIEvalCounts.field_names()):
            if name in DOCUMENT_COUNTS:
                arrays[name] = spread("int64", whole_numbers(self.document_counts[:, index], "int64"),
                                      predicted + missed)
        arrays["document_type"] = spread("string", named(self.document_type, self.document_types), predicted + missed)
        for name in ("received_at", "review_seconds"):
            arrays[name] = spread("double", numbers(getattr(self, name)), predicted + missed)
        for name, column in self.signals.items():
            arrays[SIGNAL_PREFIX + name] = spread("double", documents, numbers(column), missed)
        return arrays

    @classmethod
    def from_arrow(cls, rows: FileRows) -> KIEOutcomes:
        """The table of a file's rows, refused when its kinds, documents, counts or outcomes contradict each other."""
        facts = rows.facts
        documents = facts.rows["document"]
        counts_per_kind = [facts.rows[kind] for kind in KIE_KINDS]
        if not np.array_equal(rows.codes("kind", KIE_KINDS), np.repeat(np.arange(len(KIE_KINDS)), counts_per_kind)):
            rows.refuse(f"column 'kind' is not {facts.rows['document']} document rows, then "
                        f"{facts.rows['predicted']} predicted rows, then {facts.rows['missed']} missed rows")
        counts = np.column_stack([rows.numbers(name, "document", dtype=np.int64) if name in DOCUMENT_COUNTS
                                  else np.ones(documents, dtype=np.int64) for name in KIEvalCounts.field_names()])
        totals = dict(zip(KIEvalCounts.field_names(), counts.sum(axis=0).tolist()))
        if totals != facts.counts:
            rows.refuse(f"the document rows' counts add up to {totals}, and its metadata says {facts.counts}")
        if not np.array_equal(rows.numbers("document", "document", dtype=np.int32), np.arange(documents)):
            rows.refuse("the document rows' column 'document' is not 0, 1, 2, ...")
        document = rows.numbers("document", "predicted", dtype=np.int32)
        addition_document = rows.numbers("document", "missed", dtype=np.int32)
        for name, values in (("predicted", document), ("missed", addition_document)):
            if len(values) and (values[0] < 0 or values[-1] >= documents or np.any(np.diff(values) < 0)):
                rows.refuse(f"the {name} rows' column 'document' is not ascending within 0..{documents - 1}")
        if not np.array_equal(np.bincount(addition_document, minlength=documents),
                              counts[:, KIEvalCounts.field_names().index("additions")]):
            rows.refuse("the missed rows do not match the document rows' additions")
        document_ids = rows.unique_ids("document_id", "document")
        # an entity row belongs to the document of its index: its document_id must say the same
        of_document = rows.id_codes("document_id", document_ids, "document", "predicted", "missed")
        mismatch = np.flatnonzero(of_document != np.concatenate([document, addition_document]))
        if len(mismatch):
            row = int(mismatch[0])
            index = int(np.concatenate([document, addition_document])[row])
            rows.refuse(f"row {documents + row} (counting from 0) has the document_id of document {of_document[row]}, "
                        f"and its column 'document' says {index}", record_id=str(document_ids[index]))
        key = rows.codes("key", facts.fields, "predicted", "missed")
        outcome = rows.codes("outcome", KIE_OUTCOMES, "predicted", "missed")
        predicted = len(document)
        addition = KIE_OUTCOMES.index("addition")
        if np.any(outcome[:predicted] == addition) or np.any(outcome[predicted:] != addition):
            rows.refuse("the outcome 'addition' belongs to missed rows, and only to them")
        document_types, document_type = rows.document_types("document")
        return cls(
            document_ids=document_ids,
            keys=facts.fields,
            document=document,
            group=rows.numbers("group", "predicted", dtype=np.int32),
            key=key[:predicted],
            confidence=rows.numbers("confidence", "predicted"),
            grounding=rows.numbers("grounding", "predicted"),
            outcome=outcome[:predicted].astype(np.int8),
            similarity=rows.numbers("similarity", "predicted"),
            value=rows.deferred_strings("value", "predicted"),
            correction=rows.deferred_strings("correction", "predicted"),
            addition_document=addition_document,
            addition_key=key[predicted:],
            document_counts=counts,
            document_types=document_types,
            document_type=document_type,
            received_at=rows.optional_numbers("received_at", "document"),
            review_seconds=rows.optional_numbers("review_seconds", "document"),
            counts=KIEvalCounts(**facts.counts),
            signals=rows.signals("predicted"),
            # checked by check_settings when the file's metadata was read
            value_match=cast(ValueMatch, facts.settings["value_match"]),
        )


class _Columns:
    """Growing columns, kept as numpy parts (and lists of text) while records stream in."""

    def __init__(self) -> None:
        self.documents = 0
        self.document_ids: list[str] = []
        self.keys = Vocabulary()
        self.parts: dict[str, list[np.ndarray]] = {name: [] for name in (
            "document", "group", "key", "outcome", "addition_document", "addition_key", "document_counts")}
        self.confidence: list[float] = []
        self.grounding: list[float] = []
        self.values: list[str] = []
        self.corrections: list[str] = []
        self.document_types = Vocabulary()
        self.document_type = array("i")
        self.received_at, self.review_seconds = array("d"), array("d")
        self.signals = SignalColumns()

    def add(self, records: list[KIERecord], value_match: ValueMatch, grounding: GroundingMode) -> None:
        """Evaluate a batch of records (:func:`~rpa_sim.evaluate.metrics.kieval_batch.evaluate_batch`) and append its
        rows."""
        # the evaluation is imported by the records' path alone: reading a table file never needs it
        from rpa_sim.evaluate.metrics.kieval_batch import evaluate_batch  # noqa: PLC0415

        for record in records:
            if record.ground_truth is None or record.prediction is None:
                raise ValueError(f"record {record.id!r} needs both ground_truth and prediction to be evaluated")
        batch = evaluate_batch([(record.ground_truth, record.prediction) for record in records],
                               value_match=value_match)
        # the table's key codes, given in order of first appearance: a document's predictions, then its additions
        keys_met = np.concatenate([batch.key, batch.addition_key])
        documents_met = np.concatenate([batch.document, batch.addition_document])
        order = np.lexsort((np.arange(len(keys_met)), documents_met))
        recoded = np.zeros(len(batch.keys), dtype=np.int32)
        for local in dict.fromkeys(keys_met[order].tolist()):
            recoded[local] = self.keys.code(batch.keys[local])
        parts = self.parts
        parts["document"].append(batch.document + self.documents)
        parts["group"].append(batch.group)
        parts["key"].append(recoded[batch.key])
        parts["outcome"].append(batch.labels)
        parts["addition_document"].append(batch.addition_document + self.documents)
        parts["addition_key"].append(recoded[batch.addition_key])
        parts["document_counts"].append(batch.counts)
        # a null confidence (allowed by a policy's missing_confidence) is unknown: NaN, as grounding
        confidences = batch.confidences
        self.confidence.extend(cast(list[float], confidences) if None not in confidences
                               else [math.nan if c is None else c for c in confidences])
        self.grounding.extend(_grounding(batch, records, grounding))
        self.values.extend(batch.values)
        self.corrections.extend(c if c is not None else "" for c in batch.corrections)
        rows = np.bincount(batch.document, minlength=len(records)).tolist()
        for record, count in zip(records, rows):
            self.document_ids.append(record.id)
            self.document_type.append(self.document_types.code(record.document_type or ""))
            self.received_at.append(epoch_seconds(record.received_at))
            self.review_seconds.append(math.nan if record.review_seconds is None else record.review_seconds)
            _add_signals(self.signals, record, count)
        self.documents += len(records)

    def joined(self, name: str, dtype: type) -> np.ndarray:
        parts = self.parts[name]
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _grounding(batch: BatchOutcome, records: list[KIERecord], mode: GroundingMode) -> list[float]:
    """The routing grounding of each predicted entity: as given (NaN where absent), or located in the record's OCR
    where ``mode`` asks for it (every value for ``"compute"``, the missing ones for ``"auto"``)."""
    given = batch.groundings
    grounding = [math.nan if g is None or mode == "compute" else g for g in given]
    if mode == "given" or all(record.document is None for record in records):
        return grounding
    from rpa_sim.evaluate.grounding import locatability_many  # noqa: PLC0415

    bounds = np.searchsorted(batch.document, np.arange(len(records) + 1)).tolist()
    for index, record in enumerate(records):
        if record.document is None:
            continue
        start, stop = bounds[index], bounds[index + 1]
        missing = [i for i in range(start, stop) if given[i] is None or mode == "compute"]
        if missing:
            located = locatability_many([batch.values[i] for i in missing], record.document).tolist()
            for i, score in zip(missing, located):
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
        How values are compared (see :func:`rpa_sim.evaluate.metrics.kieval.evaluate_document`); records are
        evaluated in batches (:func:`rpa_sim.evaluate.metrics.kieval_batch.evaluate_batch`).
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
    from rpa_sim.evaluate.metrics.kieval_batch import BATCH  # noqa: PLC0415

    if grounding not in ("auto", "given", "compute"):
        raise ValueError(f"grounding must be 'auto', 'given' or 'compute', got {grounding!r}")
    columns = _Columns()
    iterator = iter(records)
    while batch := list(islice(iterator, BATCH)):
        columns.add(batch, value_match, grounding)
    return _finish(columns, value_match)


def _add_signals(signals: SignalColumns, record: Any, rows: int) -> None:
    """The record's entities' named signals, in the order of its rows (:class:`BatchOutcome`'s: the non-grouped
    entities, then each group's, those with an empty value left out)."""
    prediction = record.prediction
    if all(entity.signals is None for entity in prediction.entities) and all(
            entity.signals is None for group in prediction.groups for entity in group.entities):
        signals.pad(rows)
        return
    entities = [*prediction.entities, *(entity for group in prediction.groups for entity in group.entities)]
    given = [entity.signals for entity in entities if entity.value.strip()]
    if len(given) != rows:
        raise ValueError(f"record {record.id!r}: {len(given)} entities with a value, and {rows} rows")
    signals.add(given)


def _finish(c: _Columns, value_match: ValueMatch) -> KIEOutcomes:
    counts = c.joined("document_counts", np.int64).reshape(-1, len(KIEvalCounts.field_names()))
    outcome = c.joined("outcome", np.int8)
    value = np.array(c.values, dtype=STRINGS)
    correction = np.array(c.corrections, dtype=STRINGS)
    similarity = np.where(outcome == 0, 1.0, 0.0)
    substituted = np.flatnonzero(outcome == 1)
    if len(substituted):
        from rpa_sim.evaluate.metrics.text import nls_pairs  # noqa: PLC0415

        similarity[substituted] = nls_pairs(value[substituted].tolist(), correction[substituted].tolist())
    return KIEOutcomes(
        document_ids=np.array(c.document_ids, dtype=STRINGS),
        keys=c.keys.names(),
        document=c.joined("document", np.int32),
        group=c.joined("group", np.int32),
        key=c.joined("key", np.int32),
        confidence=np.array(c.confidence, dtype=np.float64),
        grounding=np.array(c.grounding, dtype=np.float64),
        outcome=outcome,
        similarity=similarity,
        value=value,
        correction=correction,
        addition_document=c.joined("addition_document", np.int32),
        addition_key=c.joined("addition_key", np.int32),
        document_counts=counts,
        document_types=c.document_types.names(),
        document_type=packed(c.document_type, np.int32),
        received_at=packed(c.received_at),
        review_seconds=packed(c.review_seconds),
        counts=KIEvalCounts(*(int(total) for total in counts.sum(axis=0))),
        signals=c.signals.columns(),
        value_match=value_match,
    )

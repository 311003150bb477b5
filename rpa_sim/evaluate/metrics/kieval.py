"""KIEval: entity- and group-level KIE evaluation with correction counts (seed 002, METRICS.md §3).

A document is a list of groups; group 0 holds the non-grouped entities and is
always paired with the ground truth's group 0. The other groups are paired by
Hungarian matching on the number of identical ``(key, value)`` pairs, within a
category. Every predicted entity then gets exactly one outcome label
(``correct``, ``substitution`` or ``deletion``, with the value a reviewer
would write in its place), and every missed ground-truth entity is an
addition. Those labels are what the replay engine routes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING, Literal

import numpy as np

from rpa_sim.evaluate.metrics.kieval_batch import CORRECT, DELETION, SUBSTITUTION, evaluate_batch

if TYPE_CHECKING:
    # the records' models (pydantic) are only named here: reading an outcome table file never imports them
    from rpa_sim.records.models import Extraction, PredictedExtraction

__all__ = [
    "CORRECT",
    "SUBSTITUTION",
    "DELETION",
    "OUTCOME_NAMES",
    "KIEvalCounts",
    "DocumentOutcome",
    "Addition",
    "evaluate_document",
    "kieval",
    "group_category",
]

OUTCOME_NAMES = ("correct", "substitution", "deletion")

ValueMatch = Literal["exact", "normalized"]
#: Documents evaluated at once (:func:`~rpa_sim.evaluate.metrics.kieval_batch.evaluate_batch`) by :func:`kieval`
#: and by the KIE outcome table: enough that the per-batch work is small beside the per-entity work.
BATCH = 1024


def _ratio(numerator: int, denominator: int) -> float | None:
    # METRICS.md §3.5: an undefined ratio is reported as null, never as 0 or 1.
    return numerator / denominator if denominator else None


def _f1(tp: int, predicted: int, actual: int) -> float | None:
    return _ratio(2 * tp, predicted + actual)


@dataclass(frozen=True)
class KIEvalCounts:
    """Summable KIEval counts of one document or a corpus, with the derived figures.

    ``groups_*`` exclude group 0 (the non-grouped entities), as the paper's
    ``G'`` does. ``tp_grouping_blind`` is the conventional, grouping-blind
    entity TP (multiset intersection over the whole document) behind
    :attr:`grouping_blind_entity_f1`.

    Examples
    --------
    >>> c = KIEvalCounts(documents=1, entities_gt=12, entities_pred=11, tp=10, additions=2, deletions=1)
    >>> round(c.entity_f1, 4), round(c.kieval_aligned, 4)
    (0.8696, 0.7692)
    >>> KIEvalCounts().entity_f1 is None
    True
    """

    documents: int = 0
    entities_gt: int = 0
    entities_pred: int = 0
    tp: int = 0
    substitutions: int = 0
    additions: int = 0
    deletions: int = 0
    groups_gt: int = 0
    groups_pred: int = 0
    groups_paired: int = 0
    groups_tp: int = 0
    tp_grouping_blind: int = 0
    ignored_empty: int = 0

    def __add__(self, other: KIEvalCounts) -> KIEvalCounts:
        return KIEvalCounts(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The count fields, in order (the columns of a per-document counts array)."""
        return tuple(f.name for f in fields(cls))

    def as_tuple(self) -> tuple[int, ...]:
        """The counts in :meth:`field_names` order."""
        return _read_counts(self)

    @property
    def fp(self) -> int:
        """Predicted entities that are not true positives."""
        return self.entities_pred - self.tp

    @property
    def fn(self) -> int:
        """Ground-truth entities that are not true positives."""
        return self.entities_gt - self.tp

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.entities_pred)

    @property
    def recall(self) -> float | None:
        return _ratio(self.tp, self.entities_gt)

    @property
    def entity_f1(self) -> float | None:
        """KIEval Entity F1: F1 of the group-matched TP (eq. 3-5)."""
        return _f1(self.tp, self.entities_pred, self.entities_gt)

    @property
    def errors(self) -> int:
        """Correction count: substitutions + additions + deletions (eq. 11)."""
        return self.substitutions + self.additions + self.deletions

    @property
    def kieval_aligned(self) -> float | None:
        """``TP / (TP + Subs + Add + Del)`` (eq. 12)."""
        return _ratio(self.tp, self.tp + self.errors)

    @property
    def group_f1(self) -> float | None:
        """KIEval Group F1 over the paired groups except group 0 (eq. 6-7)."""
        return _f1(self.groups_tp, self.groups_pred, self.groups_gt)

    @property
    def group_aligned(self) -> float | None:
        """``TP_group / (TP_group + paired-but-different + unpaired groups)`` (Fig. 2's 4/7)."""
        unpaired = self.groups_gt + self.groups_pred - 2 * self.groups_paired
        return _ratio(self.groups_tp, self.groups_paired + unpaired)

    @property
    def grouping_blind_entity_f1(self) -> float | None:
        """The conventional entity F1, blind to grouping (Fig. 2's 95.65%)."""
        return _f1(self.tp_grouping_blind, self.entities_pred, self.entities_gt)

    def to_dict(self) -> dict[str, int | float | None]:
        """The ``score --json`` keys of docs/formats.md plus the extra counts (documented additions)."""
        counts = asdict(self)
        return {
            "documents": self.documents,
            "entities_gt": self.entities_gt,
            "entities_pred": self.entities_pred,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "substitutions": self.substitutions,
            "additions": self.additions,
            "deletions": self.deletions,
            "entity_f1": self.entity_f1,
            "group_f1": self.group_f1,
            "kieval_aligned": self.kieval_aligned,
            "group_aligned": self.group_aligned,
            "ignored_empty": self.ignored_empty,
            "precision": self.precision,
            "recall": self.recall,
            "grouping_blind_entity_f1": self.grouping_blind_entity_f1,
            **{k: counts[k] for k in ("groups_gt", "groups_pred", "groups_paired", "groups_tp")},
        }


# one C-level read of every count (dataclasses.astuple deep-copies and is slow in a hot loop)
_read_counts = attrgetter(*KIEvalCounts.field_names())


@dataclass(frozen=True)
class Addition:
    """A missed ground-truth entity: its key, value and ground-truth group (0 = non-grouped)."""

    key: str
    value: str
    group: int


@dataclass(frozen=True)
class DocumentOutcome:
    """KIEval of one document with a label per predicted entity.

    Predicted entities are numbered in record order: the non-grouped entities
    first, then each group's entities, whose ``keys``, ``values``, ``confidences``
    and ``groundings`` are listed in that order. ``labels[i]`` is :data:`CORRECT`,
    :data:`SUBSTITUTION` or :data:`DELETION`; ``corrections[i]`` is the value
    a reviewer writes (the ground truth's for a substitution, the value itself
    when correct, ``None`` for a deletion). Entities with an empty value are
    left out of the numbering (they are counted in ``counts.ignored_empty``).
    """

    counts: KIEvalCounts
    keys: list[str]
    values: list[str]
    confidences: list[float | None]
    groundings: list[float | None]
    groups: np.ndarray
    labels: np.ndarray
    corrections: list[str | None]
    additions: list[Addition]
    pairs: list[tuple[int, int]]


def group_category(name: str | None, keys: Iterable[str]) -> str | None:
    """A group's category: its explicit name, else the keys' shared prefix before the first ``.``.

    Returns ``None`` (pairs with any group) when the keys disagree or have no prefix.

    Examples
    --------
    >>> group_category(None, ["menu.nm", "menu.price"])
    'menu'
    >>> group_category("1", ["sub_total.tax_price"])
    '1'
    >>> group_category(None, ["menu.nm", "total.total_price"]) is None
    True
    """
    if name is not None:
        return name
    prefixes = {key.split(".", 1)[0] if "." in key else None for key in keys}
    if len(prefixes) == 1:
        return prefixes.pop()
    return None


def evaluate_document(ground_truth: Extraction, prediction: PredictedExtraction, *,
                      value_match: ValueMatch = "exact") -> DocumentOutcome:
    """KIEval of one document, with an outcome label per predicted entity.

    Parameters
    ----------
    ground_truth : Extraction
        The ground-truth entities and groups.
    prediction : PredictedExtraction
        The predicted entities and groups, with confidences.
    value_match : {"exact", "normalized"}, default="exact"
        ``"exact"`` compares values as strings, as the official code does;
        ``"normalized"`` folds whitespace and case first.

    Returns
    -------
    DocumentOutcome

    Examples
    --------
    KIEval Fig. 3, scenario 2: one wrong value is one substitution.

    >>> from rpa_sim.records.models import Extraction, PredictedExtraction
    >>> gt = Extraction.model_validate({"entities": [{"key": "menu.nm", "value": "Americano"},
    ...                                              {"key": "menu.nm", "value": "Latte"}]})
    >>> pr = PredictedExtraction.model_validate({"entities": [
    ...     {"key": "menu.nm", "value": "Americano", "confidence": 0.9},
    ...     {"key": "menu.nm", "value": "Juice", "confidence": 0.4}]})
    >>> out = evaluate_document(gt, pr)
    >>> out.counts.tp, out.counts.substitutions, out.counts.kieval_aligned
    (1, 1, 0.5)
    >>> [OUTCOME_NAMES[label] for label in out.labels], out.corrections
    (['correct', 'substitution'], ['Americano', 'Latte'])
    """
    batch = evaluate_batch([(ground_truth, prediction)], value_match=value_match)
    keys = batch.keys
    additions = [Addition(keys[key], value, group) for key, value, group in
                 zip(batch.addition_key.tolist(), batch.addition_values, batch.addition_group.tolist())]
    return DocumentOutcome(KIEvalCounts(*batch.counts[0].tolist()), [keys[key] for key in batch.key.tolist()],
                           batch.values, batch.confidences, batch.groundings, batch.group, batch.labels,
                           batch.corrections, additions, [(g, p) for _, g, p in batch.pairs.tolist()])


def kieval(documents: Iterable[tuple[Extraction, PredictedExtraction]], *,
           value_match: ValueMatch = "exact") -> KIEvalCounts:
    """Corpus KIEval: the counts of every document summed (micro), as the paper and official code do.

    Parameters
    ----------
    documents : iterable of (Extraction, PredictedExtraction)
        Ground truth and prediction of each document.
    value_match : {"exact", "normalized"}, default="exact"
        See :func:`evaluate_document`.

    Examples
    --------
    >>> from rpa_sim.records.models import Extraction, PredictedExtraction
    >>> gt = Extraction.model_validate({"entities": [{"key": "total", "value": "10.00"}]})
    >>> pr = PredictedExtraction.model_validate({"entities": [{"key": "total", "value": "10.0", "confidence": 1}]})
    >>> kieval([(gt, pr), (gt, pr)]).substitutions
    2
    """
    iterator = iter(documents)
    total = np.zeros(len(KIEvalCounts.field_names()), dtype=np.int64)
    while batch := list(islice(iterator, BATCH)):
        total += evaluate_batch(batch, value_match=value_match).counts.sum(axis=0)
    return KIEvalCounts(*total.tolist())

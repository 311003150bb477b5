"""What KIEval gives (seed 002, METRICS.md §3): a label for each predicted entity, and counts that sum.

Kept apart from the evaluation (:mod:`~rpa_sim.evaluate.metrics.kieval`,
:mod:`~rpa_sim.evaluate.metrics.kieval_batch`): reading an outcome table needs
the labels and the counts, never the matching.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from operator import attrgetter
from typing import Literal

__all__ = ["CORRECT", "SUBSTITUTION", "DELETION", "OUTCOME_NAMES", "ValueMatch", "KIEvalCounts"]

#: A predicted entity's outcome label, an index into :data:`OUTCOME_NAMES`.
CORRECT, SUBSTITUTION, DELETION = 0, 1, 2
OUTCOME_NAMES = ("correct", "substitution", "deletion")

ValueMatch = Literal["exact", "normalized"]


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
